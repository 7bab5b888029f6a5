"""Positions: sinusoidal table, learned table, RoPE (both pairings), ALiBi, T5 buckets."""

import math

import pytest
import torch

from solutions.positional import (
    LearnedPositionalEmbedding,
    alibi_bias,
    alibi_slopes,
    apply_rope,
    half_to_interleaved,
    interleaved_to_half,
    rope_cos_sin,
    sinusoidal_encoding,
    t5_relative_position_bucket,
)

# --- sinusoidal -------------------------------------------------------------------------------


def test_sinusoidal_hand_values_d512():
    pe = sinusoidal_encoding(4, 512, dtype=torch.float64)
    assert pe.shape == (4, 512)
    w1 = 10000 ** (-2 / 512)  # frequency of the pair (2, 3)
    for p in range(4):
        assert pe[p, 0].item() == pytest.approx(math.sin(p), abs=1e-12)
        assert pe[p, 1].item() == pytest.approx(math.cos(p), abs=1e-12)
        assert pe[p, 2].item() == pytest.approx(math.sin(p * w1), abs=1e-12)
        assert pe[p, 3].item() == pytest.approx(math.cos(p * w1), abs=1e-12)
    # rounded: 003 prints 0.841, 0.540 (right) but 0.0010, 0.9999 for dims 2, 3 (wrong)
    expected_row1 = torch.tensor([0.8415, 0.5403, 0.8219, 0.5697], dtype=torch.float64)
    torch.testing.assert_close(pe[1, :4], expected_row1, rtol=0, atol=5e-5)
    assert abs(pe[1, 2].item() - 0.0010) > 0.8
    torch.testing.assert_close(pe[0], torch.tensor([0.0, 1.0] * 256, dtype=torch.float64))
    # the slowest pair (510, 511) has frequency 10000^(-510/512)
    assert pe[3, 510].item() == pytest.approx(math.sin(3 * 10000 ** (-510 / 512)), abs=1e-12)


def shift_matrix(k, d, base=10000.0):
    """Block-diagonal M_k with PE[p + k] = M_k PE[p], built from sin/cos addition formulas."""
    m = torch.zeros(d, d, dtype=torch.float64)
    for i in range(d // 2):
        a = k * base ** (-2 * i / d)
        c, s = math.cos(a), math.sin(a)
        # (sin(x + a), cos(x + a)) = (sin x cos a + cos x sin a, cos x cos a - sin x sin a)
        m[2 * i, 2 * i], m[2 * i, 2 * i + 1] = c, s
        m[2 * i + 1, 2 * i], m[2 * i + 1, 2 * i + 1] = -s, c
    return m


@pytest.mark.parametrize("k", [1, 3, 17, 100])
def test_sinusoidal_shift_is_a_fixed_linear_map(k):
    d, T = 16, 300
    pe = sinusoidal_encoding(T + k, d, dtype=torch.float64)
    m = shift_matrix(k, d)
    torch.testing.assert_close(pe[k:], pe[:T] @ m.T, rtol=0, atol=1e-9)
    assert torch.allclose(m @ m.T, torch.eye(d, dtype=torch.float64))  # a rotation


def test_sinusoidal_dot_product_depends_only_on_distance():
    pe = sinusoidal_encoding(64, 32, dtype=torch.float64)
    for k in (0, 1, 5):
        dots = (pe[: 64 - k] * pe[k:]).sum(-1)
        w = 10000.0 ** (-torch.arange(0, 32, 2, dtype=torch.float64) / 32)
        torch.testing.assert_close(dots, torch.cos(k * w).sum().expand_as(dots))


def test_sinusoidal_dtype_device_and_odd_width(device):
    pe = sinusoidal_encoding(5, 8, device=device, dtype=torch.float16)
    assert pe.device.type == device.type and pe.dtype == torch.float16
    ref = sinusoidal_encoding(5, 8, dtype=torch.float64)
    torch.testing.assert_close(pe.cpu().double(), ref, rtol=0, atol=1e-3)
    with pytest.raises(ValueError):
        sinusoidal_encoding(5, 7)


# --- learned -----------------------------------------------------------------------------------


def test_learned_positional_embedding():
    torch.manual_seed(0)
    emb = LearnedPositionalEmbedding(10, 4)
    assert sum(p.numel() for p in emb.parameters()) == 40
    x = torch.randn(2, 6, 4)
    torch.testing.assert_close(emb(x), x + emb.embedding.weight[:6])
    with pytest.raises(ValueError):
        emb(torch.randn(1, 11, 4))


# --- RoPE ---------------------------------------------------------------------------------------


def rope_hf_oracle(x, positions, base=10000.0):
    """Hugging Face LLaMA form: cat(freqs, freqs), x * cos + rotate_half(x) * sin."""
    d = x.shape[-1]
    inv_freq = 1.0 / (base ** (torch.arange(0, d, 2, dtype=torch.float64) / d))
    freqs = positions.double()[:, None] * inv_freq
    emb = torch.cat((freqs, freqs), dim=-1)
    x1, x2 = x[..., : d // 2], x[..., d // 2 :]
    return x * emb.cos() + torch.cat((-x2, x1), dim=-1) * emb.sin()


def rope_meta_oracle(x, positions, base=10000.0):
    """Meta LLaMA form: consecutive pairs as complex numbers times e^{i p theta}."""
    d = x.shape[-1]
    inv_freq = 1.0 / (base ** (torch.arange(0, d, 2, dtype=torch.float64) / d))
    angles = positions.double()[:, None] * inv_freq
    z = torch.view_as_complex(x.reshape(*x.shape[:-1], d // 2, 2).contiguous())
    return torch.view_as_real(z * torch.polar(torch.ones_like(angles), angles)).flatten(-2)


def test_rope_half_matches_hf_rotate_half():
    x = torch.randn(2, 3, 7, 16, dtype=torch.float64)
    torch.testing.assert_close(apply_rope(x), rope_hf_oracle(x, torch.arange(7)))


def test_rope_interleaved_matches_meta_complex_form():
    x = torch.randn(2, 3, 7, 16, dtype=torch.float64)
    pos = torch.arange(4, 11)
    out = apply_rope(x, positions=pos, pairing="interleaved")
    torch.testing.assert_close(out, rope_meta_oracle(x, pos))


def test_rope_d4_worked_example_from_003():
    q = torch.tensor([1.0, 2.0, 3.0, 4.0], dtype=torch.float64).view(1, 1, 1, 4)
    out = apply_rope(q, positions=torch.tensor([2]), pairing="interleaved").flatten()
    c0, s0, c1, s1 = math.cos(2), math.sin(2), math.cos(0.02), math.sin(0.02)
    expected = [c0 - 2 * s0, s0 + 2 * c0, 3 * c1 - 4 * s1, 3 * s1 + 4 * c1]
    torch.testing.assert_close(out, torch.tensor(expected, dtype=torch.float64))


@pytest.mark.parametrize("pairing", ["half", "interleaved"])
def test_rope_scores_depend_only_on_relative_position(pairing):
    torch.manual_seed(1)
    q, k = (
        torch.randn(1, 2, 1, 32, dtype=torch.float64),
        torch.randn(1, 2, 1, 32, dtype=torch.float64),
    )

    def score(m, n):
        qm = apply_rope(q, positions=torch.tensor([m]), pairing=pairing)
        kn = apply_rope(k, positions=torch.tensor([n]), pairing=pairing)
        return (qm * kn).sum(-1)

    for m, n in [(0, 0), (5, 2), (2, 5), (40, 3)]:
        for shift in (1, 7, 1000):
            torch.testing.assert_close(score(m + shift, n + shift), score(m, n))
    assert not torch.allclose(score(5, 2), score(5, 3))  # but it does depend on m - n
    torch.testing.assert_close(score(9, 9), (q * k).sum(-1))  # equal positions: plain dot


@pytest.mark.parametrize("pairing", ["half", "interleaved"])
def test_rope_preserves_norms_and_position_zero_is_identity(pairing):
    x = torch.randn(2, 2, 9, 8, dtype=torch.float64)
    out = apply_rope(x, pairing=pairing)
    torch.testing.assert_close(out.norm(dim=-1), x.norm(dim=-1))
    torch.testing.assert_close(out[..., 0, :], x[..., 0, :], rtol=0, atol=0)


def test_rope_pairing_conversion_identity():
    x = torch.randn(2, 3, 5, 12, dtype=torch.float64)
    inter = apply_rope(x, pairing="interleaved")
    via_half = half_to_interleaved(apply_rope(interleaved_to_half(x), pairing="half"))
    torch.testing.assert_close(inter, via_half)
    torch.testing.assert_close(half_to_interleaved(interleaved_to_half(x)), x, rtol=0, atol=0)
    assert interleaved_to_half(torch.arange(6.0)).tolist() == [0, 2, 4, 1, 3, 5]
    assert not torch.allclose(inter, apply_rope(x, pairing="half"))  # the pairings differ


def test_permuting_q_and_k_alike_keeps_interleaved_scores_under_half_rope():
    q, k = (
        torch.randn(1, 2, 6, 8, dtype=torch.float64),
        torch.randn(1, 2, 6, 8, dtype=torch.float64),
    )
    meta = apply_rope(q, pairing="interleaved") @ apply_rope(k, pairing="interleaved").mT
    hf = apply_rope(interleaved_to_half(q)) @ apply_rope(interleaved_to_half(k)).mT
    torch.testing.assert_close(meta, hf)


@pytest.mark.parametrize("pairing", ["half", "interleaved"])
def test_rope_positions_offset_equals_slice_of_longer_rotation(pairing):
    x = torch.randn(2, 2, 15, 8)
    full = apply_rope(x, pairing=pairing)
    tail = apply_rope(x[..., 10:, :], positions=torch.arange(10, 15), pairing=pairing)
    torch.testing.assert_close(tail, full[..., 10:, :])


def test_rope_offset_is_positions_after_cache():
    x = torch.randn(2, 3, 5, 8, dtype=torch.float64)
    torch.testing.assert_close(apply_rope(x, offset=9), rope_hf_oracle(x, torch.arange(9, 14)))
    out = apply_rope(x, offset=9, pairing="interleaved")
    torch.testing.assert_close(out, rope_meta_oracle(x, torch.arange(9, 14)))


def test_rope_per_batch_positions():
    x = torch.randn(2, 3, 4, 8)
    pos = torch.tensor([[0, 1, 2, 3], [7, 8, 9, 10]])
    out = apply_rope(x, positions=pos)
    torch.testing.assert_close(out[0], apply_rope(x[:1], positions=pos[0])[0])
    torch.testing.assert_close(out[1], apply_rope(x[1:], positions=pos[1])[0])


def test_rope_cos_sin_values_and_offset():
    cos, sin = rope_cos_sin(3, 4, offset=2, dtype=torch.float64)
    assert cos.shape == (3, 2)
    for row, p in enumerate((2, 3, 4)):
        for i, w in enumerate((1.0, 0.01)):
            assert cos[row, i].item() == pytest.approx(math.cos(p * w), abs=1e-12)
            assert sin[row, i].item() == pytest.approx(math.sin(p * w), abs=1e-12)
    # rotating the unit vector e_0 (half pairing) reads off cos and sin of the first frequency
    e0 = torch.zeros(1, 1, 5, 4, dtype=torch.float64)
    e0[..., 0] = 1.0
    out = apply_rope(e0, positions=torch.arange(2, 7))
    c, s = rope_cos_sin(5, 4, offset=2, dtype=torch.float64)
    torch.testing.assert_close(out[0, 0, :, 0], c[:, 0])
    torch.testing.assert_close(out[0, 0, :, 2], s[:, 0])


def test_rope_low_precision_and_bad_pairing():
    x = torch.randn(1, 2, 64, 16)
    out = apply_rope(x.to(torch.bfloat16), positions=torch.arange(1000, 1064))
    assert out.dtype == torch.bfloat16
    ref = apply_rope(x, positions=torch.arange(1000, 1064))
    torch.testing.assert_close(out.float(), ref, rtol=0, atol=0.05)
    with pytest.raises(ValueError):
        apply_rope(x, pairing="pairs")


def test_rope_device(device):
    x = torch.randn(2, 2, 6, 8, device=device)
    out = apply_rope(x, positions=torch.arange(3, 9, device=device))
    assert out.device.type == device.type
    ref = rope_hf_oracle(x.cpu().double(), torch.arange(3, 9))
    torch.testing.assert_close(out.cpu().double(), ref, rtol=1e-5, atol=1e-5)
    cos, _ = rope_cos_sin(6, 8, device=device)
    assert cos.device.type == device.type


# --- ALiBi ----------------------------------------------------------------------------------------


def test_alibi_slopes_power_of_two():
    assert alibi_slopes(8).tolist() == [2.0**-k for k in range(1, 9)]  # 1/2 ... 1/256
    assert alibi_slopes(16, dtype=torch.float64).tolist() == pytest.approx(
        [2.0 ** (-k / 2) for k in range(1, 17)]
    )
    # 003 lists [0.5, 0.354, 0.25, ...] for 8 heads: that is the 16-head sequence
    assert not torch.allclose(alibi_slopes(8)[:3], torch.tensor([0.5, 0.354, 0.25]), atol=1e-3)


def test_alibi_slopes_non_power_of_two_official_rule():
    # 6 heads: the 4-head slopes 2^-2, 2^-4, 2^-6, 2^-8, then 8-head slopes 2^-1, 2^-3
    assert alibi_slopes(6).tolist() == [2**-2, 2**-4, 2**-6, 2**-8, 2**-1, 2**-3]
    # 12 heads: the 8-head slopes, then 16-head slopes with odd exponents 2^-0.5, 2^-1.5, ...
    expected = [2.0**-k for k in range(1, 9)] + [2**-0.5, 2**-1.5, 2**-2.5, 2**-3.5]
    assert alibi_slopes(12, dtype=torch.float64).tolist() == pytest.approx(expected)
    assert alibi_slopes(1).tolist() == [2.0**-8]


def test_alibi_bias_values_shape_and_sign():
    bias = alibi_bias(2, 4, dtype=torch.float64)  # 2 heads: slopes 2^-4, 2^-8
    assert bias.shape == (2, 4, 4)
    distance = torch.tensor(
        [[0, 0, 0, 0], [1, 0, 0, 0], [2, 1, 0, 0], [3, 2, 1, 0]], dtype=torch.float64
    )
    torch.testing.assert_close(bias[0], -distance / 16)
    torch.testing.assert_close(bias[1], -distance / 256)
    assert (bias[:, 1:, 0] < 0).all()  # past keys are penalised, more the farther back
    assert (bias.triu() == 0).all()  # the key itself and future keys (masked anyway) get 0


def test_alibi_bias_with_cache_is_last_rows_of_full():
    full = alibi_bias(4, 9)
    torch.testing.assert_close(alibi_bias(4, 3, 9), full[:, -3:, :])


def test_alibi_softmax_equals_official_shortcut():
    """Adding -m (i - j) or +m j gives the same causal softmax (row constants cancel)."""
    torch.manual_seed(2)
    h, T = 4, 7
    scores = torch.randn(h, T, T, dtype=torch.float64)
    blocked = ~torch.ones(T, T, dtype=torch.bool).tril()
    ours = (scores + alibi_bias(h, T, dtype=torch.float64)).masked_fill(blocked, -math.inf)
    slopes = alibi_slopes(h, dtype=torch.float64)
    shortcut = scores + slopes[:, None, None] * torch.arange(T, dtype=torch.float64)
    shortcut = shortcut.masked_fill(blocked, -math.inf)
    torch.testing.assert_close(ours.softmax(-1), shortcut.softmax(-1))


def test_alibi_device(device):
    bias = alibi_bias(3, 5, device=device, dtype=torch.float16)
    assert bias.device.type == device.type and bias.dtype == torch.float16
    assert alibi_slopes(3, device=device).device.type == device.type


# --- T5 buckets -----------------------------------------------------------------------------------

# relative_position = key - query; num_buckets=32, max_distance=128 (T5 defaults)
BIDIRECTIONAL = {
    0: 0, -1: 1, -7: 7, 1: 17, 7: 23,  # exact: 8 small buckets per side
    -8: 8, -12: 9, -20: 10, -40: 12, -60: 13, -100: 15,  # 8 + floor(8 log(n/8) / log 16)
    -128: 15, -1000: 15, 8: 24, 40: 28, 1000: 31,
}  # fmt: skip
UNIDIRECTIONAL = {
    0: 0, 5: 0, 1000: 0, -1: 1, -3: 3, -15: 15,  # future keys share bucket 0; 16 exact buckets
    -16: 16, -20: 17, -50: 24, -100: 30, -127: 31, -500: 31,  # 16 + floor(16 log(n/16) / log 8)
}  # fmt: skip


def test_t5_buckets_hand_values():
    for table, bidi in ((BIDIRECTIONAL, True), (UNIDIRECTIONAL, False)):
        rel = torch.tensor(list(table))
        got = t5_relative_position_bucket(rel, bidirectional=bidi)
        assert got.dtype == torch.long
        assert got.tolist() == list(table.values())


def test_t5_buckets_follow_log_formula_off_boundaries():
    for n in range(8, 300):
        exact = 8 + 8 * math.log(n / 8) / math.log(16)
        if abs(exact - round(exact)) < 1e-6:
            continue  # exact integer boundary: float rounding may go either way
        expected = min(15, math.floor(exact))
        assert t5_relative_position_bucket(torch.tensor(-n)).item() == expected
        assert t5_relative_position_bucket(torch.tensor(n)).item() == 16 + expected


@pytest.mark.parametrize("bidirectional", [True, False])
def test_t5_buckets_monotone_and_saturating(bidirectional):
    num_buckets, max_distance = 32, 128
    dist = torch.arange(0, 400)
    back = t5_relative_position_bucket(-dist, bidirectional, num_buckets, max_distance)
    assert (back.diff() >= 0).all()  # non-decreasing in |distance|
    top = num_buckets // 2 - 1 if bidirectional else num_buckets - 1
    assert back.max().item() == top and (back[max_distance:] == top).all()
    assert (back[:max_distance] < top).any()
    assert len(set(back.tolist())) == top + 1  # every bucket of that side is used
    if bidirectional:
        fwd = t5_relative_position_bucket(dist, bidirectional, num_buckets, max_distance)
        assert (fwd[1:] == back[1:] + num_buckets // 2).all()  # keys after the query: other half


def test_t5_bucket_matrix_and_device(device):
    T = 6
    pos = torch.arange(T, device=device)
    rel = pos[None, :] - pos[:, None]  # (query, key) -> key - query
    buckets = t5_relative_position_bucket(rel, num_buckets=8, max_distance=16)
    assert buckets.device.type == device.type and buckets.shape == (T, T)
    assert (buckets.diagonal() == 0).all()
    assert buckets[0, 1].item() == 5 and buckets[1, 0].item() == 1  # +1 -> 4 + 1, -1 -> 1


def test_meta_device_functions():
    meta = torch.device("meta")
    assert sinusoidal_encoding(7, 8, device=meta).is_meta
    x = torch.empty(2, 3, 7, 8, device=meta)
    for pairing in ("half", "interleaved"):
        out = apply_rope(x, pairing=pairing)
        assert out.is_meta and out.shape == x.shape
    assert alibi_bias(4, 3, 5, device=meta).shape == (4, 3, 5)
    rel = torch.empty(5, 5, dtype=torch.long, device=meta)
    assert t5_relative_position_bucket(rel).is_meta
    with torch.device("meta"):
        emb = LearnedPositionalEmbedding(16, 8)
        assert emb(torch.empty(2, 7, 8)).shape == (2, 7, 8)
