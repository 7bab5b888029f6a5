"""solutions/masking.py: masks vs hand-built expectations, masked softmax both ways, dropout,
CausalAttention vs torch.nn.functional.scaled_dot_product_attention."""

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

from solutions.masking import (
    CausalAttention,
    attention_dropout,
    causal_mask,
    combine_masks,
    mask_fill_value,
    masked_softmax,
    masked_softmax_renorm,
    padding_mask,
)
from solutions.softmax import softmax

NEG_INF = float("-inf")


def randn(*shape, seed=0, scale=1.0, device="cpu"):
    g = torch.Generator().manual_seed(seed)
    return (torch.randn(*shape, generator=g) * scale).to(device)


# --- masks -----------------------------------------------------------------------------------


def test_causal_mask_hand_built():
    expected = torch.tensor(
        [[1, 0, 0, 0], [1, 1, 0, 0], [1, 1, 1, 0], [1, 1, 1, 1]], dtype=torch.bool
    )
    m = causal_mask(4)
    assert m.dtype == torch.bool
    assert torch.equal(m, expected)
    # KV cache: 2 new queries at positions 2, 3 of 4 keys
    assert torch.equal(causal_mask(2, 4), torch.tensor([[1, 1, 1, 0], [1, 1, 1, 1]]).bool())
    assert torch.equal(causal_mask(1, 5), torch.ones(1, 5, dtype=torch.bool))


@pytest.mark.parametrize("T,S", [(1, 1), (3, 3), (3, 7), (5, 6)])
def test_causal_mask_rule_and_cache_rows(T, S):
    m = causal_mask(T, S)
    assert m.shape == (T, S)
    for i in range(T):
        for j in range(S):
            assert bool(m[i, j]) == (j <= i + S - T)
    # the T cached-query rows are the last T rows of the full S x S mask
    assert torch.equal(m, causal_mask(S)[S - T :])


def test_causal_mask_rejects_s_smaller_than_t():
    with pytest.raises(ValueError):
        causal_mask(5, 3)


def test_padding_mask_hand_built():
    lengths = torch.tensor([3, 1, 4])
    m = padding_mask(lengths, S=5)
    expected = torch.tensor(
        [[1, 1, 1, 0, 0], [1, 0, 0, 0, 0], [1, 1, 1, 1, 0]], dtype=torch.bool
    ).reshape(3, 1, 1, 5)
    assert m.dtype == torch.bool and m.shape == (3, 1, 1, 5)
    assert torch.equal(m, expected)
    assert torch.equal(padding_mask(lengths), expected[..., :4])  # S defaults to max length
    with pytest.raises(ValueError):
        padding_mask(torch.tensor([[1, 2]]))


def test_combine_masks():
    causal = causal_mask(3)
    pad = padding_mask(torch.tensor([3, 2]), S=3)
    m = combine_masks(causal, None, pad)
    assert m.shape == (2, 1, 3, 3)
    assert torch.equal(m[0, 0], causal)
    expected_1 = torch.tensor([[1, 0, 0], [1, 1, 0], [1, 1, 0]], dtype=torch.bool)
    assert torch.equal(m[1, 0], expected_1)
    assert combine_masks(None, None) is None
    assert combine_masks(causal) is causal
    with pytest.raises(TypeError):
        combine_masks(causal, torch.zeros(3, 3))


def test_mask_fill_value():
    assert mask_fill_value(torch.float16) == -65504.0
    assert mask_fill_value(torch.float32) == -3.4028234663852886e38
    assert mask_fill_value(torch.bfloat16) == -3.3895313892515355e38
    # the usual literal -1e9 does not even fit into float16
    with pytest.raises(RuntimeError):
        torch.zeros(2, dtype=torch.float16).masked_fill(torch.tensor([True, False]), -1e9)


# --- masked softmax ----------------------------------------------------------------------------


def _random_keep(shape, seed, p_keep=0.6):
    g = torch.Generator().manual_seed(seed)
    return torch.rand(shape, generator=g) < p_keep


@pytest.mark.parametrize("shape", [(4, 6), (2, 3, 5, 5), (2, 1, 4, 7)])
def test_masked_softmax_vs_torch_and_renorm(shape):
    scores = randn(*shape, seed=1, scale=3.0)
    keep = _random_keep(shape, seed=2)
    keep[..., 0, :] = False  # one fully blocked row per matrix
    a = masked_softmax(scores, keep)
    b = masked_softmax_renorm(scores, keep)
    torch.testing.assert_close(a, b)
    assert torch.isfinite(a).all()
    assert (a[~keep] == 0).all()
    assert (a[..., 0, :] == 0).all()  # fully blocked rows -> zeros, not NaN
    rows = keep.any(-1)
    torch.testing.assert_close(a.sum(-1)[rows], torch.ones(int(rows.sum())))
    # oracle on rows with at least one key: torch.softmax with -inf fills
    ref = torch.softmax(scores.masked_fill(~keep, NEG_INF), dim=-1)
    torch.testing.assert_close(a[rows], ref[rows])


def test_masked_softmax_broadcast_mask_and_002_causal():
    scores = randn(2, 3, 4, 4, seed=3)
    keep = causal_mask(4)  # (T, S) broadcast over (B, h)
    a = masked_softmax(scores, keep)
    b = masked_softmax_renorm(scores, keep)
    ref = torch.softmax(scores.masked_fill(~keep, NEG_INF), dim=-1)
    torch.testing.assert_close(a, ref)
    torch.testing.assert_close(b, ref)


def test_masked_softmax_additive_mask():
    scores = randn(3, 5, seed=4)
    keep = _random_keep((3, 5), seed=5)
    keep[1] = False
    additive = torch.zeros(3, 5).masked_fill(~keep, NEG_INF)
    out = masked_softmax(scores, additive)
    torch.testing.assert_close(out, masked_softmax(scores, keep))
    assert (out[1] == 0).all()
    bias = randn(3, 5, seed=6)  # a real-valued bias (ALiBi-like)
    torch.testing.assert_close(masked_softmax(scores, bias), torch.softmax(scores + bias, -1))
    torch.testing.assert_close(masked_softmax(scores, None), torch.softmax(scores, -1))


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_masked_softmax_half_precision(dtype):
    scores = randn(2, 6, 6, seed=7, scale=200.0)
    keep = combine_masks(causal_mask(6), padding_mask(torch.tensor([6, 3]), S=6)[:, 0])
    keep[1, 0] = False
    ref = masked_softmax(scores, keep)
    for fn in (masked_softmax, masked_softmax_renorm):
        out = fn(scores.to(dtype), keep)
        assert out.dtype == dtype
        assert torch.isfinite(out).all()
        assert (out[1, 0] == 0).all()
    torch.testing.assert_close(
        masked_softmax(scores.to(dtype), keep).float(), ref, atol=0.02, rtol=0
    )


def test_renorm_underflows_when_a_blocked_score_dominates():
    """Documented limitation of 002's softmax-then-renormalise way (float32)."""
    scores = torch.tensor([[0.0, 1.0, 200.0]])
    keep = torch.tensor([[True, True, False]])
    expected = torch.softmax(torch.tensor([[0.0, 1.0]]), -1)
    torch.testing.assert_close(masked_softmax(scores, keep)[:, :2], expected)
    assert (masked_softmax_renorm(scores, keep) == 0).all()  # kept weights underflowed to 0


def test_masked_softmax_gradient_zero_on_blocked_scores():
    scores = randn(3, 4, seed=8).requires_grad_(True)
    keep = causal_mask(3, 4)
    keep[0] = False
    (masked_softmax(scores, keep) * randn(3, 4, seed=9)).sum().backward()
    assert torch.isfinite(scores.grad).all()
    assert (scores.grad[~keep] == 0).all()


# --- dropout ---------------------------------------------------------------------------------


@pytest.mark.parametrize("shape,p", [((6, 6), 0.5), ((2, 3, 4, 4), 0.1), ((5,), 0.9)])
def test_attention_dropout_matches_nn_dropout(shape, p):
    x = torch.rand(shape) + 0.1
    torch.manual_seed(123)
    ref = nn.Dropout(p)(x)
    torch.manual_seed(123)
    out = attention_dropout(x, p)
    assert torch.equal(out, ref)
    # an explicit CPU generator seeded alike draws the same Bernoulli mask on CPU
    out_g = attention_dropout(x, p, generator=torch.Generator().manual_seed(123))
    torch.testing.assert_close(out_g, ref)


def test_attention_dropout_scaling_and_identity():
    x = torch.full((200, 200), 0.3)
    g = torch.Generator().manual_seed(0)
    out = attention_dropout(x, 0.25, generator=g)
    kept = out != 0
    torch.testing.assert_close(out[kept], torch.full((int(kept.sum()),), 0.4))  # 0.3 / 0.75
    assert abs(kept.float().mean().item() - 0.75) < 0.01
    assert abs(out.mean().item() - 0.3) < 0.005  # inverted dropout keeps the mean
    assert attention_dropout(x, 0.5, training=False) is x
    assert attention_dropout(x, 0.0) is x
    assert (attention_dropout(x, 1.0) == 0).all()
    assert (attention_dropout(x, 1.0, generator=g) == 0).all()
    for bad in (-0.1, 1.5):
        with pytest.raises(ValueError):
            attention_dropout(x, bad)


# --- CausalAttention -------------------------------------------------------------------------


def _ref_causal(ca, x):
    q, k, v = ca.W_query(x), ca.W_key(x), ca.W_value(x)
    return F.scaled_dot_product_attention(q, k, v, is_causal=True)


@pytest.mark.parametrize("qkv_bias", [False, True])
@pytest.mark.parametrize("T", [1, 4, 7])
def test_causal_attention_vs_torch_sdpa(qkv_bias, T):
    torch.manual_seed(0)
    ca = CausalAttention(5, 3, context_length=7, dropout=0.3, qkv_bias=qkv_bias).eval()
    x = torch.randn(2, T, 5)
    out = ca(x)
    assert out.shape == (2, T, 3)
    torch.testing.assert_close(out, _ref_causal(ca, x))
    torch.testing.assert_close(ca(x[0]), out[0])  # unbatched input (T, d_in)


def test_causal_attention_is_causal():
    torch.manual_seed(1)
    ca = CausalAttention(4, 4, context_length=8, dropout=0.0)
    x = torch.randn(3, 8, 4)
    y = x.clone()
    y[:, 5:] = torch.randn(3, 3, 4) * 10  # change only tokens 5, 6, 7
    a, b = ca(x), ca(y)
    torch.testing.assert_close(a[:, :5], b[:, :5])
    assert not torch.allclose(a[:, 5:], b[:, 5:])


def test_causal_attention_dropout_train_vs_eval():
    torch.manual_seed(2)
    ca = CausalAttention(4, 4, context_length=6, dropout=0.5)
    x = torch.randn(2, 6, 4)
    ca.eval()
    e1, e2 = ca(x), ca(x)
    assert torch.equal(e1, e2)
    torch.testing.assert_close(e1, _ref_causal(ca, x))
    ca.train()
    t1, t2 = ca(x), ca(x)
    assert not torch.allclose(t1, t2)
    assert not torch.allclose(t1, e1)


def test_causal_attention_mask_buffer():
    ca = CausalAttention(3, 2, context_length=5, dropout=0.0)
    assert "mask" in dict(ca.named_buffers())
    assert "mask" not in dict(ca.named_parameters())
    assert torch.equal(ca.mask, torch.ones(5, 5).tril().bool())
    assert [n for n, _ in ca.named_parameters()] == [
        "W_query.weight",
        "W_key.weight",
        "W_value.weight",
    ]
    with pytest.raises(ValueError, match="context_length"):
        ca(torch.randn(1, 6, 3))
    ca.to("meta")
    assert ca.mask.device.type == "meta"


# --- devices ---------------------------------------------------------------------------------


def test_device(device):
    assert causal_mask(3, 5, device=device).device == device
    lengths = torch.tensor([2, 4], device=device)
    pad = padding_mask(lengths, S=4)
    assert pad.device == device
    scores = randn(2, 1, 4, 4, seed=10, device=device)
    keep = combine_masks(causal_mask(4, device=device), pad)
    a, b = masked_softmax(scores, keep), masked_softmax_renorm(scores, keep)
    assert a.device == device
    torch.testing.assert_close(a, b)
    torch.manual_seed(0)
    ca = CausalAttention(3, 2, 4, 0.2).to(device).eval()
    x = randn(2, 4, 3, seed=11, device=device)
    out = ca(x)
    assert out.device == device
    torch.testing.assert_close(out, _ref_causal(ca, x))
    assert attention_dropout(scores, 0.5).device == device


def test_meta_device_placement():
    assert causal_mask(4, 6, device="meta").device.type == "meta"
    lengths = torch.empty(3, dtype=torch.long, device="meta")
    pad = padding_mask(lengths, S=6)
    assert pad.device.type == "meta" and pad.shape == (3, 1, 1, 6)
    scores = torch.empty(3, 2, 4, 6, device="meta")
    keep = combine_masks(causal_mask(4, 6, device="meta"), pad)
    assert keep.device.type == "meta" and keep.shape == (3, 1, 4, 6)
    for out in (
        masked_softmax(scores, keep),
        masked_softmax_renorm(scores, keep),
        masked_softmax(scores, torch.empty(4, 6, device="meta")),
        attention_dropout(scores, 0.3),
        softmax(scores),
    ):
        assert out.device.type == "meta" and out.shape == scores.shape
    ca = CausalAttention(5, 3, 4, 0.1).to("meta")
    assert ca(torch.empty(2, 4, 5, device="meta")).device.type == "meta"
