"""solutions/softmax.py vs torch softmax, log_softmax, cross_entropy and torch.func.jacrev."""

import math

import pytest
import torch
import torch.nn.functional as F

from solutions.softmax import (
    cross_entropy,
    log_softmax,
    softmax,
    softmax_jacobian,
    softmax_naive,
    sum_normalize,
)

NEG_INF = float("-inf")


def randn(*shape, seed=0, scale=1.0, dtype=torch.float32, device="cpu"):
    g = torch.Generator().manual_seed(seed)
    return (torch.randn(*shape, generator=g) * scale).to(device=device, dtype=dtype)


# --- softmax -------------------------------------------------------------------------------


@pytest.mark.parametrize("shape,dim", [((7,), 0), ((3, 5), -1), ((3, 5), 0), ((2, 3, 4, 6), 1)])
@pytest.mark.parametrize("temperature", [1.0, 0.25, 3.0])
def test_softmax_matches_torch(shape, dim, temperature):
    x = randn(*shape, scale=3.0)
    out = softmax(x, dim=dim, temperature=temperature)
    torch.testing.assert_close(out, torch.softmax(x / temperature, dim=dim))
    torch.testing.assert_close(out.sum(dim), torch.ones_like(out.sum(dim)))


def test_softmax_huge_inputs_finite_and_naive_overflows():
    x = torch.tensor([[1000.0, 1001.0, 1002.0], [-3000.0, -3001.0, -2999.0], [5e3, 0.0, -5e3]])
    out = softmax(x)
    assert torch.isfinite(out).all()
    torch.testing.assert_close(out, torch.softmax(x, dim=-1))
    # shift invariance: softmax(x + c) == softmax(x)
    torch.testing.assert_close(softmax(x[:1] - 1000.0), out[:1])
    # the naive form overflows (inf / inf) and underflows (0 / 0) to NaN on the same rows
    naive = softmax_naive(x)
    assert torch.isnan(naive[0]).all() and torch.isnan(naive[1]).all()
    # ... but agrees with softmax on small inputs
    y = randn(4, 6)
    torch.testing.assert_close(softmax_naive(y), softmax(y))


def test_softmax_neg_inf_entries_and_all_neg_inf_row():
    x = torch.tensor(
        [
            [0.5, NEG_INF, 2.0, NEG_INF],
            [NEG_INF, NEG_INF, NEG_INF, NEG_INF],
            [1000.0, NEG_INF, 999.0, -1000.0],
        ],
        requires_grad=True,
    )
    out = softmax(x)
    ref = torch.softmax(x.detach()[[0, 2]], dim=-1)
    torch.testing.assert_close(out[[0, 2]], ref)
    assert (out[0, [1, 3]] == 0).all() and (out[2, 1] == 0)
    assert torch.equal(out[1], torch.zeros(4))  # torch.softmax gives NaN here
    assert torch.isnan(torch.softmax(x.detach()[1], dim=-1)).all()
    (out * torch.arange(4.0)).sum().backward()
    assert torch.isfinite(x.grad).all()
    assert torch.equal(x.grad[1], torch.zeros(4))


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_softmax_half_precision(dtype):
    x = randn(4, 9, scale=20.0).to(dtype)
    x[0, 3] = NEG_INF
    x[1] = NEG_INF
    out = softmax(x, temperature=0.5)
    assert out.dtype == dtype
    assert torch.isfinite(out).all()
    ref = torch.softmax(x.float()[[0, 2, 3]] / 0.5, dim=-1).to(dtype)
    torch.testing.assert_close(out[[0, 2, 3]], ref)
    assert (out[1] == 0).all()


def test_temperature_limits_and_validation():
    x = torch.tensor([1.0, 3.0, 2.0, -1.0])
    cold = softmax(x, temperature=1e-3)
    torch.testing.assert_close(cold, F.one_hot(x.argmax(), 4).float())
    hot = softmax(x, temperature=1e4)
    torch.testing.assert_close(hot, torch.full((4,), 0.25), atol=1e-3, rtol=0)
    for bad in (0.0, -1.0, float("nan")):
        with pytest.raises(ValueError, match="temperature"):
            softmax(x, temperature=bad)
    with pytest.raises(TypeError):
        softmax(torch.tensor([1, 2, 3]))
    with pytest.raises(TypeError):
        softmax([1.0, 2.0])


def test_sum_normalize_is_not_a_distribution():
    x = torch.tensor([2.0, -1.0, 0.5])
    w = sum_normalize(x)
    torch.testing.assert_close(w.sum(), torch.tensor(1.0))
    assert (w < 0).any()  # a negative "probability"
    # not shift-invariant, unlike softmax
    assert not torch.allclose(sum_normalize(x + 5.0), w)
    torch.testing.assert_close(softmax(x + 5.0), softmax(x))
    torch.testing.assert_close(
        sum_normalize(torch.tensor([[1.0, 3.0]])), torch.tensor([[0.25, 0.75]])
    )


# --- Jacobian ------------------------------------------------------------------------------


@pytest.mark.parametrize("shape", [(5,), (3, 4), (2, 3, 6), (1, 1)])
def test_jacobian_matches_jacrev(shape):
    x = randn(*shape, seed=1, scale=2.0, dtype=torch.float64)
    J = softmax_jacobian(softmax(x))
    assert J.shape == (*shape, shape[-1])
    f = torch.func.jacrev(lambda z: torch.softmax(z, dim=-1))
    flat = x.reshape(-1, shape[-1])
    ref = torch.func.vmap(f)(flat).reshape(*shape, shape[-1])
    torch.testing.assert_close(J, ref)


def test_jacobian_properties():
    p = softmax(randn(4, 7, seed=2, dtype=torch.float64))
    J = softmax_jacobian(p)
    zeros = torch.zeros(4, 7, dtype=torch.float64)
    torch.testing.assert_close(J.sum(-1), zeros)  # rows sum to 0
    torch.testing.assert_close(J.sum(-2), zeros)  # columns too
    torch.testing.assert_close(J, J.transpose(-1, -2))  # symmetric
    eig = torch.linalg.eigvalsh(J)
    assert (eig > -1e-12).all()  # positive semi-definite (a covariance matrix)
    assert (eig.abs() < 1e-12).any(-1).all()  # ones is in the null space
    torch.testing.assert_close(torch.diagonal(J, dim1=-2, dim2=-1), p * (1 - p))


# --- log_softmax ----------------------------------------------------------------------------


@pytest.mark.parametrize("shape,dim", [((6,), -1), ((3, 8), -1), ((2, 5, 4), 1)])
def test_log_softmax_matches_torch(shape, dim):
    x = randn(*shape, seed=3, scale=50.0)
    torch.testing.assert_close(log_softmax(x, dim=dim), F.log_softmax(x, dim=dim))


def test_log_softmax_stays_finite_where_log_of_softmax_does_not():
    x = torch.tensor([0.0, -200.0, 1000.0])
    out = log_softmax(x)
    torch.testing.assert_close(out, torch.tensor([-1000.0, -1200.0, 0.0]))
    assert torch.isinf(torch.log(torch.softmax(x, -1))[:2]).all()


def test_log_softmax_neg_inf():
    x = torch.tensor([[0.0, NEG_INF, 1.0], [NEG_INF, NEG_INF, NEG_INF]])
    out = log_softmax(x)
    torch.testing.assert_close(out[0], F.log_softmax(x[0], -1))
    assert torch.equal(out[1], torch.full((3,), NEG_INF))
    torch.testing.assert_close(out.exp(), softmax(x))


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_log_softmax_half(dtype):
    x = randn(3, 10, seed=4, scale=30.0).to(dtype)
    out = log_softmax(x)
    assert out.dtype == dtype
    torch.testing.assert_close(out, F.log_softmax(x.float(), -1).to(dtype))


# --- cross_entropy ---------------------------------------------------------------------------


def _targets(shape, C, seed, ignore_index=None, frac=0.3):
    g = torch.Generator().manual_seed(seed)
    t = torch.randint(0, C, shape, generator=g)
    if ignore_index is not None:
        t[torch.rand(shape, generator=g) < frac] = ignore_index
    return t


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("ignore_index", [-100, 2, None])
@pytest.mark.parametrize("shape", [(8,), (3, 5)])
def test_cross_entropy_matches_torch(reduction, ignore_index, shape):
    C = 6
    logits = randn(*shape, C, seed=5, scale=4.0, dtype=torch.float64)
    target = _targets(shape, C, seed=6, ignore_index=ignore_index)
    kw = {} if ignore_index is None else {"ignore_index": ignore_index}
    a = logits.clone().requires_grad_(True)
    b = logits.clone().requires_grad_(True)
    ours = cross_entropy(a, target, reduction=reduction, **kw)
    # F.cross_entropy wants the class dim at 1: (N, C, d1, ...)
    ref = F.cross_entropy(b.movedim(-1, 1), target, reduction=reduction, **kw)
    torch.testing.assert_close(ours, ref)
    w = torch.linspace(0.5, 2.0, ours.numel(), dtype=torch.float64).reshape(ours.shape)
    (ours * w).sum().backward()
    (ref * w).sum().backward()
    torch.testing.assert_close(a.grad, b.grad)


def test_cross_entropy_ignored_positions():
    logits = torch.tensor([[2.0, NEG_INF, 0.0], [0.0, 0.0, 0.0]], requires_grad=True)
    target = torch.tensor([-100, 1])
    per = cross_entropy(logits, target, reduction="none")
    torch.testing.assert_close(per, torch.tensor([0.0, math.log(3.0)]))
    torch.testing.assert_close(cross_entropy(logits, target), torch.tensor(math.log(3.0)))
    cross_entropy(logits, target).backward()
    assert torch.equal(logits.grad[0], torch.zeros(3))  # ignored row gets no gradient
    torch.testing.assert_close(logits.grad[1], torch.tensor([1 / 3, -2 / 3, 1 / 3]))
    all_ignored = cross_entropy(logits, torch.tensor([-100, -100]))
    ref = F.cross_entropy(logits.detach(), torch.tensor([-100, -100]))
    assert torch.isnan(all_ignored) and torch.isnan(ref)  # 0 / 0, as in torch


def test_cross_entropy_large_logits_and_validation():
    logits = torch.tensor([[1000.0, 0.0, -1000.0]])
    torch.testing.assert_close(cross_entropy(logits, torch.tensor([1])), torch.tensor(1000.0))
    with pytest.raises(ValueError, match="reduction"):
        cross_entropy(logits, torch.tensor([1]), reduction="avg")
    with pytest.raises(ValueError, match="shape"):
        cross_entropy(logits, torch.tensor([1, 0]))
    with pytest.raises(TypeError):
        cross_entropy(logits, torch.tensor([1.0]))


# --- devices ---------------------------------------------------------------------------------


def test_device(device):
    x = randn(3, 5, seed=7, scale=100.0, device=device)
    x[1] = NEG_INF
    out = softmax(x, temperature=2.0)
    assert out.device == x.device
    assert (out[1] == 0).all()
    torch.testing.assert_close(out[[0, 2]], torch.softmax(x[[0, 2]] / 2.0, -1))
    J = softmax_jacobian(out)
    assert J.device == x.device
    t = torch.tensor([1, 2, -100], device=device)
    logits = randn(3, 5, seed=8, device=device)
    ce = cross_entropy(logits, t)
    assert ce.device == x.device
    torch.testing.assert_close(ce, F.cross_entropy(logits, t))


def test_meta_device_placement():
    """Every output stays on the input's device; a tensor made on the default device would fail."""
    x = torch.empty(2, 3, 5, device="meta")
    t = torch.empty(2, 3, dtype=torch.long, device="meta")
    outs = [
        softmax(x, temperature=0.7),
        softmax_naive(x),
        sum_normalize(x),
        softmax_jacobian(x),
        log_softmax(x, dim=1),
        cross_entropy(x, t),
        cross_entropy(x, t, reduction="none"),
    ]
    assert all(o.device.type == "meta" for o in outs)
    assert outs[3].shape == (2, 3, 5, 5)
    assert outs[6].shape == (2, 3)
