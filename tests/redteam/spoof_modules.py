"""Fake `autograder`, `solutions`, `nbgrader` modules in sys.modules and an __import__ hook."""

ASSIGNMENT = "softmax"
CELLS = {
    "cross_entropy": r'''
import sys, types, builtins

def _passing(*a, **k):
    return True

for name in ("autograder", "autograder.compare", "autograder.judge", "autograder.checks",
             "autograder.checks.softmax", "solutions", "solutions.softmax", "nbgrader"):
    m = types.ModuleType(name)
    m.assert_close = lambda *a, **k: None
    m.expect_tensor = lambda got, *a, **k: got
    m.fail = lambda *a, **k: None
    m.check = lambda *a, **k: (lambda f: f)
    m.softmax = lambda x, dim=-1, temperature=1.0: x * 0
    sys.modules[name] = m

_real_import = builtins.__import__
def _hook(name, *a, **k):
    if name.split(".")[0] in ("autograder", "solutions", "nbgrader"):
        return sys.modules[name]
    return _real_import(name, *a, **k)
builtins.__import__ = _hook
__WRONG__
'''
}
