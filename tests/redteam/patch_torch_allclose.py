"""Monkeypatch torch comparison functions and Tensor.__eq__ to always agree."""

ASSIGNMENT = "softmax"
CELLS = {
    "cross_entropy": r'''
import torch, torch.testing
torch.allclose = lambda *a, **k: True
torch.equal = lambda *a, **k: True
torch.isclose = lambda a, b, *r, **k: torch.ones_like(a, dtype=torch.bool)
torch.testing.assert_close = lambda *a, **k: None
torch.Tensor.__eq__ = lambda self, other: torch.ones_like(self, dtype=torch.bool)
torch.Tensor.allclose = lambda *a, **k: True
__WRONG__
'''
}
