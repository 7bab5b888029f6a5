"""The in-place check blinded by patching torch.Tensor.clone: called from the worker's snapshot
it returns the tensor itself, so the "copy before" changes along with the input and nothing looks
changed. apply_repetition_penalty scatters into the caller's logits in place (a real bug)."""

ASSIGNMENT = "decoding"
CLASS = 2  # probes inside the student's process: the in-place mutation check
CONTROL_FAILS = ("test_repetition_penalty",)
RIGHT = "    return logits.scatter(-1, prev_ids, seen)"
BUG = "    return logits.scatter_(-1, prev_ids, seen)"
PATCH = r'''
import sys

_clone = torch.Tensor.clone


def _clone_unless_snapshot(self, *args, **kwargs):
    if sys._getframe(1).f_code.co_name == "snapshot":
        return self
    return _clone(self, *args, **kwargs)


torch.Tensor.clone = _clone_unless_snapshot
'''


def honest(sol):
    """Honest control: the penalty is scattered into the input in place (values right)."""
    return {"apply_repetition_penalty": sol.edit("apply_repetition_penalty", (RIGHT, BUG))}


def attack(sol):
    return {"apply_repetition_penalty": PATCH + "\n" + honest(sol)["apply_repetition_penalty"]}
