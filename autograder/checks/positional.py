"""Hidden checks for assignment ``positional`` (chapter 5: 위치 인코딩).

- ``sinusoidal_encoding``: several T, d_model, base, dtypes (float16 beyond 2048 positions,
  bfloat16 beyond 256), device argument, the chapter's worked values at d_model = 512, and a
  ValueError for odd d_model.
- ``apply_rope`` (half pairing: dim i with dim i + d/2): relative-position property (shifting
  query and key positions alike keeps every q.k), preserved norms, the pairing convention on unit
  vectors, then values for default/explicit/(B, T) positions, offset, base, float16/bfloat16/
  float64 inputs.
- ``alibi_slopes``: powers of two and not (6, 12, 20, ... heads) against the official rule.
- ``alibi_bias``: shape (h, T, S), sign, zero for future keys, the cache offset when S > T.
- ``t5_relative_position_bucket``: Hugging Face/T5 semantics, bidirectional and causal, distances
  far beyond max_distance, odd num_buckets; exact, except that at distances whose log-bucket
  value is mathematically an integer, a bucket one lower (float rounding) is accepted too.

Expected values come from ``solutions.positional`` (trigonometry in float64, then cast).
"""

import math

import pytest
import torch

from autograder.checking import HALF_TOL, CheckFailed, assert_close, fail, raised, randn
from solutions import positional as ref

F32, F64, F16, BF16 = torch.float32, torch.float64, torch.float16, torch.bfloat16
HALF = (F16, BF16)


def angle_tol(dtype, max_pos, scale=1.0):
    """(rtol, atol) for trigonometry of angles up to max_pos computed in float32 (or float64):
    the angle itself carries an error of about max_pos * 2e-7 in float32."""
    if dtype == F64:
        return 1e-7, 1e-9 * scale
    slack = 4e-7 * max_pos * scale
    if dtype in HALF:
        r, a = HALF_TOL[dtype]
        return r, a * scale + slack
    return 1.3e-6, 1e-5 * scale + slack


# ----------------------------------------------------------------------------- sinusoidal


def sinusoidal_values(T, d, **kwargs):
    """A values case: sinusoidal_encoding(T, d, device=device, **kwargs) against float64 values."""

    def run(student, device, case):
        dtype = kwargs.get("dtype", F32)
        got = student.call("sinusoidal_encoding", T, d, device=device, **kwargs)
        exact = ref.sinusoidal_encoding(T, d, kwargs.get("base", 10000.0), device, F64)
        what = f"sinusoidal_encoding({T}, {d}) [{case}]"
        rtol, atol = angle_tol(dtype, T)
        inputs = {"T": T, "d_model": d, **kwargs}
        assert_close(got, exact.to(dtype), what=what, inputs=inputs, rtol=rtol, atol=atol)
        return got

    return run


def sinusoidal_worked(student, device, case):
    """d_model = 512: PE(1, 2) = sin(10000^(-2/512)) = 0.8219, PE(1, 3) = 0.5697."""
    got = sinusoidal_values(4, 512)(student, device, case)
    worked = torch.tensor([0.8415, 0.5403, 0.8219, 0.5697], device=device)
    what = f"sinusoidal_encoding(4, 512) [{case}] PE[1, :4]"
    assert_close(got[1, :4], worked, what=what, atol=5e-5)


def sinusoidal_defaults(student, device, case):
    """device=None, dtype=None: torch.get_default_dtype() on the CPU."""
    got = student.call("sinusoidal_encoding", 6, 10)
    assert_close(got, ref.sinusoidal_encoding(6, 10), what=f"sinusoidal_encoding(6, 10) [{case}]")


def sinusoidal_default_float64(student, device, case):
    """dtype=None follows torch.get_default_dtype(), here float64 (set by the notebook)."""
    with student.default_dtype(F64):
        got = student.call("sinusoidal_encoding", 6, 10, device=device)
        expected = ref.sinusoidal_encoding(6, 10, device=device)
    what = f"sinusoidal_encoding(6, 10) [{case}]"
    assert_close(got, expected, what=what, inputs={"T": 6, "d_model": 10, "dtype": None})


def sinusoidal_odd(student, device, case):
    if not raised(student, "ValueError", "sinusoidal_encoding", 4, 7, device=device):
        fail("sinusoidal_encoding(4, 7): d_model이 홀수이면 ValueError를 일으켜야 합니다")


# label -> check(student, device, case); the label says what makes the case hard
SINUSOIDAL = {
    "T=7, d_model=16": sinusoidal_values(7, 16),
    "d_model=512, 본문에서 계산한 값": sinusoidal_worked,
    "d_model=2": sinusoidal_values(5, 2),
    "T=1": sinusoidal_values(1, 8),
    "base=100": sinusoidal_values(20, 12, base=100.0),
    "device=None, dtype=None": sinusoidal_defaults,
    "홀수 d_model -> ValueError": sinusoidal_odd,
    "float64, T=500": sinusoidal_values(500, 64, dtype=F64),
    "float16, T=3000 (위치 > 2048)": sinusoidal_values(3000, 32, dtype=F16),
    "bfloat16, T=600 (위치 > 256)": sinusoidal_values(600, 16, dtype=BF16),
    "T=300, d_model=128": sinusoidal_values(300, 128),
    "torch.set_default_dtype(torch.float64)에서 dtype=None": sinusoidal_default_float64,
}


@pytest.mark.spec(builds_on_device=True)  # the notebook: made on `device` directly
@pytest.mark.parametrize("case", list(SINUSOIDAL))
def test_sinusoidal_encoding(student, device, case):
    SINUSOIDAL[case](student, device, case)


# ----------------------------------------------------------------------------- RoPE

ROPE_FORBID = ("apply_rotary_pos_emb", "RotaryEmbedding", "RotaryPositionalEmbeddings")


def rope_expected(x, kwargs):
    """Reference in float64 (half pairing), cast back to x.dtype."""
    return ref.apply_rope(x.double(), **kwargs).to(x.dtype)


def rope_compare(student, x, kwargs, case):
    got = student.call("apply_rope", x, **kwargs)
    positions = kwargs.get("positions")
    T = x.shape[-2]
    max_pos = int(positions.abs().max()) if positions is not None else kwargs.get("offset", 0) + T
    scale = float(x.abs().max())
    rtol, atol = angle_tol(x.dtype, max_pos, scale)
    inputs = {"x": x, **kwargs}
    what = f"apply_rope [{case}]"
    assert_close(got, rope_expected(x, kwargs), what=what, inputs=inputs, rtol=rtol, atol=atol)
    return got


def rope_values(shape, dtype=F32, pos=None, **kwargs):
    """A values case: x of ``shape``; pos(rng, device) -> positions tensor (or None)."""

    def run(student, rng, device, case):
        x = randn(rng, *shape, dtype=dtype, device=device)
        kw = dict(kwargs)
        if pos is not None:
            kw["positions"] = pos(rng, device)
        rope_compare(student, x, kw, case)

    return run


def rope_relative(student, rng, device, case):
    """<rope(q, m), rope(k, n)> must not change when m and n move by the same s."""
    q = randn(rng, 1, 2, 6, 16, dtype=F64, device=device)
    k = randn(rng, 1, 2, 6, 16, dtype=F64, device=device)
    m = torch.randint(0, 40, (6,), generator=rng).to(device)
    n = torch.randint(0, 40, (6,), generator=rng).to(device)

    def scores(s):
        qr = student.call("apply_rope", q, positions=m + s)
        kr = student.call("apply_rope", k, positions=n + s)
        if type(qr) is not torch.Tensor or qr.shape != q.shape or kr.shape != k.shape:
            fail(f"apply_rope [{case}]: 입력과 같은 모양 {tuple(q.shape)}의 텐서를 돌려주세요")
        return (qr.double() * kr.double()).sum(-1)  # (1, h, T): one score per pair (m_t, n_t)

    base = scores(0)
    for s in (1, 17, 500):
        got = scores(s)
        if not torch.allclose(got.cpu(), base.cpu(), rtol=1e-3, atol=1e-2):
            fail(
                f"apply_rope: 쿼리 위치 m과 키 위치 n을 똑같이 {s}만큼 옮겼더니 점수 "
                "<rope(q, m), rope(k, n)>이 달라졌습니다. RoPE 점수는 상대 위치 m - n에만 "
                "의존해야 합니다 (위치 벡터를 더하지 말고, 짝마다 위치에 비례하는 각도로 "
                "회전시키세요)",
                {"m": m, "n": n, "점수(s=0)": base, f"점수(s={s})": got},
            )


def rope_norms(student, rng, device, case):
    """Rotations keep the length of every (query or key) vector."""
    x = randn(rng, 2, 3, 9, 12, dtype=F64, device=device)
    got = student.call("apply_rope", x, offset=4)
    if type(got) is not torch.Tensor or got.shape != x.shape:
        fail(f"apply_rope [{case}]: 입력과 같은 모양 {tuple(x.shape)}의 텐서를 돌려주세요")
    norm_in, norm_out = x.norm(dim=-1).cpu(), got.double().norm(dim=-1).cpu()
    if not torch.allclose(norm_out, norm_in, rtol=1e-5, atol=1e-6):
        fail(
            "apply_rope: 회전은 벡터의 길이(노름)를 바꾸지 않아야 하는데 바뀌었습니다",
            {"x": x, "입력 노름": norm_in, "결과 노름": norm_out},
        )


def rope_pairing(student, rng, device, case):
    """Unit vector e_i at position p: half pairing puts cos(p w_i) at i, sin(p w_i) at i + d/2."""
    d = 8
    x = torch.eye(d, dtype=F64, device=device).expand(1, 1, d, d)  # row t = e_t at position 3
    positions = torch.full((d,), 3, device=device)
    got = student.call("apply_rope", x, positions=positions)
    expected = ref.apply_rope(x, positions)
    try:
        assert_close(got, expected, what=f"apply_rope [{case}]", rtol=1e-5, atol=1e-5)
    except CheckFailed as e:
        raise CheckFailed(
            "apply_rope: 짝짓기(pairing)가 과제의 규칙과 다릅니다. 차원 i와 i + d/2가 한 짝이고 "
            "(half 방식, GPT-NeoX / Hugging Face rotate_half), 짝 i는 위치 p에서 "
            "p * base^(-2i/d)만큼 회전합니다. 단위 벡터 e_i를 위치 3에 놓고 회전한 결과:\n" + str(e)
        ) from None


def per_batch_positions(rng, device):
    start = torch.randint(0, 50, (2, 1), generator=rng)
    return (start + torch.arange(5)).to(device)  # (B=2, T=5)


def shuffled_positions(rng, device):
    return torch.randperm(64, generator=rng)[:6].to(device)


ROPE = {
    "상대 위치: m과 n을 똑같이 이동": rope_relative,
    "노름 보존": rope_norms,
    "짝짓기 규칙 (단위 벡터)": rope_pairing,
    "기본 위치 (2, 3, 7, 16)": rope_values((2, 3, 7, 16)),
    "positions (T,) = 5..10, float64": rope_values(
        (1, 2, 6, 8), F64, lambda rng, d: torch.arange(5, 11, device=d)
    ),
    "positions (B, T) 시퀀스마다 다름, B=2, h=3": rope_values(
        (2, 3, 5, 8), pos=per_batch_positions
    ),
    "positions 무작위 순서": rope_values((1, 2, 6, 8), pos=shuffled_positions),
    "offset=9 (KV 캐시)": rope_values((2, 2, 3, 8), F64, offset=9),
    "positions와 offset=7을 함께 줌: offset은 무시": rope_values(
        (1, 2, 5, 8), F64, lambda rng, d: torch.arange(3, 8, device=d), offset=7
    ),
    "offset=200, T=1": rope_values((3, 4, 1, 32), F64, offset=200),
    "d_head=2": rope_values((2, 1, 5, 2)),
    "base=500": rope_values((1, 2, 7, 16), base=500.0),
    "float64, offset=400": rope_values((1, 2, 8, 64), F64, offset=400),
    "float16, 위치 3000.. (> 2048)": rope_values((1, 2, 8, 16), F16, offset=3000),
    "bfloat16, 위치 1000.. (> 256)": rope_values((2, 2, 8, 16), BF16, offset=1000),
}


@pytest.mark.forbid(*ROPE_FORBID)
@pytest.mark.parametrize("case", list(ROPE))
def test_apply_rope(student, rng, device, case):
    ROPE[case](student, rng, device, case)


# ----------------------------------------------------------------------------- ALiBi

ALIBI_FORBID = ("build_alibi_tensor", "get_alibi_slopes", "_get_alibi_slopes")

# label -> (num_heads, dtype); the label says what makes it hard
SLOPES = {
    "헤드 8개 (1/2 .. 1/256)": (8, F32),
    "헤드 1개": (1, F32),
    "헤드 2개": (2, F32),
    "헤드 16개": (16, F32),
    "헤드 6개 (2의 거듭제곱 아님)": (6, F32),
    "헤드 12개": (12, F32),
    "헤드 20개": (20, F32),
    "헤드 3개": (3, F32),
    "헤드 40개": (40, F32),
    "float64, 헤드 12개": (12, F64),
    "헤드 96개": (96, F32),
    "float16, 헤드 24개": (24, F16),
    "device=None, dtype=None, 헤드 5개": (5, None),
    "torch.set_default_dtype(torch.float64)에서 dtype=None, 헤드 6개": (6, "default float64"),
}


@pytest.mark.forbid(*ALIBI_FORBID)
@pytest.mark.spec(builds_on_device=True)  # the notebook: made on `device` directly
@pytest.mark.parametrize("case", list(SLOPES))
def test_alibi_slopes(student, device, case):
    h, dtype = SLOPES[case]
    if dtype is None:  # the default dtype on the CPU
        got, expected = student.call("alibi_slopes", h), ref.alibi_slopes(h)
    elif dtype == "default float64":  # dtype=None follows torch.get_default_dtype()
        with student.default_dtype(F64):
            got = student.call("alibi_slopes", h, device=device)
            expected = ref.alibi_slopes(h, device=device)
    else:
        kwargs = {"dtype": dtype} if dtype != F32 else {}
        got = student.call("alibi_slopes", h, device=device, **kwargs)
        expected = ref.alibi_slopes(h, device=device, dtype=F64).to(dtype)
    what = f"alibi_slopes({h}) [{case}]"
    inputs = {"num_heads": h, "dtype": dtype}
    if dtype == "default float64":
        inputs = {"num_heads": h, "dtype": None}
    assert_close(got, expected, what=what, inputs=inputs)


# label -> (num_heads, T, S, dtype)
BIAS = {
    "헤드 8개, T=S=5": (8, 5, 5, F32),
    "S=None (S = T)": (4, 6, None, F32),
    "헤드 6개 (2의 거듭제곱 아님)": (6, 4, 4, F32),
    "헤드 12개, T=4, S=9 (캐시)": (12, 4, 9, F32),
    "헤드 20개, T=1, S=16 (새 토큰 1개)": (20, 1, 16, F32),
    "float64, 헤드 6개, T=2, S=5": (6, 2, 5, F64),
    "헤드 1개, T=3, S=7": (1, 3, 7, F32),
    "float16, S=600": (2, 3, 600, F16),
    "bfloat16, 헤드 5개": (5, 6, 6, BF16),
}


@pytest.mark.given(alibi_slopes=ref.alibi_slopes)
@pytest.mark.forbid(*ALIBI_FORBID)
@pytest.mark.spec(builds_on_device=True)  # the notebook: made on `device` directly
@pytest.mark.parametrize("case", list(BIAS))
def test_alibi_bias(student, device, case):
    h, T, S, dtype = BIAS[case]
    kwargs = {"dtype": dtype} if dtype != F32 else {}
    got = student.call("alibi_bias", h, T, S, device=device, **kwargs)
    expected = ref.alibi_bias(h, T, S, device=device, dtype=F64).to(dtype)
    tol = HALF_TOL[dtype] if dtype in HALF else (None, None)
    what = f"alibi_bias({h}, {T}, {S}) [{case}]"
    inputs = {"num_heads": h, "T": T, "S": S, "dtype": dtype}
    assert_close(got, expected, what=what, inputs=inputs, rtol=tol[0], atol=tol[1])


# ----------------------------------------------------------------------------- T5 buckets

T5_FORBID = ("_relative_position_bucket", "T5Attention", "relative_position_bucket")


def exact_log_bucket(n, num_buckets, max_distance):
    """The log-spaced bucket value in float64 before rounding down (for distances n >= 1)."""
    max_exact = num_buckets // 2
    n = n.double().clamp_min(max_exact)
    return max_exact + torch.log(n / max_exact) / math.log(max_distance / max_exact) * (
        num_buckets - max_exact
    )


def accept_boundary(got, expected, rel, bidirectional, num_buckets, max_distance):
    """Where the exact log value is an integer, a bucket one lower (float rounding) is also right:
    replace such entries of ``got`` by the reference before comparing exactly."""
    if type(got) is not torch.Tensor or got.shape != expected.shape or got.dtype != torch.long:
        return got
    half = num_buckets // 2 if bidirectional else num_buckets
    n = rel.abs() if bidirectional else (-rel).clamp_min(0)
    value = exact_log_bucket(n.cpu(), half, max_distance)
    inside = (n.cpu() > half // 2) & (value < half - 0.5)  # log-spaced, below the last bucket
    boundary = ((value - value.round()).abs() < 1e-6) & inside
    ok = boundary & ((got.cpu() == expected.cpu()) | (got.cpu() == expected.cpu() - 1))
    return torch.where(ok.to(got.device), expected.to(got.device), got)


def distances(lo, hi):
    return lambda rng, d: torch.arange(lo, hi, device=d)


def random_far(rng, d):
    return torch.randint(-100_000, 100_000, (4, 50), generator=rng).to(d)


def query_key_matrix(rng, d):
    """(T, S) matrix key - query for 6 queries at the end of 40 keys (a cache)."""
    q = torch.arange(34, 40)[:, None]
    k = torch.arange(40)[None, :]
    return (k - q).to(d)


# label -> (relative positions from (rng, device), kwargs)
T5 = {
    "양방향, -300..300": (distances(-300, 301), {}),
    "인과적, -300..300": (distances(-300, 301), {"bidirectional": False}),
    "거리 최대 10^5 (max_distance 초과)": (random_far, {}),
    "인과적, 거리 최대 10^5": (random_far, {"bidirectional": False}),
    "(T, S) 키 - 쿼리, 캐시 있음": (query_key_matrix, {}),
    "(T, S), 인과적": (query_key_matrix, {"bidirectional": False}),
    "num_buckets=64, max_distance=256": (
        distances(-600, 601),
        {"num_buckets": 64, "max_distance": 256},
    ),
    "num_buckets=8, max_distance=16, 인과적": (
        distances(-40, 41),
        {"bidirectional": False, "num_buckets": 8, "max_distance": 16},
    ),
    "홀수 num_buckets=33": (distances(-200, 201), {"num_buckets": 33}),
    "홀수 num_buckets=31, 인과적": (
        distances(-200, 201),
        {"bidirectional": False, "num_buckets": 31},
    ),
    "num_buckets=16, max_distance=50": (
        distances(-120, 121),
        {"num_buckets": 16, "max_distance": 50},
    ),
}


@pytest.mark.forbid(*T5_FORBID)
@pytest.mark.parametrize("case", list(T5))
def test_t5_relative_position_bucket(student, rng, device, case):
    make, kwargs = T5[case]
    rel = make(rng, device)
    expected = ref.t5_relative_position_bucket(rel, **kwargs)
    got = student.call("t5_relative_position_bucket", rel, **kwargs)
    bidirectional = kwargs.get("bidirectional", True)
    nb, md = kwargs.get("num_buckets", 32), kwargs.get("max_distance", 128)
    got = accept_boundary(got, expected, rel, bidirectional, nb, md)
    what = f"t5_relative_position_bucket [{case}]"
    assert_close(got, expected, what=what, inputs={"relative_position": rel, **kwargs})
