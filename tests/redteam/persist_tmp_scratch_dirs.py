"""Pre-create the scratch directories of the next children in the shared /tmp with mode 000, so
the next checks (possibly another student's) cannot enter their scratch dir."""

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
    for _p in (f"/tmp/c{_k}", f"/tmp/{_k}"):
        try:
            os.makedirs(_p)
            os.chmod(_p, 0)
        except OSError:
            pass
__WRONG__
'''
}
