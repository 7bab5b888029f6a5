"""Busy loop that ignores SIGTERM/SIGALRM/SIGXCPU and swallows every exception (one function only,
so the red-team run costs a single wall-clock timeout)."""

ASSIGNMENT = "softmax"
CELLS = {
    "softmax": "__WRONG__",
    "softmax_jacobian": r'''
import signal
def softmax_jacobian(p):
    for sig in (signal.SIGTERM, signal.SIGALRM, signal.SIGXCPU, signal.SIGINT, signal.SIGHUP):
        try:
            signal.signal(sig, signal.SIG_IGN)
        except (OSError, ValueError):
            pass
    while True:
        try:
            while True:
                pass
        except BaseException:
            continue
''',
}
