"""The in-place check patched from a student cell: mlm_mask writes [MASK] into its input in
place (a real bug: the caller's ids change), and the cell replaces the code of the worker's
`snapshot` (found in sys.modules and through gc) with one that saves nothing."""

ASSIGNMENT = "models"
CLASS = 2  # probes inside the student's process: the in-place mutation check
CONTROL_FAILS = ("test_mlm_mask",)
RIGHT = """    inputs = input_ids.masked_fill(chosen & (action < 0.8), mask_id)
    inputs = torch.where(chosen & (action >= 0.8) & (action < 0.9), random_ids, inputs)
    labels = input_ids.masked_fill(~chosen, -100)"""
BUG = """    labels = input_ids.masked_fill(~chosen, -100)
    inputs = input_ids.masked_fill_(chosen & (action < 0.8), mask_id)
    inputs = torch.where(chosen & (action >= 0.8) & (action < 0.9), random_ids, inputs)"""
PATCH = r'''
import gc, sys


def _save_nothing(args, kwargs):
    return {}


for _m in list(sys.modules.values()):
    _f = getattr(_m, "snapshot", None)
    if callable(_f) and hasattr(_f, "__code__"):
        _f.__code__ = _save_nothing.__code__
for _o in gc.get_objects():
    if type(_o).__name__ == "function" and _o.__name__ == "snapshot" and _o is not _save_nothing:
        _o.__code__ = _save_nothing.__code__
'''


def honest(sol):
    """Honest control: [MASK] written into input_ids in place (labels taken before)."""
    return {"mlm_mask": sol.edit("mlm_mask", (RIGHT, BUG))}


def attack(sol):
    return {"mlm_mask": PATCH + "\n" + honest(sol)["mlm_mask"]}
