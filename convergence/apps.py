import os

from celery.signals import celeryd_after_setup, worker_process_init
from django.apps import AppConfig


class ConvergenceConfig(AppConfig):
    name = "convergence"
    verbose_name = "Convergence engine"

    def ready(self):
        # Imported here, not at the top: they load models, so the app registry must be ready.
        from convergence import engines, recovery

        # The engines' recovery thread runs the sweep, which imports the engines.
        engines.on_sweep_due(recovery.sweep)
        if os.environ.get("HEATWEB_BENCH_METRICS_DIR"):  # bench_engines counts per process
            from convergence.metrics import metrics_from_environment

            worker_process_init.connect(metrics_from_environment)
        # Every Celery pool process is an engine from its start.
        celeryd_after_setup.connect(engines.worker_node_remember)
        worker_process_init.connect(engines.engine_start)
