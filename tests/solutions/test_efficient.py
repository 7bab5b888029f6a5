"""Tests for solutions/efficient.py against independent oracles.

Oracles: torch.nn.functional.scaled_dot_product_attention (incl. enable_gqa), masks written out by
hand, boolean matrix powers for receptive fields, the O(n^2) formula of linear attention, and
memory figures computed by hand (and from the bytes of real cache tensors).
"""

import math

import pytest
import torch
import torch.nn.functional as F

from solutions.efficient import (
    GroupedQueryAttention,
    KVCache,
    cached_attention_step,
    grouped_query_attention,
    kv_cache_bytes,
    kv_cached_attention,
    linear_attention,
    sliding_window_mask,
    tiled_attention,
)
from solutions.positional import apply_rope

# ---------------------------------------------------------------------------------------------
# helpers for the oracles (written independently of the code under test)
# ---------------------------------------------------------------------------------------------


def heads(x, n):
    """(B, T, n * d) -> (B, n, T, d) by plain reshape/permute."""
    B, T, D = x.shape
    return x.reshape(B, T, n, D // n).permute(0, 2, 1, 3)


def unheads(x):
    B, n, T, d = x.shape
    return x.permute(0, 2, 1, 3).reshape(B, T, n * d)


def torch_gqa(m, x, causal=True, rope=False):
    """GQA through F.scaled_dot_product_attention(enable_gqa=True) on the module's projections."""
    q = heads(F.linear(x, m.W_query.weight, m.W_query.bias), m.num_heads)
    k = heads(F.linear(x, m.W_key.weight, m.W_key.bias), m.num_kv_heads)
    v = heads(F.linear(x, m.W_value.weight, m.W_value.bias), m.num_kv_heads)
    if rope:
        q, k = apply_rope(q), apply_rope(k)
    out = F.scaled_dot_product_attention(q, k, v, is_causal=causal, enable_gqa=True)
    return F.linear(unheads(out), m.out_proj.weight, m.out_proj.bias)


def make_gqa(d_model, h, h_kv, seed=0, **kw):
    torch.manual_seed(seed)
    return GroupedQueryAttention(d_model, h, h_kv, **kw).eval()


# ---------------------------------------------------------------------------------------------
# grouped-query attention
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("causal", [True, False])
def test_gqa_with_all_kv_heads_is_mha(causal):
    m = make_gqa(24, 4, 4, bias=True, causal=causal)
    x = torch.randn(2, 7, 24)
    q = heads(m.W_query(x), 4)
    k = heads(m.W_key(x), 4)
    v = heads(m.W_value(x), 4)
    ref = m.out_proj(unheads(F.scaled_dot_product_attention(q, k, v, is_causal=causal)))
    torch.testing.assert_close(m(x), ref, atol=1e-5, rtol=1e-5)
    assert m.W_key.weight.shape == (24, 24)


def test_gqa_with_one_kv_head_is_mqa():
    m = make_gqa(24, 4, 1)
    x = torch.randn(2, 6, 24)
    assert m.W_key.weight.shape == (6, 24) and m.W_value.weight.shape == (6, 24)
    q = heads(m.W_query(x), 4)  # (B, 4, T, 6)
    k = m.W_key(x).unsqueeze(1).expand(-1, 4, -1, -1)  # one shared head seen by all 4 queries
    v = m.W_value(x).unsqueeze(1).expand(-1, 4, -1, -1)
    ref = m.out_proj(unheads(F.scaled_dot_product_attention(q, k, v, is_causal=True)))
    torch.testing.assert_close(m(x), ref, atol=1e-5, rtol=1e-5)


@pytest.mark.parametrize("h,h_kv", [(6, 3), (8, 2), (6, 2)])
@pytest.mark.parametrize("causal", [True, False])
def test_gqa_groups_match_torch_enable_gqa(h, h_kv, causal):
    m = make_gqa(48, h, h_kv, causal=causal)
    x = torch.randn(3, 9, 48)
    torch.testing.assert_close(m(x), torch_gqa(m, x, causal), atol=1e-5, rtol=1e-5)


def test_gqa_group_order_is_contiguous():
    """Query heads 0..r-1 use kv head 0 (repeat_interleave), not heads 0, h_kv, 2 h_kv, ..."""
    m = make_gqa(16, 4, 2, causal=False)
    x = torch.randn(1, 5, 16)
    q = heads(m.W_query(x), 4)
    k, v = heads(m.W_key(x), 2), heads(m.W_value(x), 2)
    kk = torch.stack([k[:, 0], k[:, 0], k[:, 1], k[:, 1]], dim=1)
    vv = torch.stack([v[:, 0], v[:, 0], v[:, 1], v[:, 1]], dim=1)
    ref = m.out_proj(unheads(F.scaled_dot_product_attention(q, kk, vv)))
    torch.testing.assert_close(m(x), ref, atol=1e-5, rtol=1e-5)
    wrong = torch.cat([k, k], dim=1), torch.cat([v, v], dim=1)  # "repeat" order: 0, 1, 0, 1
    bad = m.out_proj(unheads(F.scaled_dot_product_attention(q, *wrong)))
    assert not torch.allclose(m(x), bad, atol=1e-4)


def test_gqa_rope_matches_rotated_oracle():
    m = make_gqa(32, 4, 2, rope=True)
    x = torch.randn(2, 8, 32)
    torch.testing.assert_close(m(x), torch_gqa(m, x, True, rope=True), atol=1e-5, rtol=1e-5)


def test_gqa_rejects_bad_head_counts():
    with pytest.raises(ValueError):
        GroupedQueryAttention(24, 4, 3)
    with pytest.raises(ValueError):
        GroupedQueryAttention(25, 4, 2)


def test_gqa_extra_mask_anded_with_causal():
    m = make_gqa(16, 4, 2)
    x = torch.randn(2, 5, 16)
    keep = torch.tensor([[1, 1, 1, 0, 0], [1, 1, 1, 1, 1]], dtype=torch.bool)[:, None, None, :]
    q = heads(m.W_query(x), 4)
    k = heads(m.W_key(x), 2).repeat_interleave(2, dim=1)
    v = heads(m.W_value(x), 2).repeat_interleave(2, dim=1)
    both = keep & torch.ones(5, 5, dtype=torch.bool).tril()
    ref = m.out_proj(unheads(F.scaled_dot_product_attention(q, k, v, attn_mask=both)))
    torch.testing.assert_close(m(x, mask=keep), ref, atol=1e-5, rtol=1e-5)


@pytest.mark.parametrize("rope", [False, True])
@pytest.mark.parametrize("h_kv", [1, 2, 4])
def test_cached_decoding_equals_full_causal(rope, h_kv):
    """Prefill 3 tokens, then one token at a time: every position equals the full pass."""
    m = make_gqa(32, 4, h_kv, rope=rope)
    x = torch.randn(2, 9, 32)
    full = m(x)
    cache = KVCache()
    outs = [m(x[:, :3], cache=cache)]
    for t in range(3, 9):
        outs.append(m(x[:, t : t + 1], cache=cache))
    torch.testing.assert_close(torch.cat(outs, dim=1), full, atol=1e-5, rtol=1e-5)
    assert cache.length == 9
    assert cache.k.shape == (2, h_kv, 9, 8) and cache.v.shape == (2, h_kv, 9, 8)


def test_rope_positions_continue_behind_cache():
    """With RoPE, a token fed behind a cache must be rotated at its absolute position: feeding it
    without the cache (position 0) gives a different key than the cached run stored."""
    m = make_gqa(16, 2, 2, rope=True)
    x = torch.randn(1, 4, 16)
    cache = KVCache()
    m(x, cache=cache)
    k_pos0 = heads(m.W_key(x[:, 3:4]), 2)
    k_pos3 = apply_rope(k_pos0, torch.tensor([3]))
    torch.testing.assert_close(cache.k[:, :, 3:4], k_pos3, atol=1e-6, rtol=1e-5)
    assert not torch.allclose(cache.k[:, :, 3:4], k_pos0, atol=1e-3)


def test_kvcache_protocol():
    c = KVCache()
    assert c.length == 0
    k1, v1 = torch.randn(2, 3, 4, 5), torch.randn(2, 3, 4, 5)
    k_all, v_all = c.update(k1, v1)
    assert c.length == 4 and torch.equal(k_all, k1) and torch.equal(v_all, v1)
    k2, v2 = torch.randn(2, 3, 1, 5), torch.randn(2, 3, 1, 5)
    k_all, v_all = c.update(k2, v2)
    assert c.length == 5
    assert torch.equal(k_all, torch.cat([k1, k2], dim=2))
    assert torch.equal(v_all, torch.cat([v1, v2], dim=2))
    c.reset()
    assert c.length == 0 and c.k is None


@pytest.mark.parametrize("h,h_kv", [(4, 4), (4, 2), (4, 1)])
def test_cached_attention_step_is_last_row_of_causal_attention(h, h_kv):
    torch.manual_seed(1)
    T = 7
    q = torch.randn(2, h, T, 8)
    k, v = torch.randn(2, h_kv, T, 8), torch.randn(2, h_kv, T, 6)
    full = F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True)
    cache = KVCache()
    cache.update(k[:, :, :-1], v[:, :, :-1])
    out = cached_attention_step(q[:, :, -1:], k[:, :, -1:], v[:, :, -1:], cache)
    assert out.shape == (2, h, 1, 6)
    torch.testing.assert_close(out, full[:, :, -1:], atol=1e-6, rtol=1e-5)
    assert cache.length == T


def test_cached_attention_step_all_rows_one_by_one():
    torch.manual_seed(2)
    q, k, v = torch.randn(3, 2, 6, 4), torch.randn(3, 2, 6, 4), torch.randn(3, 2, 6, 4)
    full = F.scaled_dot_product_attention(q, k, v, is_causal=True)
    cache = KVCache()
    rows = [cached_attention_step(q[:, :, t : t + 1], k[:, :, t : t + 1], v[:, :, t : t + 1], cache)
            for t in range(6)]  # fmt: skip
    torch.testing.assert_close(torch.cat(rows, dim=2), full, atol=1e-6, rtol=1e-5)


# ---------------------------------------------------------------------------------------------
# KV-cache memory arithmetic
# ---------------------------------------------------------------------------------------------


def test_kv_cache_bytes_hand_computed():
    # LLaMA-2-7B-like: 32 layers, 32 heads (MHA), d_head 128, fp16, 4096 tokens, batch 1:
    # 2 * 4096 * 32 * 32 * 128 * 2 B = 2^31 B = 2 GiB
    assert kv_cache_bytes(1, 4096, 32, 32, 128, 2) == 2 * 1024**3
    # GPT-3 175B: 96 layers, 96 heads, d_head 128, 2048 tokens, fp16 -> 9 GiB per sequence
    # (003 forgets the 96 layers and reports 96 MB).
    assert kv_cache_bytes(1, 2048, 96, 96, 128) == 9 * 1024**3
    # LLaMA-2-70B: 80 layers, 8 KV heads (GQA), d_head 128, 4096 tokens, fp16 -> 1.25 GiB
    assert kv_cache_bytes(1, 4096, 80, 8, 128) == 1280 * 1024**2
    # fp32 doubles, batch scales linearly
    assert kv_cache_bytes(4, 4096, 32, 32, 128, 4) == 16 * 1024**3


def test_kv_cache_bytes_ratio_mha_gqa_mqa():
    mha = kv_cache_bytes(8, 1024, 24, 32, 64)
    gqa = kv_cache_bytes(8, 1024, 24, 8, 64)
    mqa = kv_cache_bytes(8, 1024, 24, 1, 64)
    assert mha / gqa == 32 / 8 and mha / mqa == 32 and gqa / mqa == 8


@pytest.mark.parametrize("h_kv", [4, 2, 1])
def test_kv_cache_bytes_equals_real_cache_tensors(h_kv):
    """Fill one KVCache per layer through GQA in float16-sized tensors and count their bytes."""
    layers, B, T, d_model, h = 3, 2, 5, 32, 4
    caches = [KVCache() for _ in range(layers)]
    for c in caches:
        m = make_gqa(d_model, h, h_kv).to(torch.float64)
        m(torch.randn(B, T, d_model, dtype=torch.float64), cache=c)
    used = sum(c.k.numel() * c.k.element_size() + c.v.numel() * c.v.element_size() for c in caches)
    assert used == kv_cache_bytes(B, T, layers, h_kv, d_model // h, bytes_per_elem=8)


# ---------------------------------------------------------------------------------------------
# sliding-window masks
# ---------------------------------------------------------------------------------------------


def as_bool(rows):
    return torch.tensor(rows, dtype=torch.bool)


def test_sliding_window_causal_by_hand():
    expected = as_bool(
        [
            [1, 0, 0, 0, 0, 0],
            [1, 1, 0, 0, 0, 0],
            [1, 1, 1, 0, 0, 0],
            [0, 1, 1, 1, 0, 0],
            [0, 0, 1, 1, 1, 0],
            [0, 0, 0, 1, 1, 1],
        ]
    )
    assert torch.equal(sliding_window_mask(6, 3), expected)


def test_sliding_window_bidirectional_by_hand():
    expected = as_bool(
        [
            [1, 1, 0, 0, 0],
            [1, 1, 1, 0, 0],
            [0, 1, 1, 1, 0],
            [0, 0, 1, 1, 1],
            [0, 0, 0, 1, 1],
        ]
    )
    assert torch.equal(sliding_window_mask(5, 2, causal=False), expected)


def test_sliding_window_global_tokens_by_hand():
    # Longformer-style: token 0 global, local band |i - j| < 2
    expected = as_bool(
        [
            [1, 1, 1, 1, 1, 1],
            [1, 1, 1, 0, 0, 0],
            [1, 1, 1, 1, 0, 0],
            [1, 0, 1, 1, 1, 0],
            [1, 0, 0, 1, 1, 1],
            [1, 0, 0, 0, 1, 1],
        ]
    )
    assert torch.equal(sliding_window_mask(6, 2, global_tokens=(0,), causal=False), expected)
    # causal with global token 1: later tokens always see token 1; token 1 sees 0 and itself
    expected_causal = as_bool(
        [
            [1, 0, 0, 0, 0, 0],
            [1, 1, 0, 0, 0, 0],
            [0, 1, 1, 0, 0, 0],
            [0, 1, 1, 1, 0, 0],
            [0, 1, 0, 1, 1, 0],
            [0, 1, 0, 0, 1, 1],
        ]
    )
    assert torch.equal(sliding_window_mask(6, 2, global_tokens=[1]), expected_causal)


def test_sliding_window_wide_is_full_and_one_is_diagonal():
    T = 7
    assert torch.equal(sliding_window_mask(T, T), torch.ones(T, T, dtype=torch.bool).tril())
    assert torch.equal(sliding_window_mask(T, T, causal=False), torch.ones(T, T, dtype=torch.bool))
    assert torch.equal(sliding_window_mask(T, 1), torch.eye(T, dtype=torch.bool))
    with pytest.raises(ValueError):
        sliding_window_mask(T, 0)


@pytest.mark.parametrize("w", [2, 3, 4])
@pytest.mark.parametrize("L", [1, 2, 3, 5])
def test_receptive_field_grows_by_window_minus_one_per_layer(w, L):
    """Stacking L causal window-w layers: the last token depends on L*(w-1)+1 positions.

    Information flows along allowed edges, so reachability after L layers is the L-th boolean
    power of the mask. (003's +-2, +-4, +-8 doubling and its '12 layers, window 512 -> 49'
    example are wrong: growth is linear in L.)
    """
    T = 40
    M = sliding_window_mask(T, w).long()
    R = torch.linalg.matrix_power(M, L) > 0
    assert int(R[-1].sum()) == L * (w - 1) + 1
    Mb = sliding_window_mask(T, w, causal=False).long()
    Rb = torch.linalg.matrix_power(Mb, L) > 0
    assert int(Rb[T // 2].sum()) == 2 * L * (w - 1) + 1


def test_sliding_window_with_attention_matches_sdpa():
    q, k, v = torch.randn(2, 3, 10, 8), torch.randn(2, 3, 10, 8), torch.randn(2, 3, 10, 8)
    mask = sliding_window_mask(10, 4, global_tokens=(0,), causal=False)
    ref = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
    torch.testing.assert_close(tiled_attention(q, k, v, 3, mask=mask), ref, atol=1e-6, rtol=1e-5)


# ---------------------------------------------------------------------------------------------
# linear attention
# ---------------------------------------------------------------------------------------------


def linear_attention_quadratic(q, k, v, causal, eps=1e-6):
    """Direct O(n^2) formula: A = phi(Q) phi(K)^T (lower triangle if causal), rows / (sum + eps)."""
    phi = lambda x: torch.where(x > 0, x + 1, torch.exp(x))  # noqa: E731 (elu(x) + 1, written out)
    A = torch.einsum("...id,...jd->...ij", phi(q), phi(k))
    if causal:
        A = A * torch.ones(A.shape[-2:], dtype=A.dtype).tril()
    return (A @ v) / (A.sum(dim=-1, keepdim=True) + eps)


@pytest.mark.parametrize("causal", [False, True])
def test_linear_attention_matches_quadratic_formula(causal):
    torch.manual_seed(3)
    q, k = (
        torch.randn(2, 3, 11, 5, dtype=torch.float64),
        torch.randn(2, 3, 11, 5, dtype=torch.float64),
    )
    v = torch.randn(2, 3, 11, 7, dtype=torch.float64)
    out = linear_attention(q, k, v, causal=causal)
    assert out.shape == (2, 3, 11, 7)
    torch.testing.assert_close(out, linear_attention_quadratic(q, k, v, causal))


def test_linear_attention_non_causal_other_lengths_and_feature_map():
    torch.manual_seed(4)
    q, k, v = torch.randn(4, 6), torch.randn(9, 6), torch.randn(9, 3)
    out = linear_attention(q, k, v)
    torch.testing.assert_close(
        out, linear_attention_quadratic(q, k, v, False), atol=1e-5, rtol=1e-5
    )
    relu1 = lambda x: F.relu(x) + 1  # noqa: E731 (001's NumPy feature map)
    A = relu1(q) @ relu1(k).T
    ref = (A @ v) / (A.sum(-1, keepdim=True) + 1e-6)
    torch.testing.assert_close(linear_attention(q, k, v, feature_map=relu1), ref)


def test_linear_attention_causal_first_row_is_first_value():
    q, k, v = torch.randn(1, 5, 4), torch.randn(1, 5, 4), torch.randn(1, 5, 3)
    out = linear_attention(q, k, v, causal=True, eps=0.0)
    torch.testing.assert_close(out[:, 0], v[:, 0])


# ---------------------------------------------------------------------------------------------
# tiled attention with an online softmax
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("block", [1, 3, 4, 5, 13, 64])
@pytest.mark.parametrize("causal", [False, True])
def test_tiled_attention_equals_sdpa(block, causal):
    torch.manual_seed(5)
    q, k, v = torch.randn(2, 3, 13, 8), torch.randn(2, 3, 13, 8), torch.randn(2, 3, 13, 6)
    ref = F.scaled_dot_product_attention(q, k, v, is_causal=causal)
    torch.testing.assert_close(
        tiled_attention(q, k, v, block, causal=causal), ref, atol=1e-6, rtol=1e-5
    )


@pytest.mark.parametrize("block", [2, 5, 16])
def test_tiled_attention_causal_with_longer_keys(block):
    """KV-cache shape T < S: queries are the last T positions (mask j <= i + S - T)."""
    q, k, v = torch.randn(2, 4, 8), torch.randn(2, 11, 8), torch.randn(2, 11, 8)
    keep = torch.tensor([[j <= i + 7 for j in range(11)] for i in range(4)])
    ref = F.scaled_dot_product_attention(q, k, v, attn_mask=keep)
    torch.testing.assert_close(
        tiled_attention(q, k, v, block, causal=True), ref, atol=1e-6, rtol=1e-5
    )


def test_tiled_attention_extreme_logits_no_overflow():
    torch.manual_seed(6)
    q, k, v = torch.randn(1, 2, 9, 4) * 300, torch.randn(1, 2, 9, 4) * 300, torch.randn(1, 2, 9, 4)
    scores = q @ k.transpose(-2, -1) / 2
    assert torch.isinf(torch.exp(scores)).any()  # a naive exp would overflow in fp32
    out = tiled_attention(q, k, v, block_size=2, causal=True)
    assert torch.isfinite(out).all()
    q64, k64, v64 = q.double(), k.double(), v.double()
    ref = F.scaled_dot_product_attention(q64, k64, v64, is_causal=True).float()
    torch.testing.assert_close(out, ref, atol=1e-5, rtol=1e-5)


def test_tiled_attention_blocked_row_gives_zeros():
    q, k, v = torch.randn(1, 3, 4), torch.randn(1, 5, 4), torch.randn(1, 5, 2)
    keep = torch.ones(3, 5, dtype=torch.bool)
    keep[1] = False
    out = tiled_attention(q, k, v, block_size=2, mask=keep)
    assert torch.equal(out[:, 1], torch.zeros(1, 2))
    ref = F.scaled_dot_product_attention(q, k, v, attn_mask=keep)
    torch.testing.assert_close(out[:, [0, 2]], ref[:, [0, 2]], atol=1e-6, rtol=1e-5)


def test_tiled_attention_padding_mask_broadcast():
    q, k, v = torch.randn(2, 2, 6, 4), torch.randn(2, 2, 6, 4), torch.randn(2, 2, 6, 4)
    keep = torch.tensor([[1, 1, 1, 1, 0, 0], [1, 1, 1, 1, 1, 1]], dtype=torch.bool)[:, None, None]
    causal = torch.ones(6, 6, dtype=torch.bool).tril()
    ref = F.scaled_dot_product_attention(q, k, v, attn_mask=keep & causal)
    out = tiled_attention(q, k, v, block_size=4, causal=True, mask=keep)
    torch.testing.assert_close(out, ref, atol=1e-6, rtol=1e-5)


# ---------------------------------------------------------------------------------------------
# devices
# ---------------------------------------------------------------------------------------------


def test_efficient_on_device(device):
    torch.manual_seed(7)
    m = make_gqa(16, 4, 2, rope=True).to(device)
    x = torch.randn(2, 6, 16, device=device)
    cache = KVCache()
    out = torch.cat(
        [m(x[:, :2], cache=cache)] + [m(x[:, t : t + 1], cache=cache) for t in range(2, 6)], 1
    )
    assert out.device.type == device.type and cache.k.device.type == device.type
    torch.testing.assert_close(out, m(x), atol=1e-5, rtol=1e-4)
    mask = sliding_window_mask(6, 3, global_tokens=(0,), device=device)
    assert mask.device.type == device.type
    q, k, v = (torch.randn(1, 2, 6, 4, device=device) for _ in range(3))
    ref = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
    torch.testing.assert_close(tiled_attention(q, k, v, 4, mask=mask), ref, atol=1e-5, rtol=1e-4)
    lin = linear_attention(q, k, v, causal=True)
    assert lin.device.type == device.type and torch.isfinite(lin).all()


def test_efficient_on_meta_device():
    """Shape/device propagation without data: everything is created on the input's device."""
    meta = torch.device("meta")
    assert sliding_window_mask(8, 3, global_tokens=(0,), device=meta).device == meta
    m = GroupedQueryAttention(16, 4, 2, rope=True).to(meta)
    cache = KVCache()
    out = m(torch.empty(2, 5, 16, device=meta), cache=cache)
    out = m(torch.empty(2, 1, 16, device=meta), cache=cache)
    assert out.device == meta and out.shape == (2, 1, 16) and cache.length == 6
    q = torch.empty(2, 3, 10, 8, device=meta)
    assert tiled_attention(q, q, q, 4, causal=True).device == meta
    assert linear_attention(q, q, q, causal=True).shape == (2, 3, 10, 8)


def test_low_precision_tiled_matches_fp32():
    q, k, v = torch.randn(1, 2, 16, 8), torch.randn(1, 2, 16, 8), torch.randn(1, 2, 16, 8)
    ref = F.scaled_dot_product_attention(q, k, v, is_causal=True)
    out = tiled_attention(q.bfloat16(), k.bfloat16(), v.bfloat16(), 5, causal=True)
    assert out.dtype == torch.bfloat16
    assert (out.float() - ref).abs().max() < 5e-2
    assert math.isfinite(out.float().sum().item())


# ---------------------------------------------------------------------------------------------
# data-only forms used by the graded assignment (sliding window with S, GQA function, KV step)
# ---------------------------------------------------------------------------------------------


def test_sliding_window_with_longer_keys_by_hand():
    # T=2 queries at positions 3, 4 of S=5; causal window 2; global token 0
    expected = as_bool([[1, 0, 1, 1, 0], [1, 0, 0, 1, 1]])
    assert torch.equal(sliding_window_mask(2, 2, global_tokens=(0,), S=5), expected)
    # bidirectional window 2, global token 4 (a query row and a key column)
    expected_bi = as_bool([[0, 0, 1, 1, 1], [1, 1, 1, 1, 1]])
    assert torch.equal(sliding_window_mask(2, 2, global_tokens=[4], causal=False, S=5), expected_bi)
    with pytest.raises(ValueError):
        sliding_window_mask(5, 2, S=4)


@pytest.mark.parametrize("h,h_kv", [(4, 4), (6, 2), (4, 1)])
def test_grouped_query_attention_matches_torch_enable_gqa(h, h_kv):
    torch.manual_seed(8)
    q, k, v = torch.randn(2, h, 5, 8), torch.randn(2, h_kv, 7, 8), torch.randn(2, h_kv, 7, 3)
    keep = torch.rand(2, h, 5, 7) < 0.7
    keep[..., 0] = True
    ref = F.scaled_dot_product_attention(q, k, v, attn_mask=keep, enable_gqa=True)
    got = grouped_query_attention(q, k, v, keep)
    torch.testing.assert_close(got, ref, atol=1e-6, rtol=1e-5)
    blocked = keep.clone()
    blocked[1, :, 2] = False
    assert torch.equal(grouped_query_attention(q, k, v, blocked)[1, :, 2], torch.zeros(h, 3))


@pytest.mark.parametrize("h,h_kv", [(4, 2), (3, 1)])
def test_kv_cached_attention_chunks_equal_full_causal(h, h_kv):
    torch.manual_seed(9)
    T = 8
    q, k, v = torch.randn(2, h, T, 4), torch.randn(2, h_kv, T, 4), torch.randn(2, h_kv, T, 5)
    full = F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True)
    kc = vc = None
    outs = []
    for a, b in [(0, 3), (3, 4), (4, 5), (5, 8)]:
        before = None if kc is None else kc.clone()
        out, kc, vc = kv_cached_attention(q[:, :, a:b], k[:, :, a:b], v[:, :, a:b], kc, vc)
        if before is not None:
            assert torch.equal(kc[:, :, :a], before)
        outs.append(out)
    torch.testing.assert_close(torch.cat(outs, dim=2), full, atol=1e-6, rtol=1e-5)
    assert torch.equal(kc, k) and torch.equal(vc, v)
