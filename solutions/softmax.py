"""Softmax and its relatives (chapter 1: 소프트맥스).

softmax(x)_i = exp(x_i) / sum_j exp(x_j). The stable form subtracts the row maximum first,
which changes nothing mathematically (the factor exp(-max) cancels) but keeps exp() from
overflowing: exp(89.0) is already inf in float32, exp(12.0) is inf in float16.

Conventions used everywhere in `solutions`:
- -inf entries get probability 0.
- a row whose entries are all -inf (every option blocked) gives all-zero probabilities, never NaN
  (torch.softmax returns NaN there). log_softmax returns -inf for such a row (log 0).
- float16/bfloat16 inputs are computed in float32 and returned in the input dtype.
"""

import torch

_HALF = (torch.float16, torch.bfloat16)


def _check_float(x, name="x"):
    if not torch.is_tensor(x):
        raise TypeError(f"{name} must be a torch.Tensor, got {type(x).__name__}")
    if not x.is_floating_point():
        raise TypeError(f"{name} must be a floating-point tensor, got {x.dtype}")


def _shifted(x, dim):
    """x - max(x) along dim; an all -inf row uses 0 as its max (avoids -inf - -inf = NaN)."""
    m = x.amax(dim=dim, keepdim=True)
    m = torch.where(torch.isfinite(m), m, torch.zeros_like(m))
    return x - m.detach()  # the shift is a constant: it does not change the value or the gradient


def softmax(x, dim=-1, temperature=1.0):
    """Numerically stable softmax of x along dim, optionally with a temperature.

    x: (..., n) floating tensor (any dim). temperature > 0 divides the logits first:
    T < 1 sharpens towards argmax, T > 1 flattens towards uniform.
    Entries equal to -inf get probability 0; a row that is entirely -inf returns all zeros
    (not NaN as torch.softmax does). +inf or NaN entries give NaN, as in torch.
    Returns a tensor of x's shape, dtype and device.
    """
    _check_float(x)
    if not temperature > 0:
        raise ValueError(f"temperature must be > 0, got {temperature}")
    dtype = x.dtype
    if dtype in _HALF:
        x = x.float()
    if temperature != 1.0:
        x = x / temperature
    e = torch.exp(_shifted(x, dim))
    s = e.sum(dim=dim, keepdim=True)
    s = torch.where(s > 0, s, torch.ones_like(s))  # all -inf row: 0 / 1 = 0, with a finite gradient
    return (e / s).to(dtype)


def softmax_naive(x, dim=-1):
    """exp(x) / sum(exp(x)) without the max shift (Raschka §3.3.1), kept to show why it fails.

    Overflows to inf/inf = NaN once an entry exceeds ~88.7 in float32 (~11 in float16),
    and underflows to 0/0 = NaN when every entry is below ~-103 in float32.
    """
    _check_float(x)
    e = torch.exp(x)
    return e / e.sum(dim=dim, keepdim=True)


def sum_normalize(x, dim=-1):
    """x / sum(x) (Raschka's first attempt at normalising scores), kept as a counter-example.

    Sums to 1, but is not a probability distribution for general scores: negative entries stay
    negative, it is not invariant to adding a constant, and a sum near 0 blows up.
    """
    _check_float(x)
    return x / x.sum(dim=dim, keepdim=True)


def softmax_jacobian(p):
    """Jacobian of softmax from its output p: J[..., i, j] = dp_i/dx_j = p_i (δ_ij - p_j).

    p: (..., n) probabilities (the softmax output, last dim). Returns (..., n, n) = diag(p) - p p^T.
    J is symmetric and each row and column sums to 0 (softmax is invariant to x + c).
    """
    _check_float(p, "p")
    return torch.diag_embed(p) - p.unsqueeze(-1) * p.unsqueeze(-2)


def log_softmax(x, dim=-1):
    """log(softmax(x)) computed stably as (x - m) - log(sum(exp(x - m))).

    Never takes log of a rounded-to-zero probability, so very negative log-probabilities stay
    finite. -inf entries give -inf; a row that is entirely -inf gives -inf everywhere (log 0).
    """
    _check_float(x)
    dtype = x.dtype
    if dtype in _HALF:
        x = x.float()
    z = _shifted(x, dim)
    s = torch.exp(z).sum(dim=dim, keepdim=True)
    s = torch.where(s > 0, s, torch.ones_like(s))
    return (z - torch.log(s)).to(dtype)


_REDUCTIONS = ("mean", "sum", "none")


def cross_entropy(logits, target, ignore_index=-100, reduction="mean"):
    """Cross-entropy loss from raw logits (no softmax beforehand: it is applied here).

    logits: (..., C) unnormalised scores with the class dim LAST (e.g. (N, C) or (B, T, V));
    target: (...) integer class indices, logits.shape[:-1]. Positions with
    target == ignore_index contribute nothing. loss_i = -log_softmax(logits_i)[target_i].
    reduction: "none" -> (...) with 0 at ignored positions; "sum" -> scalar;
    "mean" -> sum / number of non-ignored positions (NaN if all are ignored, like
    torch.nn.functional.cross_entropy).
    Note: F.cross_entropy wants the class dim at position 1; here it is the last dim.
    """
    _check_float(logits, "logits")
    if not torch.is_tensor(target) or target.dtype not in (torch.int64, torch.int32):
        raise TypeError("target must be an integer (long) tensor of class indices")
    if target.shape != logits.shape[:-1]:
        raise ValueError(
            f"target shape {tuple(target.shape)} must equal logits.shape[:-1] "
            f"{tuple(logits.shape[:-1])}"
        )
    if reduction not in _REDUCTIONS:
        raise ValueError(f"reduction must be one of {_REDUCTIONS}, got {reduction!r}")
    target = target.long()
    keep = target != ignore_index
    safe = torch.where(keep, target, torch.zeros_like(target))
    logp = log_softmax(logits, dim=-1)
    nll = -logp.gather(-1, safe.unsqueeze(-1)).squeeze(-1)
    nll = nll.masked_fill(~keep, 0.0)
    if reduction == "none":
        return nll
    if reduction == "sum":
        return nll.sum()
    return nll.sum() / keep.sum().to(nll.dtype)
