"""Hidden checks for assignment ``attention`` (chapter 2: 스케일드 닷-프로덕트 어텐션).

- ``simple_self_attention(x)``: (context, weights) of weight-free self-attention on (T, d),
  (B, T, d) and (B, h, T, d) inputs, scores in the thousands and near the float32 range, half
  precision.
- ``scaled_dot_product_attention(q, k, v, mask=None)``: (output, weights) for any leading dims,
  T != S, d_k != d_v, one query or one key, float64/float16/bfloat16, scores near the ends of
  the dtype's range (d_k = 1, so q k^T itself stays finite); with bool keep-masks of several
  broadcast shapes, fully masked rows (zero weights and output) and blocked weights exactly 0.
- ``v2_to_v1_state_dict(state_dict)``: keys, shapes, dtype and device of the converted weights,
  and the reference ``SelfAttention_v1`` loaded with them matching ``SelfAttention_v2``.

Everything is compared with ``solutions.attention``; half-precision inputs are compared with
the float64 result on the same (rounded) inputs. Ready-made attention may not be used.
"""

import math

import pytest
import torch

from autograder.judge.checking import HALF_TOL, assert_close, extreme, fail, randn
from solutions import attention as ref

READY_MADE = ("scaled_dot_product_attention", "MultiheadAttention", "multi_head_attention_forward")
F32, F64, F16, BF16 = torch.float32, torch.float64, torch.float16, torch.bfloat16
# half precision: two matmuls and a softmax, each rounded; measured worst case over several
# correct implementations (scores of order 1) is below 1e-3 (float16) and 1e-2 (bfloat16)
ATTN_HALF_TOL = {F16: (2e-3, 5e-3), BF16: (1.6e-2, 3e-2)}


def reference(fn, *tensors, **kwargs):
    """The reference result; half-precision inputs are computed in float64 and rounded back."""
    dtype = tensors[0].dtype
    if dtype not in HALF_TOL:
        return fn(*tensors, **kwargs)
    wide = [t.double() if t.is_floating_point() else t for t in tensors]
    return tuple(o.to(dtype) for o in fn(*wide, **kwargs))


def tolerance(dtype):
    return ATTN_HALF_TOL.get(dtype, (None, None))


def spread(rng, n, lo=1.0, hi=1.3):
    """n distinct values in [lo, hi), far apart (n! orders): no near-ties in a softmax."""
    order = torch.randperm(n, generator=rng).to(torch.float64)
    return lo + (hi - lo) * order / n


def signs(rng, *shape):
    return torch.randint(0, 2, shape, generator=rng).to(torch.float64) * 2 - 1


# ----------------------------------------------------------------------------- misconceptions
# Known mistakes, and the value each gives on a check's inputs (None where those inputs cannot
# show it): a wrong result that matches one is named in the feedback (checking.diagnose).

NAIVE_EXP = (
    "최댓값을 빼지 않고 exp 를 계산했습니다: 점수가 크면 오버플로(inf / inf = NaN), 모두 아주 "
    "작으면 언더플로(가중치가 모두 0)가 납니다. 각 행의 최댓값을 뺀 뒤 exp 를 계산하는 "
    "소프트맥스(torch.softmax)를 쓰세요"
)
OVER_QUERIES = (
    "소프트맥스를 쿼리 축(dim=-2)을 따라 계산했습니다: 각 쿼리의 가중치, 곧 점수 행렬의 "
    "행(dim=-1)이 합이 1 이 되어야 합니다"
)


def naive_softmax(scores, mask=None):
    e = torch.exp(scores)
    e = e if mask is None else e * mask
    total = e.sum(dim=-1, keepdim=True)
    return torch.where(total > 0, e / total, torch.zeros_like(e))


def simple_misconceptions(x):
    dot = x @ x.transpose(-2, -1)

    def attend(weights, values=x):
        return (weights @ values).to(x.dtype), weights

    def in_float32():
        xf = x.float()
        return attend(torch.softmax(xf @ xf.transpose(-2, -1), dim=-1), xf)

    return {
        OVER_QUERIES: lambda: attend(torch.softmax(dot, dim=-2)),
        "이 단순한 셀프 어텐션에는 1/√d 스케일링이 없습니다: 점수는 x @ xᵀ 그대로 쓰고, 스케일링은 "
        "스케일드 닷-프로덕트 어텐션에서 합니다": lambda: attend(
            torch.softmax(dot / math.sqrt(x.shape[-1]), dim=-1)
        ),
        NAIVE_EXP: lambda: attend(naive_softmax(dot)),
        "float64 입력을 float32 로 바꾸어 계산했습니다: 정밀도를 잃지 않도록 입력의 dtype 그대로 "
        "계산하세요": lambda: in_float32() if x.dtype == F64 else None,
    }


def sdpa_misconceptions(q, k, v, mask=None):
    d_k, d_v = q.shape[-1], v.shape[-1]
    dot = q @ k.transpose(-2, -1)
    scaled = dot / math.sqrt(d_k)

    def out(w):
        return w @ v, w

    def attend(scores=scaled, fill=None, zero_blocked=True, dim=-1, keep=mask):
        if keep is not None:
            low = torch.finfo(scores.dtype).min if fill is None else fill
            scores = scores.masked_fill(~keep, low)
        w = torch.softmax(scores, dim=dim)
        return out(w.masked_fill(~keep, 0.0) if keep is not None and zero_blocked else w)

    known = {
        "q @ kᵀ 를 먼저 계산한 뒤 √d_k 로 나누었습니다: float16 에서 d_k 가 크면 곱 자체가 "
        "float16 의 최댓값(약 65504)을 넘어 inf 가 되고, 가중치가 NaN 이 됩니다. 곱하기 전에 q "
        "(또는 k) 를 √d_k 로 나누세요 (F.scaled_dot_product_attention 도 곱하기 전에 배율을 "
        "곱합니다)": lambda: None if dot.isfinite().all() else attend(),
        "점수를 √d_k 로 나누지 않았습니다: 스케일드 닷-프로덕트 어텐션은 softmax(q @ kᵀ / √d_k) "
        "입니다": lambda: attend(dot),
        "점수를 √d_k 가 아니라 d_k 로 나누었습니다: 제곱근(math.sqrt(d_k))으로 나누세요": lambda: (
            attend(dot / d_k)
        ),
        "점수를 값(v)의 차원 d_v 의 제곱근으로 나누었습니다: 쿼리·키의 차원 d_k = q.shape[-1] 의 "
        "제곱근으로 나누세요": lambda: None if d_v == d_k else attend(dot / math.sqrt(d_v)),
        OVER_QUERIES: lambda: attend(dim=-2),
        "두 번째 반환값으로 소프트맥스 전의 점수를 돌려주었습니다: (output, weights) 의 weights 는 "
        "소프트맥스를 거친 어텐션 가중치입니다": lambda: (
            attend()[0],
            scaled if mask is None else scaled.masked_fill(~mask, torch.finfo(dot.dtype).min),
        ),
    }

    def naive():
        return out(naive_softmax(scaled, mask))

    if mask is None:
        return known | {NAIVE_EXP: naive}

    def fixed():  # a fill far above scores near -max: the kept weights underflow, as in naive()
        return attend(fill=-1e4)

    def alike():
        return torch.equal(naive()[1], fixed()[1])

    return known | {
        "막히지 않은 키의 가중치까지 0 이 되었습니다: 최댓값을 빼지 않고 exp 를 계산했거나"
        "(언더플로), 막힌 점수를 점수보다 큰 고정된 음수(-1e4, -1e9, float32 의 최솟값 등)로 "
        "채웠을 때의 결과입니다. 각 행의 최댓값을 빼는 소프트맥스를 쓰고, 막힌 점수는 "
        "torch.finfo(scores.dtype).min 으로 채우세요": lambda: naive() if alike() else None,
        NAIVE_EXP: lambda: None if alike() else naive(),
        "mask 의 True/False 를 거꾸로 썼습니다 (True = 막힘): 이 과정의 mask 는 "
        "F.scaled_dot_product_attention 처럼 True 가 볼 수 있는 곳(keep)입니다": lambda: attend(
            keep=~mask
        ),
        "막힌 점수를 -inf 로 채워서 모든 키가 막힌 행이 NaN 이 되었습니다: torch.finfo(dtype).min "
        "으로 채우고, 소프트맥스 뒤에 막힌 위치를 0 으로 만드세요": lambda: attend(
            fill=float("-inf"), zero_blocked=False
        ),
        "모든 키가 막힌 행이 균등 분포(1/S)가 되었습니다: finfo.min 으로 채운 행은 값이 모두 같아 "
        "소프트맥스가 고르게 나눕니다. 소프트맥스 뒤에 막힌 위치를 0 으로 만드세요 (그 행의 출력도 "
        "0)": lambda: attend(zero_blocked=False),
        "막힌 점수를 고정된 음수(-1e4, -1e9, float32 의 최솟값 등)로 채웠습니다: 점수가 그보다 "
        "작으면 소프트맥스에서 막힌 키가 가중치를 가져갑니다. 점수의 dtype 에 맞는 "
        "torch.finfo(scores.dtype).min 으로 채우세요": lambda: None if alike() else fixed(),
        "소프트맥스 뒤에 막힌 가중치를 0 으로 만들기만 하고 다시 정규화하지 않았습니다: 소프트맥스 "
        "전에 막힌 점수를 torch.finfo(dtype).min 으로 채우면 남은 가중치의 합이 1 이 "
        "됩니다": lambda: out(torch.softmax(scaled, dim=-1) * mask),
    }


def v2_to_v1_misconceptions(state, name):
    other = {
        f"{name!r} 에 {o}.weight 를 넣었습니다: 이름이 같은 가중치를 옮기세요": lambda o=o: (
            state[f"{o}.weight"].T
        )
        for o in NAMES
        if o != name
    }
    return {
        "nn.Linear 의 weight 를 전치(.T)하지 않았습니다: weight 는 (d_out, d_in) 이고 nn.Linear 는 "
        "x @ Wᵀ, SelfAttention_v1 은 x @ W 를 계산하므로 v1 의 행렬은 (d_in, d_out) 인 Wᵀ "
        "입니다": lambda: state[f"{name}.weight"],
        **other,
    }


# ----------------------------------------------------------------------------- 1. simple


def huge_tokens(rng, d):
    """(T, 1) tokens with |x| ~ 1e19: scores x_i x_j ~ 1.7e38, near the end of float32."""
    x = spread(rng, 6) * signs(rng, 6) * 1e19
    return x.reshape(6, 1).to(d, F32)


SIMPLE = {
    "(T, d) = (6, 3) 책의 예제": lambda rng, d: ref.example_inputs(device=d),
    "(B, T, d)": lambda rng, d: randn(rng, 3, 5, 4, device=d),
    "(B, h, T, d), float64": lambda rng, d: randn(rng, 2, 3, 4, 8, dtype=F64, device=d),
    "T=1": lambda rng, d: randn(rng, 2, 1, 5, device=d),
    "점수~7000": lambda rng, d: randn(rng, 2, 6, 8, scale=30.0, device=d),
    "점수~±1.7e38 (d=1)": huge_tokens,
    "float16": lambda rng, d: randn(rng, 2, 5, 8, scale=0.4, dtype=F16, device=d),
    "bfloat16": lambda rng, d: randn(rng, 2, 5, 8, scale=0.4, dtype=BF16, device=d),
}


@pytest.mark.forbid(*READY_MADE)
@pytest.mark.parametrize("case", list(SIMPLE))
def test_simple_self_attention(student, rng, device, case):
    x = SIMPLE[case](rng, device)
    got = student.call("simple_self_attention", x)
    expected = reference(ref.simple_self_attention, x)
    rtol, atol = tolerance(x.dtype)
    what = f"simple_self_attention(x) [{case}] -> (context, weights)"
    known = simple_misconceptions(x)
    assert_close(got, expected, what, {"x": x}, rtol, atol, misconceptions=known)


# ----------------------------------------------------------------------------- 2. sdpa


def qkv(rng, lead, T, S, d_k, d_v, dtype=F32, d="cpu", scale=1.0):
    return (
        randn(rng, *lead, T, d_k, scale=scale, dtype=dtype, device=d),
        randn(rng, *lead, S, d_k, scale=scale, dtype=dtype, device=d),
        randn(rng, *lead, S, d_v, dtype=dtype, device=d),
    )


def edge_of_range(rng, lead, T, S, d_v, dtype, d, sign=-1.0):
    """d_k = 1 and q k^T ~ sign * 0.5..0.85 * max(dtype): every score near the end of the range,
    rows far from ties. A mask filled with -1e4 / -1e9 is then larger than the kept scores."""
    root = extreme(dtype) ** 0.5
    q = spread(rng, T).reshape(T, 1) * root * sign
    k = spread(rng, S).reshape(S, 1) * root
    v = randn(rng, *lead, S, d_v, dtype=dtype, device=d)
    q, k = q.expand(*lead, T, 1), k.expand(*lead, S, 1)
    return q.to(d, dtype).contiguous(), k.to(d, dtype).contiguous(), v


def product_overflow(rng, lead, T, S, d_v, d, d_k=1024):
    """float16 q, k with d_k = 1024 whose products q·k (|a_t b_s| d_k, 69 000 to 133 000) exceed
    float16's largest value while the scaled scores (a_t b_s √d_k, at most 4 200) fit: rows
    q_t = a_t u and k_s = b_s u for one ±1 vector u, |a_t| in [9, 10), b_s in [7.5, 13), so
    that a row's scaled scores are 50 or more apart (one-hot weights, whatever the rounding)."""
    u = signs(rng, d_k)
    a = (9.0 + spread(rng, T, 0.0, 1.0)) * signs(rng, T)
    b = spread(rng, S, 7.5, 13.0)
    q, k = a[:, None] * u, b[:, None] * u
    v = randn(rng, *lead, S, d_v, dtype=F16, device=d)
    q, k = q.expand(*lead, T, d_k), k.expand(*lead, S, d_k)
    return q.to(d, F16).contiguous(), k.to(d, F16).contiguous(), v


SDPA = {
    "(T, d) 배치 차원 없음, T=S": lambda rng, d: qkv(rng, (), 6, 6, 8, 8, d=d),
    "(B, T, d), T != S, d_k != d_v": lambda rng, d: qkv(rng, (3,), 4, 7, 8, 5, d=d),
    "(B, h, T, d)": lambda rng, d: qkv(rng, (2, 3), 5, 5, 16, 16, d=d),
    "앞쪽 차원 3개, T > S": lambda rng, d: qkv(rng, (2, 2, 2), 6, 3, 4, 6, d=d),
    "T=1 (쿼리 1개)": lambda rng, d: qkv(rng, (2,), 1, 6, 8, 3, d=d),
    "S=1 (키 1개)": lambda rng, d: qkv(rng, (2,), 4, 1, 8, 3, d=d),
    "float64, d_k=64": lambda rng, d: qkv(rng, (2,), 5, 9, 64, 7, dtype=F64, d=d),
    "점수~±40 (포화)": lambda rng, d: qkv(rng, (2,), 5, 6, 16, 4, d=d, scale=3.5),
    "점수~+max(float32), d_k=1": lambda rng, d: edge_of_range(rng, (2,), 4, 6, 3, F32, d, 1.0),
    "점수~-max(float32), d_k=1": lambda rng, d: edge_of_range(rng, (2,), 4, 6, 3, F32, d),
    "float16, T != S": lambda rng, d: qkv(rng, (2, 2), 5, 7, 16, 8, dtype=F16, d=d),
    "bfloat16, d_k != d_v": lambda rng, d: qkv(rng, (2, 2), 5, 5, 16, 4, dtype=BF16, d=d),
    "점수~-max(float16), d_k=1": lambda rng, d: edge_of_range(rng, (2,), 4, 5, 3, F16, d),
    "float16, d_k=1024: q·kᵀ 는 float16 범위 밖, 나눈 점수는 안": lambda rng, d: product_overflow(
        rng, (2,), 4, 5, 3, d
    ),
}


def compare_sdpa(student, case, q, k, v, mask=None, positional=False):
    """Call the student's function (mask as keyword, or as 4th positional argument) and compare
    (output, weights) with the reference."""
    if positional:
        got = student.call("scaled_dot_product_attention", q, k, v, mask)
    else:
        got = student.call("scaled_dot_product_attention", q, k, v, mask=mask)
    expected = reference(ref.scaled_dot_product_attention, q, k, v, mask)
    rtol, atol = tolerance(q.dtype)
    inputs = {"q": q, "k": k, "v": v} | ({} if mask is None else {"mask": mask})
    what = f"scaled_dot_product_attention [{case}] -> (output, weights)"
    known = sdpa_misconceptions(q, k, v, mask)
    assert_close(got, expected, what, inputs, rtol, atol, misconceptions=known)
    return got


@pytest.mark.forbid(*READY_MADE)
@pytest.mark.parametrize("case", list(SDPA))
def test_sdpa(student, rng, device, case):
    q, k, v = SDPA[case](rng, device)
    if "T=S" in case:  # mask=None given explicitly once
        compare_sdpa(student, case, q, k, v, mask=None)
        return
    got = student.call("scaled_dot_product_attention", q, k, v)
    expected = reference(ref.scaled_dot_product_attention, q, k, v)
    rtol, atol = tolerance(q.dtype)
    what = f"scaled_dot_product_attention [{case}] -> (output, weights)"
    inputs, known = {"q": q, "k": k, "v": v}, sdpa_misconceptions(q, k, v)
    assert_close(got, expected, what, inputs, rtol, atol, misconceptions=known)


def keep(rng, *shape, p=0.6, d="cpu"):
    return (torch.rand(shape, generator=rng) < p).to(d)


def causal(T, S, d):
    return torch.ones(T, S, dtype=torch.bool, device=d).tril(S - T)


def padding(lengths, S, d):
    return (torch.arange(S) < torch.tensor(lengths).unsqueeze(-1)).reshape(-1, 1, 1, S).to(d)


def with_blocked_rows(m):
    """Copy of the keep-mask m (..., T, S) with query 1 blocked everywhere, query 0 kept."""
    m = m.clone()
    m[..., 1, :] = False
    m[..., 0, 0] = True
    return m


MASKED = {
    "인과적 마스크 (T, T), (B, h)로 브로드캐스팅": lambda rng, d: (
        *qkv(rng, (2, 3), 5, 5, 8, 8, d=d),
        causal(5, 5, d),
    ),
    "패딩 마스크 (B, 1, 1, S), 길이 0 (모든 키가 막힌 행), T != S, d_k != d_v": lambda rng, d: (
        *qkv(rng, (3, 2), 4, 6, 8, 5, d=d),
        padding([6, 2, 0], 6, d),
    ),
    "(B, h, T, S) 무작위, 모든 키가 막힌 행": lambda rng, d: (
        *qkv(rng, (2, 2), 4, 6, 4, 6, d=d),
        with_blocked_rows(keep(rng, 2, 2, 4, 6, d=d)),
    ),
    "(T, d) 배치 차원 없음, mask (T, S), T != S": lambda rng, d: (
        *qkv(rng, (), 3, 5, 8, 4, d=d),
        causal(3, 5, d),
    ),
    "mask 전부 True": lambda rng, d: (
        *qkv(rng, (2,), 4, 6, 8, 3, d=d),
        torch.ones(4, 6, dtype=torch.bool, device=d),
    ),
    "mask 전부 False": lambda rng, d: (
        *qkv(rng, (2,), 3, 4, 8, 5, d=d),
        torch.zeros(3, 4, dtype=torch.bool, device=d),
    ),
    "float64, 인과적 & 패딩 마스크 (B, 1, T, S)": lambda rng, d: (
        *qkv(rng, (2, 2), 5, 5, 16, 16, dtype=F64, d=d),
        causal(5, 5, d) & padding([5, 3], 5, d),
    ),
    "점수~-max(float32), d_k=1, 모든 키가 막힌 행": lambda rng, d: (
        *edge_of_range(rng, (2,), 4, 6, 3, F32, d),
        with_blocked_rows(keep(rng, 2, 4, 6, d=d)),
    ),
    "점수~-max(float64), d_k=1": lambda rng, d: (
        *edge_of_range(rng, (2,), 4, 6, 3, F64, d),
        keep(rng, 4, 6, p=0.5, d=d) | torch.eye(4, 6, dtype=torch.bool, device=d),
    ),
    "float16, 모든 키가 막힌 행, T != S": lambda rng, d: (
        *qkv(rng, (2, 2), 4, 6, 16, 8, dtype=F16, d=d),
        with_blocked_rows(keep(rng, 2, 1, 4, 6, d=d)),
    ),
    "bfloat16, 인과적 & 패딩 마스크": lambda rng, d: (
        *qkv(rng, (2, 2), 5, 5, 16, 4, dtype=BF16, d=d),
        causal(5, 5, d) & padding([5, 2], 5, d),
    ),
    "점수~-max(float16), d_k=1": lambda rng, d: (
        *edge_of_range(rng, (2,), 4, 5, 3, F16, d),
        with_blocked_rows(keep(rng, 2, 4, 5, d=d)),
    ),
    "점수~-max(bfloat16), d_k=1, T != S": lambda rng, d: (
        *edge_of_range(rng, (2,), 3, 6, 4, BF16, d),
        causal(3, 6, d),
    ),
}


@pytest.mark.forbid(*READY_MADE)
@pytest.mark.parametrize("case", list(MASKED))
def test_sdpa_mask(student, rng, device, case):
    q, k, v, mask = MASKED[case](rng, device)
    _, weights = compare_sdpa(student, case, q, k, v, mask, positional="배치 차원 없음" in case)
    weights = weights.cpu()
    if (weights[~mask.cpu().expand_as(weights)] != 0).any():
        fail(
            f"scaled_dot_product_attention [{case}]: 막힌(mask=False) 위치의 가중치는 정확히 "
            "0 이어야 합니다",
            {"mask": mask},
        )


# ----------------------------------------------------------------------------- 3. v2 -> v1

NAMES = ("W_query", "W_key", "W_value")
CONVERT = {
    "d_in=3, d_out=2": (3, 2, F32),
    "d_in=4, d_out=4 (정사각)": (4, 4, F32),
    "d_in=2, d_out=5": (2, 5, F32),
    "d_in=6, d_out=3, float64": (6, 3, F64),
}


def linear_weights(rng, d_in, d_out, dtype, device):
    """A SelfAttention_v2 state_dict drawn by the judge: {W_*.weight: (d_out, d_in)}."""
    scale = d_in**-0.5
    return {
        f"{n}.weight": randn(rng, d_out, d_in, scale=scale, dtype=dtype, device=device)
        for n in NAMES
    }


@pytest.mark.parametrize("case", list(CONVERT))
def test_v2_to_v1(student, rng, device, case):
    d_in, d_out, dtype = CONVERT[case]
    state = linear_weights(rng, d_in, d_out, dtype, device)
    got = student.call("v2_to_v1_state_dict", state)
    expected = ref.v2_to_v1_state_dict(state)
    what = f"v2_to_v1_state_dict [{case}]"
    if not isinstance(got, dict):
        fail(f"{what}: dict 를 반환해야 하는데 {type(got).__name__} 을(를) 반환했습니다", state)
    if set(got) != set(expected):
        fail(
            f"{what}: 키가 {sorted(expected)} 이어야 하는데 {sorted(got)[:6]} 입니다 "
            "(SelfAttention_v1 의 state_dict 키에는 '.weight' 가 붙지 않습니다)",
            state,
        )
    for name in NAMES:
        known = v2_to_v1_misconceptions(state, name)
        assert_close(got[name], expected[name], f"{what}[{name!r}]", state, misconceptions=known)
    v2 = ref.SelfAttention_v2(d_in, d_out).to(device, dtype)
    v2.load_state_dict(state)
    v1 = ref.SelfAttention_v1(d_in, d_out).to(device, dtype)
    v1.load_state_dict(got)
    x = randn(rng, 2, 5, d_in, dtype=dtype, device=device)
    with torch.no_grad():
        what = f"SelfAttention_v1 (변환한 가중치)(x) vs SelfAttention_v2(x) [{case}]"
        assert_close(v1(x), v2(x), what=what, inputs={"x": x})
