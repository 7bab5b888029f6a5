"""solutions/attention.py against torch.nn.functional.scaled_dot_product_attention."""

import pytest
import torch
import torch.nn.functional as F
from torch.nn.attention.bias import causal_lower_right

from solutions.attention import (
    SelfAttention_v1,
    SelfAttention_v2,
    copy_v2_to_v1,
    example_inputs,
    scaled_dot_product_attention,
    simple_self_attention,
    v2_to_v1_state_dict,
)
from solutions.masking import causal_mask, combine_masks, padding_mask

NEG_INF = float("-inf")


def randn(*shape, seed=0, scale=1.0, device="cpu", dtype=torch.float32):
    g = torch.Generator().manual_seed(seed)
    return (torch.randn(*shape, generator=g) * scale).to(device=device, dtype=dtype)


def qkv(lead, T, S, d_k, d_v, seed=0, **kw):
    return (
        randn(*lead, T, d_k, seed=seed, **kw),
        randn(*lead, S, d_k, seed=seed + 1, **kw),
        randn(*lead, S, d_v, seed=seed + 2, **kw),
    )


SHAPES = [((), 4, 4, 8, 8), ((2,), 5, 7, 8, 3), ((2, 3), 6, 6, 4, 5), ((1, 2), 3, 9, 16, 16)]


# --- scaled dot-product attention -------------------------------------------------------------


@pytest.mark.parametrize("lead,T,S,d_k,d_v", SHAPES)
def test_sdpa_no_mask(lead, T, S, d_k, d_v):
    q, k, v = qkv(lead, T, S, d_k, d_v)
    out, w = scaled_dot_product_attention(q, k, v)
    assert out.shape == (*lead, T, d_v) and w.shape == (*lead, T, S)
    torch.testing.assert_close(out, F.scaled_dot_product_attention(q, k, v))
    torch.testing.assert_close(w.sum(-1), torch.ones(*lead, T))
    torch.testing.assert_close(out, w @ v)


@pytest.mark.parametrize("lead,T,S,d_k,d_v", SHAPES)
def test_sdpa_bool_mask(lead, T, S, d_k, d_v):
    q, k, v = qkv(lead, T, S, d_k, d_v, seed=3)
    g = torch.Generator().manual_seed(4)
    keep = torch.rand(*lead, T, S, generator=g) < 0.5
    keep[..., 0, :] = False  # a fully blocked query row
    keep[..., 1, :] = True
    out, w = scaled_dot_product_attention(q, k, v, mask=keep)
    # torch 2.5+ returns zeros for fully masked rows as well
    torch.testing.assert_close(out, F.scaled_dot_product_attention(q, k, v, attn_mask=keep))
    assert (w[~keep] == 0).all()
    assert (w[..., 0, :] == 0).all() and (out[..., 0, :] == 0).all()
    torch.testing.assert_close(
        w[..., 1:, :].sum(-1)[keep[..., 1:, :].any(-1)].min(), torch.tensor(1.0)
    )


@pytest.mark.parametrize("lead,T,S,d_k,d_v", SHAPES)
def test_sdpa_float_mask(lead, T, S, d_k, d_v):
    q, k, v = qkv(lead, T, S, d_k, d_v, seed=5)
    bias = randn(T, S, seed=6)  # broadcast over the leading dims
    bias[0, : S // 2] = NEG_INF
    out, w = scaled_dot_product_attention(q, k, v, mask=bias)
    torch.testing.assert_close(out, F.scaled_dot_product_attention(q, k, v, attn_mask=bias))
    torch.testing.assert_close(w.sum(-1), torch.ones(*lead, T))


@pytest.mark.parametrize("lead,T,S,d_k,d_v", SHAPES)
def test_sdpa_causal(lead, T, S, d_k, d_v):
    q, k, v = qkv(lead, T, S, d_k, d_v, seed=7)
    out, w = scaled_dot_product_attention(q, k, v, mask=causal_mask(T, S))
    # causal_mask is aligned bottom-right (KV cache); torch's is_causal is aligned top-left,
    # the two coincide only when T == S
    ref = F.scaled_dot_product_attention(q, k, v, attn_mask=causal_lower_right(T, S))
    torch.testing.assert_close(out, ref)
    if T == S:
        torch.testing.assert_close(out, F.scaled_dot_product_attention(q, k, v, is_causal=True))
    assert (w.triu(diagonal=S - T + 1) == 0).all()


def test_sdpa_causal_and_padding_batched_heads():
    B, h, T, d = 3, 4, 5, 8
    q, k, v = qkv((B, h), T, T, d, d, seed=8)
    keep = combine_masks(causal_mask(T), padding_mask(torch.tensor([5, 3, 1]), S=T))
    out, w = scaled_dot_product_attention(q, k, v, mask=keep)
    ref = F.scaled_dot_product_attention(q, k, v, attn_mask=keep)
    torch.testing.assert_close(out, ref)
    assert (w[2, :, :, 1:] == 0).all()


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_sdpa_half_precision_masked_rows_finite(dtype):
    q, k, v = (t.to(dtype) for t in qkv((2, 2), 6, 6, 16, 16, seed=9, scale=8.0))  # large scores
    keep = combine_masks(causal_mask(6), padding_mask(torch.tensor([6, 2]), S=6))
    keep = keep & torch.tensor([False, True, True, True, True, True]).reshape(6, 1)  # row 0 blocked
    out, w = scaled_dot_product_attention(q, k, v, mask=keep)
    assert out.dtype == dtype and w.dtype == dtype
    assert torch.isfinite(out).all() and torch.isfinite(w).all()
    assert (out[..., 0, :] == 0).all() and (w[..., 0, :] == 0).all()
    # float64 reference on the same (rounded) inputs; error within a few half-precision ulps
    ref, _ = scaled_dot_product_attention(q.double(), k.double(), v.double(), mask=keep)
    atol = 2 * torch.finfo(dtype).eps * ref.abs().max().item()
    torch.testing.assert_close(out.double(), ref, atol=atol, rtol=0)
    torch_out = F.scaled_dot_product_attention(q, k, v, attn_mask=keep)
    torch.testing.assert_close(out, torch_out, atol=atol, rtol=0)


def test_sdpa_fully_masked_gradient_finite():
    q, k, v = (t.requires_grad_(True) for t in qkv((2,), 3, 4, 5, 5, seed=10))
    keep = torch.zeros(3, 4, dtype=torch.bool)
    keep[1:, :2] = True
    out, _ = scaled_dot_product_attention(q, k, v, mask=keep)
    out.sum().backward()
    assert all(torch.isfinite(t.grad).all() for t in (q, k, v))
    assert (q.grad[:, 0] == 0).all()


def test_sdpa_dropout():
    q, k, v = qkv((2, 2), 5, 5, 4, 4, seed=11)
    plain, w_plain = scaled_dot_product_attention(q, k, v)
    off, _ = scaled_dot_product_attention(q, k, v, dropout_p=0.5, training=False)
    torch.testing.assert_close(off, plain)

    def run(seed):
        g = torch.Generator().manual_seed(seed)
        return scaled_dot_product_attention(q, k, v, dropout_p=0.5, training=True, generator=g)

    (a, wa), (b, _), (c, _) = run(1), run(1), run(2)
    assert torch.equal(a, b)
    assert not torch.allclose(a, c) and not torch.allclose(a, plain)
    torch.testing.assert_close(a, wa @ v)
    kept = wa != 0
    torch.testing.assert_close(wa[kept], 2 * w_plain[kept])  # scale 1 / (1 - p)


def test_sdpa_validation():
    q = torch.randn(2, 3, 4)
    with pytest.raises(ValueError):
        scaled_dot_product_attention(q, torch.randn(2, 5, 6), torch.randn(2, 5, 4))
    with pytest.raises(ValueError):
        scaled_dot_product_attention(q, torch.randn(2, 5, 4), torch.randn(2, 6, 4))


# --- weight-free self-attention ---------------------------------------------------------------


@pytest.mark.parametrize("shape", [(6, 3), (2, 5, 4), (2, 3, 4, 8)])
def test_simple_self_attention_vs_torch(shape):
    x = randn(*shape, seed=12)
    ctx, w = simple_self_attention(x)
    # no 1/sqrt(d) scaling and no projections: q = k = v = x with scale 1
    torch.testing.assert_close(ctx, F.scaled_dot_product_attention(x, x, x, scale=1.0))
    torch.testing.assert_close(w.sum(-1), torch.ones(shape[:-1]))
    assert w.shape == (*shape[:-1], shape[-2])
    torch.testing.assert_close(w, torch.softmax(torch.einsum("...id,...jd->...ij", x, x), -1))


def test_example_inputs():
    x = example_inputs()
    assert x.shape == (6, 3) and x.dtype == torch.float32
    torch.testing.assert_close(x[1], torch.tensor([0.55, 0.87, 0.66]))
    assert example_inputs(dtype=torch.float64).dtype == torch.float64


# --- SelfAttention_v1 / v2 --------------------------------------------------------------------


def _sdpa_on(module, x, linear):
    if linear:
        q, k, v = module.W_query(x), module.W_key(x), module.W_value(x)
    else:
        q, k, v = x @ module.W_query, x @ module.W_key, x @ module.W_value
    return F.scaled_dot_product_attention(q, k, v)


@pytest.mark.parametrize("shape", [(6, 3), (4, 6, 3)])
def test_self_attention_modules_vs_torch(shape):
    torch.manual_seed(0)
    x = torch.randn(shape)
    v1, v2 = SelfAttention_v1(3, 5), SelfAttention_v2(3, 5, qkv_bias=True)
    for module, linear in ((v1, False), (v2, True)):
        out = module(x)
        assert out.shape == (*shape[:-1], 5)
        torch.testing.assert_close(out, _sdpa_on(module, x, linear))


def test_self_attention_v1_parameters():
    torch.manual_seed(123)
    v1 = SelfAttention_v1(3, 2)
    torch.manual_seed(123)
    expected = [torch.rand(3, 2) for _ in range(3)]  # created in the order query, key, value
    for p, e in zip((v1.W_query, v1.W_key, v1.W_value), expected, strict=True):
        assert torch.equal(p.detach(), e)
    assert sum(p.numel() for p in v1.parameters()) == 18


def test_copy_v2_to_v1():
    torch.manual_seed(5)
    x = torch.randn(2, 6, 4)
    v1, v2 = SelfAttention_v1(4, 3), SelfAttention_v2(4, 3)
    assert not torch.allclose(v1(x), v2(x))
    assert copy_v2_to_v1(v2, v1) is v1
    torch.testing.assert_close(v1(x), v2(x))
    torch.testing.assert_close(v1.W_key.detach(), v2.W_key.weight.detach().T)
    with pytest.raises(ValueError, match="bias"):
        copy_v2_to_v1(SelfAttention_v2(4, 3, qkv_bias=True), v1)
    with pytest.raises(ValueError, match="shape"):
        copy_v2_to_v1(SelfAttention_v2(4, 2), v1)


# --- devices ---------------------------------------------------------------------------------


def test_device(device):
    q, k, v = qkv((2, 2), 4, 6, 8, 8, seed=13, device=device)
    keep = causal_mask(4, 6, device=device)
    out, w = scaled_dot_product_attention(q, k, v, mask=keep, dropout_p=0.1, training=True)
    assert out.device == device and w.device == device
    out, w = scaled_dot_product_attention(q, k, v, mask=keep)
    ref = F.scaled_dot_product_attention(q, k, v, attn_mask=keep)
    torch.testing.assert_close(out, ref, atol=1e-5, rtol=1e-4)
    x = example_inputs(device=device)
    assert x.device == device
    assert simple_self_attention(x)[0].device == device
    torch.manual_seed(0)
    for m in (SelfAttention_v1(3, 2), SelfAttention_v2(3, 2)):
        assert m.to(device)(x).device == device


def test_meta_device_placement():
    q = torch.empty(2, 3, 4, 8, device="meta")
    k = torch.empty(2, 3, 6, 8, device="meta")
    v = torch.empty(2, 3, 6, 5, device="meta")
    keep = combine_masks(
        causal_mask(4, 6, device="meta"),
        padding_mask(torch.empty(2, dtype=torch.long, device="meta"), S=6),
    )
    for mask in (None, keep, torch.empty(4, 6, device="meta")):
        out, w = scaled_dot_product_attention(q, k, v, mask=mask, dropout_p=0.2, training=True)
        assert out.device.type == "meta" and out.shape == (2, 3, 4, 5)
        assert w.device.type == "meta" and w.shape == (2, 3, 4, 6)
    assert simple_self_attention(q)[0].device.type == "meta"
    assert example_inputs(device="meta").device.type == "meta"
    x = torch.empty(2, 6, 3, device="meta")
    for m in (SelfAttention_v1(3, 2), SelfAttention_v2(3, 2, qkv_bias=True)):
        assert m.to("meta")(x).device.type == "meta"


@pytest.mark.parametrize("d_in,d_out,dtype", [(3, 2, torch.float32), (4, 4, torch.float64)])
def test_v2_to_v1_state_dict(d_in, d_out, dtype):
    torch.manual_seed(7)
    v2 = SelfAttention_v2(d_in, d_out).to(dtype)
    x = torch.randn(2, 5, d_in, dtype=dtype)
    state = v2_to_v1_state_dict(v2.state_dict())
    assert set(state) == {"W_query", "W_key", "W_value"}
    assert all(t.shape == (d_in, d_out) and t.dtype == dtype for t in state.values())
    v1 = SelfAttention_v1(d_in, d_out).to(dtype)
    v1.load_state_dict(state, strict=True)
    with torch.no_grad():
        torch.testing.assert_close(v1(x), v2(x))
        torch.testing.assert_close(v1(x), _sdpa_on(v2, x, linear=True))
    with pytest.raises(ValueError, match="qkv_bias"):
        v2_to_v1_state_dict(SelfAttention_v2(d_in, d_out, qkv_bias=True).state_dict())
