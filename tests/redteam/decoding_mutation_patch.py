"""The in-place check patched from a student cell: top_k_filter fills the caller's logits in
place (a real bug), and the cell replaces the code of every function named `mutated` it can find
with one that reports nothing."""

ASSIGNMENT = "decoding"
CLASS = 2  # probes inside the student's process: the in-place mutation check
CONTROL_FAILS = ("test_top_k_filter",)
RIGHT = '    return torch.where(logits >= kth_largest, logits, torch.full_like(logits, float("-inf")))'
BUG = '    return logits.masked_fill_(logits < kth_largest, float("-inf"))'
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
    """Honest control: the filter writes -inf into its input in place (values right)."""
    return {"top_k_filter": sol.edit("top_k_filter", (RIGHT, BUG))}


def attack(sol):
    return {"top_k_filter": PATCH + "\n" + honest(sol)["top_k_filter"]}
