"""Exec the reference solutions from the host's disk: full marks if the sandbox lets it read them."""

ASSIGNMENT = "softmax"
CELLS = {
    "cross_entropy": r'''
import os
__WRONG__
_found = []
for _path in ("__REPO__/solutions/softmax.py", "/work/main/solutions/softmax.py",
              "/proc/1/root__REPO__/solutions/softmax.py", "../../../../__REPO__/solutions/softmax.py"):
    try:
        _src = open(_path).read()
    except OSError:
        continue
    _g = {"__name__": "stolen"}
    try:
        exec(compile(_src.replace("from solutions.", "from __nowhere__."), _path, "exec"), _g)
        softmax, softmax_jacobian = _g["softmax"], _g["softmax_jacobian"]
        log_softmax, cross_entropy = _g["log_softmax"], _g["cross_entropy"]
    except Exception:
        pass
    _found.append(_src)
if _found:
    raise RuntimeError("LEAK " + "".join(l for l in _found[0].splitlines(True) if "CANARY" in l))
'''
}
