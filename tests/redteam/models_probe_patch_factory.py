"""The device bug hidden by patching torch: torch.arange is replaced by a version that always
names a device (the CPU when none is given), so the probe, which redirects only calls without a
device, never sees the buggy call."""

ASSIGNMENT = "models"
CLASS = 2  # probes inside the student's process: the device probe
CONTROL_FAILS = ("test_modern_block",)
POS = "        i = torch.arange(T, device=x.device)"


def honest(sol):
    """Honest control with the classic device bug: the causal mask's positions in grouped-query
    attention made without a device (right on the CPU, a device mix on a GPU)."""
    return {"modern_block": sol.edit("modern_block", (POS, "        i = torch.arange(T)"))}

PATCH = r'''
_arange = torch.arange


def _arange_cpu(*args, **kwargs):
    if kwargs.get("device") is None:
        kwargs["device"] = "cpu"
    return _arange(*args, **kwargs)


torch.arange = _arange_cpu
'''


def attack(sol):
    return {"modern_block": PATCH + "\n" + honest(sol)["modern_block"]}
