"""Processes that keep re-forking (new pids all the time, parents exit) to outrun the reaper, and
that SIGKILL every other process of their uid (the next child) if they survive. Bounded: each
lineage stops after 20 s."""

ASSIGNMENT = "softmax"
NEXT_STUDENT = True
CELLS = {
    "cross_entropy": r'''
import os, signal, time

def _hunter():
    end = time.monotonic() + 20
    me = os.getuid()
    while time.monotonic() < end:
        try:
            if os.fork() > 0:
                os._exit(0)  # parent leaves, the child carries on under a new pid
        except OSError:
            pass
        for p in os.listdir("/proc"):
            if p.isdigit() and int(p) != os.getpid():
                try:
                    if os.stat(f"/proc/{p}").st_uid == me:
                        os.kill(int(p), signal.SIGKILL)
                except OSError:
                    pass
    os._exit(0)

try:
    if os.fork() == 0:
        os.setsid()
        _hunter()
except OSError:
    pass
__WRONG__
'''
}
