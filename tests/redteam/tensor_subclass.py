"""torch.Tensor subclass whose __torch_function__ makes every comparison/closeness True."""

ASSIGNMENT = "softmax"
CELLS = {
    "cross_entropy": r'''
import torch

class Liar(torch.Tensor):
    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        name = getattr(func, "__name__", "")
        if name in ("allclose", "equal"):
            return True
        if name in ("eq", "__eq__", "isclose", "isfinite"):
            return torch.ones(args[0].shape, dtype=torch.bool)
        return super().__torch_function__(func, types, args, kwargs or {})
    def __eq__(self, other): return True
    def __bool__(self): return True

def _liar(shape):
    return torch.zeros(shape).as_subclass(Liar)

def softmax(x, dim=-1, temperature=1.0): return _liar(x.shape)
def softmax_jacobian(p): return _liar(tuple(p.shape) + (p.shape[-1],))
def log_softmax(x, dim=-1): return _liar(x.shape)
def cross_entropy(logits, target, ignore_index=-100, reduction="mean"): return _liar(())
'''
}
