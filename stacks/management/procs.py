"""The machine's processes as /proc describes them, for the benchmarks' CPU columns."""
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


def proc_status_kb(field):
    """A field of this process's /proc status in kB (``VmHWM``: its peak memory)."""
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    return 0
