"""The device bug hidden by patching torch: torch.zeros always gets a device (the CPU when none
is given), so the probe, which redirects only calls without a device, never sees beam_search's
buggy `sums`."""

ASSIGNMENT = "decoding"
CLASS = 2  # probes inside the student's process: the device probe
CONTROL_FAILS = ("test_beam_search",)
SUMS = "    sums = torch.zeros(1, dtype=torch.float64, device=idx.device)"
BUG = "    sums = torch.zeros(1, dtype=torch.float64)"
PATCH = r'''
_zeros = torch.zeros


def _zeros_cpu(*args, **kwargs):
    if kwargs.get("device") is None:
        kwargs["device"] = "cpu"
    return _zeros(*args, **kwargs)


torch.zeros = _zeros_cpu
'''


def honest(sol):
    """Honest control with a real device bug: the beam scores made without a device."""
    return {"beam_search": sol.edit("beam_search", (SUMS, BUG))}


def attack(sol):
    return {"beam_search": PATCH + "\n" + honest(sol)["beam_search"]}
