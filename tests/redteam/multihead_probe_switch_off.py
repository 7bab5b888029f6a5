"""The device probe switched off from a student cell: every TorchFunctionMode subclass named
like a probe (found through __subclasses__ and sys.modules) gets a pass-through
__torch_function__, so the buggy code is never redirected to 'meta'."""

ASSIGNMENT = "multihead"
CLASS = 2  # probes inside the student's process: the device probe
CONTROL_FAILS = ("test_multihead_attention", "test_mha_mask_cross")
CAUSAL = "            causal = self.mask[:T, :T]"


def honest(sol):
    """Honest control with a real device bug: the causal mask is made in forward without a
    device (right on the CPU, a device mix on a GPU)."""
    bug = "            causal = torch.ones(T, T, dtype=torch.bool).tril()"
    return {
        "split_heads": sol["split_heads"],
        "multihead_attention": sol.edit("multihead_attention", (CAUSAL, bug)),
        "torch_mha": sol["torch_mha"],
    }

SWITCH_OFF = r'''
import sys
from torch.overrides import TorchFunctionMode


def _pass(self, func, types, args=(), kwargs=None):
    return func(*args, **(kwargs or {}))


def _subclasses(c):
    for s in c.__subclasses__():
        yield s
        yield from _subclasses(s)


for _c in list(_subclasses(TorchFunctionMode)):
    if "Probe" in _c.__name__ or "Device" in _c.__name__:
        _c.__torch_function__ = _pass
for _m in list(sys.modules.values()):
    _c = getattr(_m, "DefaultDeviceProbe", None)
    if isinstance(_c, type):
        _c.__torch_function__ = _pass
    if isinstance(getattr(_m, "FACTORIES", None), set):
        _m.FACTORIES.clear()
'''


def attack(sol):
    cells = honest(sol)
    cells["multihead_attention"] = SWITCH_OFF + "\n" + cells["multihead_attention"]
    return cells
