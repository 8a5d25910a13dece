"""The machine's processes as /proc describes them, for the benchmarks' CPU and memory
columns."""
import os
from dataclasses import dataclass
from pathlib import Path

TICKS = os.sysconf("SC_CLK_TCK")


@dataclass(frozen=True)
class Proc:
    pid: int
    ppid: int
    pgrp: int
    cpu_ticks: int  # user + system


def processes():
    """Every live process (one that ends while it is read is left out)."""
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()  # after "(comm)"
        except (OSError, IndexError):
            continue
        yield Proc(pid=int(stat.parent.name), ppid=int(fields[1]), pgrp=int(fields[2]),
                   cpu_ticks=int(fields[11]) + int(fields[12]))


def status_kb(field):
    """A field of this process's ``/proc/self/status`` in kB (``VmHWM``: its peak RSS); 0
    when there is none."""
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    return 0


def reset_peak_memory():
    """Start VmHWM again from the current RSS (Linux >= 4.0); False if not allowed."""
    try:
        with open("/proc/self/clear_refs", "w") as refs:
            refs.write("5")
        return True
    except OSError:
        return False


def group_cpu_seconds(groups):
    """CPU seconds (user + system) of the processes in these process groups."""
    return sum(proc.cpu_ticks for proc in processes() if proc.pgrp in groups) / TICKS


def database_cpu_seconds(dbname):
    """CPU seconds of the live PostgreSQL backends of database ``dbname`` on this machine.

    A backend's process title names its database ("postgres: USER DB HOST ...").
    """
    name = f" {dbname} ".encode()
    ticks = 0
    for proc in processes():
        try:
            title = Path(f"/proc/{proc.pid}/cmdline").read_bytes().replace(b"\0", b" ")
        except OSError:
            continue
        if title.startswith(b"postgres: ") and name in title:
            ticks += proc.cpu_ticks
    return ticks / TICKS
