"""Hidden checks for assignment ``efficient`` (chapter 7: 효율적인 어텐션).

Every function is compared with ``solutions.efficient`` on inputs drawn from ``rng``:

- ``sliding_window_mask``: exact bool masks, causal and bidirectional, window 1 and wider than
  the sequence, global tokens, T < S (queries are the last T positions), made on the given device.
- ``grouped_query_attention``: MHA (h_kv = h), MQA (h_kv = 1) and GQA groups, T != S, per-head,
  padding and causal masks, rows with every key masked (zeros), scores near -max(float32) and
  below -1e4 in float16 (a -1e9 / -1e4 fill is wrong there), float64, bfloat16.
- ``kv_cached_attention``: decoding one token or a chunk at a time from an empty cache; the
  output and both returned caches at every step, GQA/MQA, float64.
- ``linear_attention``: elu + 1 feature map, causal and non-causal, T != S, eps, any leading dims.
- ``tiled_attention``: block sizes that do not divide S, block 1 and larger than S, causal with
  T < S, masks that block whole tiles or whole rows (zeros, not NaN), scores that overflow exp()
  and scores near -max(float32) (a -1e9 start for the running max is wrong), float16, bfloat16.

Ready-made attention (``scaled_dot_product_attention``, ``MultiheadAttention``) may not be used;
the code ``tiled_attention`` runs may not use a ready-made softmax either (the notebook says so).
"""

import pytest
import torch

from autograder.checking import assert_close, fail, raised, randn
from solutions import efficient as ref
from solutions.masking import causal_mask

READY_MADE = ("scaled_dot_product_attention", "MultiheadAttention", "multi_head_attention_forward")
SOFTMAX = ("softmax", "log_softmax", "logsumexp", "Softmax", "LogSoftmax")
F32, F64, F16, BF16 = torch.float32, torch.float64, torch.float16, torch.bfloat16
LOW_TOL = {F16: (1e-2, 1e-2), BF16: (5e-2, 5e-2)}  # half inputs vs a float64 reference


def keep_mask(rng, *shape, p_keep=0.7, device="cpu"):
    return (torch.rand(*shape, generator=rng) < p_keep).to(device)


def ints(rng, lo, hi, *shape):
    """Small integers as float64 (exact products: scores do not depend on the order of sums)."""
    return torch.randint(lo, hi + 1, shape, generator=rng).double()


def huge_negative_scores(rng, B, h, h_kv, T, S, d):
    """q, k (float32) whose scores q.k/sqrt(4) are exact and lie in about [-4e37, -6e35]."""
    q = ints(rng, 1, 8, B, h, T, d) * 2.0**60
    k = -ints(rng, 1, 8, B, h_kv, S, d) * 2.0**58
    return q.float(), k.float()


def half_scores_below_minus_1e4(rng, B, h, h_kv, T, S, d):
    """q, k (float16) whose scores lie in [-18432, -12800]: a -1e4 fill is above all of them."""
    q = (40 + 8 * ints(rng, 0, 1, B, h, T, d)).half()
    k = -(160 + 32 * ints(rng, 0, 1, B, h_kv, S, d)).half()
    return q, k


def expected_low(fn, args, kwargs, dtype):
    """Reference on float64 copies of the inputs, cast back to the inputs' dtype."""
    up = [a.double() if torch.is_tensor(a) and a.is_floating_point() else a for a in args]
    return fn(*up, **kwargs).to(dtype)


# ----------------------------------------------------------------------------- sliding window

# case label -> (T, window, kwargs); the label says what makes it hard
WINDOW = {
    "인과적, T=9, window=3": (9, 3, {}),
    "인과적, window=1 (대각선만)": (6, 1, {}),
    "양방향, window=4": (10, 4, {"causal": False}),
    "인과적, window > T": (5, 8, {}),
    "양방향, window > T": (5, 8, {"causal": False}),
    "인과적, 전역 토큰 (0, 5)": (9, 2, {"global_tokens": (0, 5)}),
    "양방향, 전역 토큰 [0, T-1]": (8, 2, {"causal": False, "global_tokens": [0, 7]}),
    "T < S: 인과적, window=4, S=11": (3, 4, {"S": 11}),
    "T=1 < S (디코딩), 전역 토큰 0": (1, 3, {"S": 10, "global_tokens": (0,)}),
    "T < S: 양방향, 전역 토큰 (2, 9)": (
        4,
        2,
        {"S": 10, "causal": False, "global_tokens": (2, 9)},
    ),
    "T=0 < S": (0, 2, {"S": 3}),
}


@pytest.mark.spec(builds_on_device=True)  # the notebook: made on `device` directly
@pytest.mark.parametrize("case", [*WINDOW, "무작위 T, S, window, 전역 토큰"])
def test_sliding_window_mask(student, rng, device, case):
    if case in WINDOW:
        T, window, kwargs = WINDOW[case]
    else:
        S = int(torch.randint(6, 20, (1,), generator=rng))
        T = int(torch.randint(1, S + 1, (1,), generator=rng))
        window = int(torch.randint(1, 6, (1,), generator=rng))
        glob = sorted(set(torch.randint(0, S, (2,), generator=rng).tolist()))
        causal = bool(torch.randint(0, 2, (1,), generator=rng))
        kwargs = {"S": S, "global_tokens": glob, "causal": causal}
    kwargs = {**kwargs, "device": device}
    got = student.call("sliding_window_mask", T, window, **kwargs)
    expected = ref.sliding_window_mask(T, window, **kwargs)
    inputs = {"T": T, "window": window, **kwargs}
    assert_close(got, expected, what=f"sliding_window_mask [{case}]", inputs=inputs)


# ----------------------------------------------------------------------------- GQA


def gqa_inputs(rng, d, B, h, h_kv, T, S, d_k=8, d_v=8, dtype=F32):
    q = randn(rng, B, h, T, d_k, dtype=dtype, device=d)
    k = randn(rng, B, h_kv, S, d_k, dtype=dtype, device=d)
    v = randn(rng, B, h_kv, S, d_v, dtype=dtype, device=d)
    return q, k, v


def padding(lengths, S, d):
    return (torch.arange(S) < torch.tensor(lengths).unsqueeze(-1)).view(-1, 1, 1, S).to(d)


def gqa_per_head_mask(rng, d):
    q, k, v = gqa_inputs(rng, d, 2, 6, 2, 5, 7)
    return (q, k, v), {"mask": keep_mask(rng, 2, 6, 5, 7, device=d)}


def gqa_padding_empty(rng, d):
    q, k, v = gqa_inputs(rng, d, 3, 4, 2, 4, 6)
    return (q, k, v), {"mask": padding([6, 0, 3], 6, d)}


def gqa_huge(rng, d):
    q, k = huge_negative_scores(rng, 2, 4, 2, 5, 6, 4)
    v = randn(rng, 2, 2, 6, 3)
    mask = keep_mask(rng, 2, 4, 5, 6, p_keep=0.5)
    mask[..., 0] = True
    return (q.to(d), k.to(d), v.to(d)), {"mask": mask.to(d)}


def gqa_half(rng, d):
    q, k = half_scores_below_minus_1e4(rng, 1, 4, 2, 4, 6, 4)
    v = randn(rng, 1, 2, 6, 4, dtype=F16)
    mask = keep_mask(rng, 4, 6, p_keep=0.5)
    mask[:, 1] = True
    return (q.to(d), k.to(d), v.to(d)), {"mask": mask.to(d)}


GQA = {
    "MHA: h_kv = h = 4, 마스크 없음": lambda rng, d: (gqa_inputs(rng, d, 2, 4, 4, 5, 5), {}),
    "MQA: h_kv = 1, T=3 != S=7": lambda rng, d: (gqa_inputs(rng, d, 2, 4, 1, 3, 7), {}),
    "GQA h=8, h_kv=2, d_v != d_k": lambda rng, d: (
        gqa_inputs(rng, d, 2, 8, 2, 6, 6, d_k=4, d_v=5),
        {},
    ),
    "GQA h=6, h_kv=2, 헤드별 마스크 (B, h, T, S)": gqa_per_head_mask,
    "GQA h=6, h_kv=3, 인과적 마스크, T=3 < S=8": lambda rng, d: (
        gqa_inputs(rng, d, 1, 6, 3, 3, 8),
        {"mask": causal_mask(3, 8, device=d)},
    ),
    "패딩 마스크 (B, 1, 1, S), 빈 시퀀스 (모든 키가 막힌 행)": gqa_padding_empty,
    "float64, h=4, h_kv=2": lambda rng, d: (gqa_inputs(rng, d, 2, 4, 2, 5, 4, dtype=F64), {}),
    "점수 ~ -max(float32)/10, 마스크": gqa_huge,
    "float16, 점수 < -1e4, 마스크": gqa_half,
    "bfloat16, h=4, h_kv=2, 인과적 마스크": lambda rng, d: (
        gqa_inputs(rng, d, 2, 4, 2, 6, 6, dtype=BF16),
        {"mask": causal_mask(6, device=d)},
    ),
}


def gqa_not_a_multiple(student, rng, device, case):
    """h = 6 query heads cannot share h_kv = 4 key/value heads: ValueError, as the notebook asks
    (a matmul error or a quietly wrong grouping is not it)."""
    q, k, v = gqa_inputs(rng, device, 1, 6, 4, 3, 3)
    if not raised(student, "ValueError", "grouped_query_attention", q, k, v):
        fail(
            "grouped_query_attention(q (1, 6, 3, 8), k (1, 4, 3, 8), v): h = 6 이 h_kv = 4 의 "
            "배수가 아니면 ValueError 를 일으켜야 합니다 (다른 오류나 결과를 돌려주는 것이 아님)"
        )


@pytest.mark.forbid(*READY_MADE)
@pytest.mark.parametrize("case", [*GQA, "h % h_kv != 0 -> ValueError"])
def test_grouped_query_attention(student, rng, device, case):
    if case not in GQA:
        gqa_not_a_multiple(student, rng, device, case)
        return
    (q, k, v), kwargs = GQA[case](rng, device)
    got = student.call("grouped_query_attention", q, k, v, **kwargs)
    if q.dtype in LOW_TOL:
        expected = expected_low(ref.grouped_query_attention, (q, k, v), kwargs, q.dtype)
        rtol, atol = LOW_TOL[q.dtype]
    else:
        expected = ref.grouped_query_attention(q, k, v, **kwargs)
        rtol, atol = (1e-5, 1e-5) if q.dtype == F32 else (None, None)
    inputs = {"q": q, "k": k, "v": v, **kwargs}
    what = f"grouped_query_attention [{case}]"
    assert_close(got, expected, what=what, inputs=inputs, rtol=rtol, atol=atol)


# ----------------------------------------------------------------------------- KV cache

# case label -> (B, h, h_kv, chunk sizes fed one after another, d_k, d_v, dtype)
DECODE = {
    "MHA, 빈 캐시에서 시작해 토큰 하나씩": (2, 2, 2, [1] * 6, 8, 8, F32),
    "GQA h=4, h_kv=2, 토큰 하나씩": (2, 4, 2, [1] * 5, 4, 4, F32),
    "MQA h=3, h_kv=1: 프롬프트 T_new=5, 이어서 토큰 하나씩": (1, 3, 1, [5, 1, 1, 1], 8, 6, F32),
    "토큰 3, 2, 4개씩 (캐시 뒤에 T_new > 1)": (2, 4, 2, [3, 2, 4], 8, 8, F32),
    "float64, d_v != d_k, 토큰 2, 1, 3개씩": (1, 2, 1, [2, 1, 3], 5, 3, F64),
}


@pytest.mark.given(grouped_query_attention=ref.grouped_query_attention)
@pytest.mark.forbid(*READY_MADE)
@pytest.mark.parametrize("case", list(DECODE))
def test_kv_cached_attention(student, rng, device, case):
    B, h, h_kv, chunks, d_k, d_v, dtype = DECODE[case]
    T = sum(chunks)
    q = randn(rng, B, h, T, d_k, dtype=dtype, device=device)
    k = randn(rng, B, h_kv, T, d_k, dtype=dtype, device=device)
    v = randn(rng, B, h_kv, T, d_v, dtype=dtype, device=device)
    k_cache = v_cache = None
    start = 0
    for step, n in enumerate(chunks):
        args = (q[:, :, start : start + n], k[:, :, start : start + n], v[:, :, start : start + n])
        args = tuple(a.contiguous() for a in args) + (k_cache, v_cache)
        got = student.call("kv_cached_attention", *args)
        expected = ref.kv_cached_attention(*args)
        inputs = dict(zip(("q_new", "k_new", "v_new", "k_cache", "v_cache"), args, strict=True))
        what = f"kv_cached_attention [{case}] {step + 1}번째 호출 (출력, k_cache, v_cache)"
        assert_close(got, expected, what=what, inputs=inputs, rtol=1e-5, atol=1e-5)
        _, k_cache, v_cache = expected
        start += n


# ----------------------------------------------------------------------------- linear attention

# case label -> (q shape, k shape, v shape, kwargs, dtype, scale)
LINEAR = {
    "비인과적, T=5 != S=9": ((2, 3, 5, 4), (2, 3, 9, 4), (2, 3, 9, 6), {}, F32, 1.0),
    "인과적, (B, h, T, d)": ((2, 3, 8, 4), (2, 3, 8, 4), (2, 3, 8, 4), {"causal": True}, F32, 1.0),
    "인과적, 2차원 (T, d), d_v != d_k": ((7, 3), (7, 3), (7, 5), {"causal": True}, F32, 1.0),
    "비인과적, 3차원, eps=0.1": ((2, 6, 4), (2, 6, 4), (2, 6, 4), {"eps": 0.1}, F32, 1.0),
    "인과적, eps=0.5": ((1, 6, 3), (1, 6, 3), (1, 6, 2), {"causal": True, "eps": 0.5}, F32, 1.0),
    "인과적, eps=0": ((2, 5, 4), (2, 5, 4), (2, 5, 4), {"causal": True, "eps": 0.0}, F64, 1.0),
    "인과적, T=1": ((2, 1, 4), (2, 1, 4), (2, 1, 3), {"causal": True}, F32, 1.0),
    "float64, 입력 ~ ±20 (elu 포화)": (
        (2, 2, 6, 4),
        (2, 2, 6, 4),
        (2, 2, 6, 4),
        {"causal": True},
        F64,
        20.0,
    ),
}


@pytest.mark.parametrize("case", list(LINEAR))
def test_linear_attention(student, rng, device, case):
    q_shape, k_shape, v_shape, kwargs, dtype, scale = LINEAR[case]
    q = randn(rng, *q_shape, scale=scale, dtype=dtype, device=device)
    k = randn(rng, *k_shape, scale=scale, dtype=dtype, device=device)
    v = randn(rng, *v_shape, dtype=dtype, device=device)
    got = student.call("linear_attention", q, k, v, **kwargs)
    expected = ref.linear_attention(q, k, v, **kwargs)
    rtol, atol = (1e-4, 1e-5) if dtype == F32 else (None, None)
    inputs = {"q": q, "k": k, "v": v, **kwargs}
    what = f"linear_attention [{case}]"
    assert_close(got, expected, what=what, inputs=inputs, rtol=rtol, atol=atol)


# ----------------------------------------------------------------------------- tiled attention


def qkv(rng, d, lead, T, S, d_k=8, d_v=8, dtype=F32):
    q = randn(rng, *lead, T, d_k, dtype=dtype, device=d)
    k = randn(rng, *lead, S, d_k, dtype=dtype, device=d)
    v = randn(rng, *lead, S, d_v, dtype=dtype, device=d)
    return q, k, v


def tiled_padding(rng, d):
    q, k, v = qkv(rng, d, (3, 2), 6, 10)
    return (q, k, v), {"block_size": 3, "mask": padding([10, 0, 4], 10, d)}


def tiled_window(rng, d):
    q, k, v = qkv(rng, d, (1, 2), 12, 12)
    mask = ref.sliding_window_mask(12, 3, device=d)
    return (q, k, v), {"block_size": 4, "mask": mask}


def tiled_blocked_rows(rng, d):
    q, k, v = qkv(rng, d, (2,), 5, 7, d_v=3)
    mask = keep_mask(rng, 2, 5, 7)
    mask[0, 1] = False
    mask[1, 4] = False
    return (q, k, v), {"block_size": 3, "mask": mask.to(d)}


def tiled_big_scores(rng, d):
    q, k = ints(rng, -100, 100, 2, 6, 4), ints(rng, -100, 100, 2, 9, 4)
    v = randn(rng, 2, 9, 3)
    return (q.float().to(d), k.float().to(d), v.to(d)), {"block_size": 2, "causal": True}


def tiled_huge(rng, d):
    q, k = huge_negative_scores(rng, 1, 2, 2, 5, 7, 4)
    v = randn(rng, 1, 2, 7, 3)
    return (q.to(d), k.to(d), v.to(d)), {"block_size": 3}


def tiled_half(rng, d):
    q, k = half_scores_below_minus_1e4(rng, 1, 2, 2, 5, 7, 4)
    v = randn(rng, 1, 2, 7, 4, dtype=F16)
    mask = keep_mask(rng, 5, 7, p_keep=0.5)
    mask[:, 6] = True  # the last tile has a key for every row; the first ones may have none
    mask[:, :2] = False
    return (q.to(d), k.to(d), v.to(d)), {"block_size": 2, "mask": mask.to(d)}


def tiled_random_mask_causal(rng, d):
    q, k, v = qkv(rng, d, (2, 3), 7, 7)
    return (q, k, v), {
        "block_size": 3,
        "causal": True,
        "mask": keep_mask(rng, 2, 3, 7, 7, device=d),
    }


def tiled_broadcast_mask(rng, d):
    """keep-mask (T, 1): one decision per query row, broadcast over all S keys (rows with False
    see no key -> zeros). Slicing it per key block, as if it were (T, S), breaks from the
    second block on."""
    q, k, v = qkv(rng, d, (2, 2), 6, 9)
    mask = torch.tensor([True, False, True, True, False, True], device=d).view(6, 1)
    return (q, k, v), {"block_size": 3, "mask": mask}


TILED = {
    "block_size=4, T=S=13 (13은 4로 나누어떨어지지 않음)": lambda rng, d: (
        qkv(rng, d, (2, 3), 13, 13),
        {"block_size": 4},
    ),
    "block_size=1, 인과적": lambda rng, d: (
        qkv(rng, d, (2,), 6, 6),
        {"block_size": 1, "causal": True},
    ),
    "block_size=64 > S=10, d_v != d_k": lambda rng, d: (
        qkv(rng, d, (2, 2), 7, 10, d_k=4, d_v=6),
        {"block_size": 64},
    ),
    "인과적, T=5 < S=12 (쿼리는 마지막 5개 위치)": lambda rng, d: (
        qkv(rng, d, (1, 2), 5, 12),
        {"block_size": 5, "causal": True},
    ),
    "패딩 마스크 (B, 1, 1, S): 타일 전체가 막힘, 빈 시퀀스": tiled_padding,
    "인과적 슬라이딩 윈도: 뒤쪽 행에서는 앞쪽 타일이 전부 막힘": tiled_window,
    "모든 키가 막힌 행 -> 0": tiled_blocked_rows,
    "인과적 + 무작위 마스크 (B, h, T, S)": tiled_random_mask_causal,
    "점수 ~ ±5000 (exp 오버플로)": tiled_big_scores,
    "점수 ~ -max(float32)/10": tiled_huge,
    "float16, 점수 < -1e4, 앞쪽 타일이 막힘": tiled_half,
    "float64, 인과적, block_size=3": lambda rng, d: (
        qkv(rng, d, (2, 2), 8, 8, dtype=F64),
        {"block_size": 3, "causal": True},
    ),
    "bfloat16, 인과적, block_size=5": lambda rng, d: (
        qkv(rng, d, (1, 2), 11, 11, dtype=BF16),
        {"block_size": 5, "causal": True},
    ),
    "마스크 (T, 1)를 모든 키에 브로드캐스팅, block_size=3": tiled_broadcast_mask,
}


@pytest.mark.forbid(*READY_MADE, *SOFTMAX)
@pytest.mark.parametrize("case", list(TILED))
def test_tiled_attention(student, rng, device, case):
    (q, k, v), kwargs = TILED[case](rng, device)
    got = student.call("tiled_attention", q, k, v, **kwargs)
    if q.dtype in LOW_TOL:
        expected = expected_low(ref.tiled_attention, (q, k, v), kwargs, q.dtype)
        rtol, atol = LOW_TOL[q.dtype]
    else:
        expected = ref.tiled_attention(q, k, v, **kwargs)
        rtol, atol = (1e-5, 1e-5) if q.dtype == F32 else (None, None)
    inputs = {"q": q, "k": k, "v": v, **kwargs}
    what = f"tiled_attention [{case}]"
    assert_close(got, expected, what=what, inputs=inputs, rtol=rtol, atol=atol)
