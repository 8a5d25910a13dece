"""``manage.py import_heat --heat-database URL [--project P ...] [--dry-run]``: take over
the stacks of a Heat 27 database (docs/migration.md); Heat's database is only read."""
import os
from collections import Counter

from django.core.management.base import BaseCommand, CommandError

from stacks.services.heat_import import DONE, IMPORT, IMPORTED, SKIP, SourceError, \
    heat_import, results_table


class Command(BaseCommand):
    help = "Import the stacks of a Heat 27 database (read-only), with no call to the cloud."

    def add_arguments(self, parser):
        parser.add_argument("--heat-database", required=True,
                            help="Heat's [database] connection URL (postgresql://... or "
                                 "mysql+pymysql://...)")
        parser.add_argument("--project", action="append", default=[],
                            help="only this project's stacks (id or name; repeatable)")
        parser.add_argument("--dry-run", action="store_true",
                            help="print what would be imported and skipped, import nothing")
        parser.add_argument("--auth-encryption-key",
                            default=os.environ.get("HEAT_AUTH_ENCRYPTION_KEY"),
                            help="Heat's auth_encryption_key, for encrypted hidden parameters "
                                 "and resource data (default $HEAT_AUTH_ENCRYPTION_KEY)")

    def handle(self, *args, **options):
        try:
            results = heat_import(options["heat_database"], projects=options["project"],
                                  dry_run=options["dry_run"],
                                  encryption_key=options["auth_encryption_key"])
        except SourceError as error:
            raise CommandError(f"import_heat: {error}") from None
        if results:
            for line in results_table(results):
                self.stdout.write(line)
        counts = Counter(outcome for _, outcome in results)
        self.stdout.write(", ".join(f"{outcome}: {counts[outcome]}" for outcome in
                                    (IMPORTED, IMPORT, DONE, SKIP) if counts[outcome])
                          or "no stack in Heat's database to import")
        imported = counts[IMPORTED]
        if imported:
            self.stdout.write("Imported stacks wait for their owner's consent before heatweb "
                              "acts on the cloud for them: manage.py stack_reauthorise STACK "
                              "or POST .../actions {\"reauthorise\": null}.")
