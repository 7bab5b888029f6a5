"""Monkeypatch numpy.testing and numpy comparisons, returning numpy arrays of zeros."""

ASSIGNMENT = "softmax"
CELLS = {
    "cross_entropy": r'''
import numpy, numpy.testing
numpy.testing.assert_allclose = lambda *a, **k: None
numpy.testing.assert_array_equal = lambda *a, **k: None
numpy.testing.assert_almost_equal = lambda *a, **k: None
numpy.allclose = lambda *a, **k: True

def softmax(x, dim=-1, temperature=1.0):
    return numpy.zeros(tuple(x.shape), dtype=numpy.float32)

def softmax_jacobian(p):
    return numpy.zeros(tuple(p.shape) + (p.shape[-1],))

def log_softmax(x, dim=-1):
    return numpy.zeros(tuple(x.shape), dtype=numpy.float32)

def cross_entropy(logits, target, ignore_index=-100, reduction="mean"):
    return numpy.float32(0.0)
'''
}
