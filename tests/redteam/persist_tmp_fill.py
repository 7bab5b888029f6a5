"""Fill the sandbox's shared /tmp and /dev/shm (space and inodes) and leave it full."""

ASSIGNMENT = "softmax"
NEXT_STUDENT = True
CELLS = {
    "cross_entropy": r'''
import os
for _root in ("/tmp", "/dev/shm"):
    try:
        _d = os.path.join(_root, "fill")
        os.makedirs(_d, exist_ok=True)
        with open(os.path.join(_d, "big"), "wb") as _f:
            for _ in range(80):
                _f.write(b"\0" * (1 << 20))
    except OSError:
        pass
    for _i in range(20000):
        try:
            open(os.path.join(_root, "fill", f"f{_i}"), "w").close()
        except OSError:
            break
__WRONG__
'''
}
