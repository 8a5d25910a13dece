"""heatweb.lifeline with real processes: a child that asked to die with its parent ends when
the parent ends, whether its parent's main thread forked it (PR_SET_PDEATHSIG) or another
thread did (the kernel would signal it when that thread ends: it watches instead)."""
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PARENT = """
import os, sys, threading, time
sys.path.insert(0, %r)
from heatweb.lifeline import die_with_parent

def fork():
    parent = os.getpid()
    pid = os.fork()
    if pid == 0:
        die_with_parent(parent)
        time.sleep(120)
        os._exit(0)
    print(pid, flush=True)

if sys.argv[1] == "thread":
    forker = threading.Thread(target=fork)
    forker.start()
    forker.join()
else:
    fork()
print("forked", flush=True)
sys.stdin.readline()
os._exit(0)
""" % str(ROOT)


def alive(pid):
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/proc and prctl are Linux's")
@pytest.mark.parametrize("forked_by", ["main", "thread"])
def test_the_child_ends_with_its_parent_and_not_before(forked_by):
    parent = subprocess.Popen([sys.executable, "-c", PARENT, forked_by], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True)
    try:
        child = int(parent.stdout.readline())
        assert parent.stdout.readline() == "forked\n"
        time.sleep(0.5)  # the forking thread has ended: its end must not take the child
        assert alive(child), "the child ended before its parent"
        parent.stdin.write("\n")
        parent.stdin.flush()
        parent.wait(timeout=30)
        deadline = time.monotonic() + 30
        while alive(child) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not alive(child), "the child outlived its parent"
    finally:
        parent.kill()
        parent.wait()
