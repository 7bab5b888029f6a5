"""Read the instructor's source notebook and exec its solution cells."""

ASSIGNMENT = "softmax"
CELLS = {
    "cross_entropy": r'''
import json
__WRONG__
for _path in ("__COURSE__/source/softmax/softmax.ipynb", "/work/main/exercises/source/softmax/softmax.ipynb"):
    try:
        _nb = json.load(open(_path))
    except OSError:
        continue
    _g = {"torch": torch}
    for _c in _nb["cells"]:
        if _c.get("metadata", {}).get("nbgrader", {}).get("solution"):
            exec("".join(_c["source"]), _g)
    softmax, softmax_jacobian = _g["softmax"], _g["softmax_jacobian"]
    log_softmax, cross_entropy = _g["log_softmax"], _g["cross_entropy"]
    raise RuntimeError("LEAK " + json.dumps(_nb)[:300])
'''
}
