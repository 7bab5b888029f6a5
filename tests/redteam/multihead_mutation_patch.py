"""The in-place check patched from a student cell: merge_heads transposes its input in place
(a real bug: the caller's tensor changes), and the cell replaces the code of every function named
`mutated` it can find (sys.modules, gc) with one that reports nothing."""

ASSIGNMENT = "multihead"
CLASS = 2  # probes inside the student's process: the in-place mutation check
CONTROL_FAILS = ("test_split_heads",)
MERGE = "    return x.transpose(1, 2).contiguous().view(B, T, h * d_head)"
BUG = "    x.transpose_(1, 2)\n    return x.reshape(B, T, h * d_head)"
PATCH = r'''
import gc, sys


def _nothing(snap):
    return []


for _m in list(sys.modules.values()):
    _f = getattr(_m, "mutated", None)
    if callable(_f) and hasattr(_f, "__code__"):
        _f.__code__ = _nothing.__code__
for _o in gc.get_objects():
    if type(_o).__name__ == "function" and _o.__name__ == "mutated" and _o is not _nothing:
        _o.__code__ = _nothing.__code__
'''


def honest(sol):
    """Honest control: merge_heads changes its input in place (values right)."""
    return {"split_heads": sol.edit("split_heads", (MERGE, BUG))}


def attack(sol):
    return {"split_heads": PATCH + "\n" + sol.edit("split_heads", (MERGE, BUG))}
