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

from autograder.judge.checking import HALF_TOL, CheckFailed, assert_close, fail, raised, randn
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


# ----------------------------------------------------------------------------- misconceptions
# Known mistakes, and the value each gives on a check's inputs (None where those inputs cannot
# show it): a wrong result that matches one is named in the feedback (checking.diagnose).


def sinusoidal_variant(T, d, base, device, layout="interleaved", two=2):
    """The sin/cos table in float64 with one known mistake: layout "halves" (all sines, then all
    cosines) or "cos first" (cos in the even columns), or two=1 (exponent i/d, not 2i/d)."""
    pos = torch.arange(T, device=device, dtype=F64)
    angles = pos[:, None] * base ** (-two * torch.arange(d // 2, device=device, dtype=F64) / d)
    sin, cos = angles.sin(), angles.cos()
    if layout == "halves":
        return torch.cat((sin, cos), dim=-1)
    pair = (cos, sin) if layout == "cos first" else (sin, cos)
    return torch.stack(pair, dim=-1).flatten(-2)


def sinusoidal_misconceptions(T, d_model, base=10000.0, device=None, dtype=F32):
    def variant(**mistake):
        return sinusoidal_variant(T, d_model, base, device, **mistake).to(dtype)

    return {
        "사인과 코사인을 앞뒤 절반으로 이어 붙였습니다 (cat(sin, cos)): 이 과제의 표는 짝수 열 2i "
        "에 사인, 홀수 열 2i+1 에 코사인을 번갈아 넣습니다 (pe[:, 0::2] = sin, pe[:, 1::2] = "
        "cos)": lambda: variant(layout="halves"),
        "사인과 코사인의 자리가 바뀌었습니다: 짝수 열 2i 가 사인, 홀수 열 2i+1 이 코사인입니다 "
        "(PE[p, 2i] = sin, PE[p, 2i+1] = cos)": lambda: variant(layout="cos first"),
        "주파수의 지수를 i/d_model 로 썼습니다: 짝 i 의 각도는 p / base^(2i/d_model) 이므로 "
        "지수의 분자는 열 번호 2i 입니다": lambda: variant(two=1),
        "base 인자 대신 10000 을 그대로 썼습니다: 각도는 p / base^(2i/d_model) 입니다": lambda: (
            None if base == 10000.0 else ref.sinusoidal_encoding(T, d_model, 1e4, device, F64)
        ),
        "float64 표를 float32 로 계산한 뒤 바꾸었습니다: 위치가 클수록 float32 각도의 오차가 "
        "커집니다. dtype 이 float64 면 위치, 각도, sin/cos 도 float64 로 계산하세요": lambda: (
            ref.sinusoidal_encoding(T, d_model, base, device, F32).to(F64) if dtype == F64 else None
        ),
    }


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
        known = sinusoidal_misconceptions(T, d, device=device, **kwargs)
        assert_close(got, exact.to(dtype), what, inputs, rtol, atol, misconceptions=known)
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
    "T=0 (빈 표)": sinusoidal_values(0, 8),
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


def rope_misconceptions(x, positions=None, base=10000.0, offset=0):
    """Values in float64 (the mistakes in low precision: in that precision), cast to x.dtype."""
    xd, d = x.double(), x.shape[-1]

    def rope(pos=positions, off=offset, **kwargs):
        return ref.apply_rope(xd, pos, base, offset=off, **kwargs).to(x.dtype)

    pos = torch.arange(offset, offset + x.shape[-2], device=x.device)
    pos = pos if positions is None else positions

    def over_heads(angles):  # per-sequence angles (B, T, d/2) broadcast over the heads
        return angles[:, None] if angles.dim() == 3 else angles

    def mixed_pairing():  # interleaved pairs, angles cat(θ, θ)[::2], results in halves
        angles = ref.rope_angles(pos, d, base, F64)
        angles = over_heads(torch.cat((angles, angles), dim=-1)[..., ::2])
        a, b = ref._rotate(xd[..., 0::2], xd[..., 1::2], angles.cos(), angles.sin())
        return torch.cat((a, b), dim=-1).to(x.dtype)

    def low_precision_angles():  # frequencies, angles and rotation all in x.dtype
        angles = pos.to(x.dtype)[..., None] * base ** (
            -torch.arange(0, d, 2, device=x.device, dtype=x.dtype) / d
        )
        angles = over_heads(angles)
        a, b = ref._rotate(x[..., : d // 2], x[..., d // 2 :], angles.cos(), angles.sin())
        return torch.cat((a, b), dim=-1)

    return {
        "인접한 차원 (2i, 2i+1) 을 짝지었습니다 (interleaved 방식): 이 과제는 차원 i 와 i + d/2 를 "
        "짝짓습니다 (half 방식, rotate_half)": lambda: rope(pairing="interleaved"),
        "두 짝짓기 방식을 섞었습니다: 짝수·홀수 차원 (2i, 2i+1) 을 짝짓고(interleaved), 각도는 "
        "half 방식의 표 cat(θ, θ) 에서 [::2] 로 골라 짝에 맞지 않고, 결과는 앞뒤 절반으로 이어 "
        "붙였습니다. half 방식 하나로 쓰세요: 차원 i 와 i + d/2 가 짝이고, 짝 i 의 각도는 p · "
        "base^(-2i/d) 입니다": mixed_pairing,
        "offset 을 쓰지 않았습니다: positions 가 없으면 위치는 offset, offset + 1, ..., offset + T "
        "- 1 입니다 (KV 캐시 뒤의 새 토큰)": lambda: (
            rope(off=0) if positions is None and offset else None
        ),
        "positions 를 주었는데 offset 을 더했습니다: offset 은 positions 가 없을 때 기본 위치를 "
        "정하는 데만 씁니다": lambda: (
            rope(pos=positions + offset) if positions is not None and offset else None
        ),
        "각도(위치 × 주파수)를 float16/bfloat16 으로 계산했습니다: 그 dtype 은 큰 위치를 정확히 "
        "나타내지 못합니다 (float16 에서 2048 을 넘는 정수는 2 의 배수만). 각도와 cos/sin, 회전은 "
        "float32 이상에서 계산하고 결과만 x.dtype 으로 바꾸세요": lambda: (
            low_precision_angles() if x.dtype in HALF else None
        ),
        "float64 입력을 float32 로 계산했습니다: 각도와 회전을 입력의 정밀도(float64)로 "
        "계산하세요": lambda: (
            ref.apply_rope(x.float(), positions, base, offset=offset).double()
            if x.dtype == F64
            else None
        ),
    }


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
    what, known = f"apply_rope [{case}]", rope_misconceptions(x, **kwargs)
    assert_close(got, rope_expected(x, kwargs), what, inputs, rtol, atol, misconceptions=known)
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
        known = rope_misconceptions(x, positions)
        what = f"apply_rope [{case}]"
        assert_close(got, expected, what, None, 1e-5, 1e-5, misconceptions=known)
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
@pytest.mark.spec(builds_on_device=True)  # the notebook: new tensors on the input's device directly
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


def slopes_misconceptions(expected):
    """expected: the reference slopes; the mistakes' values in float64, cast like them."""
    h, like = expected.shape[0], dict(device=expected.device, dtype=expected.dtype)
    n = 2 ** math.floor(math.log2(h))

    def slopes(values):
        return torch.tensor(values, device=expected.device, dtype=F64).to(expected.dtype)

    even = [2.0 ** (-8.0 * k / (2 * n)) for k in range(2, 2 * (h - n) + 1, 2)]
    return {
        "헤드 수가 2의 거듭제곱이 아닌데 2^(-8k/h) 를 그대로 썼습니다: 가장 가까운 작은 2의 "
        "거듭제곱 n 에 대한 n 개의 기울기 다음에, 2n 개짜리 수열의 홀수 번째 지수 "
        "(2^(-8k/(2n)), k = 1, 3, 5, ...) 에서 남은 h - n 개를 가져옵니다": lambda: (
            None if n == h else slopes([2.0 ** (-8.0 * k / h) for k in range(1, h + 1)])
        ),
        "남은 헤드의 기울기를 2n 개짜리 수열의 짝수 번째 지수(k = 2, 4, ...)에서 가져왔습니다: "
        "앞의 n 개와 겹칩니다. 홀수 번째 지수 k = 1, 3, 5, ... 를 쓰세요": lambda: (
            None if n == h else torch.cat((ref.alibi_slopes(n, **like), slopes(even)))
        ),
        "기울기를 오름차순으로 정렬했습니다: 첫 헤드가 가장 큰 기울기 2^(-8/n) 를 갖도록 공식의 "
        "순서를 그대로 두세요": lambda: expected.sort().values,
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
    assert_close(got, expected, what, inputs, misconceptions=slopes_misconceptions(expected))


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


def bias_misconceptions(num_heads, T, S=None, device=None, dtype=F32):
    S = T if S is None else S
    slopes = ref.alibi_slopes(num_heads, device=device, dtype=F64)[:, None, None]

    def bias(first_query, clamp=True):  # -slope * (query position - key position)
        q = torch.arange(first_query, first_query + T, device=device)[:, None]
        distance = q - torch.arange(S, device=device)[None, :]
        return (-slopes * (distance.clamp_min(0) if clamp else distance)).to(dtype)

    return {
        "부호가 반대입니다: ALiBi 편향은 -기울기 × 거리 로, 먼 키일수록 점수를 깎습니다": lambda: (
            -ref.alibi_bias(num_heads, T, S, device=device, dtype=F64)
        ).to(dtype),
        "쿼리 위치를 0 .. T-1 로 두었습니다: S > T 이면 쿼리는 캐시 뒤의 마지막 T 개 위치(S - T "
        ".. S - 1)에 있습니다": lambda: None if S == T else bias(0),
        "쿼리 뒤에 오는(미래) 키의 거리를 음수 그대로 두어 편향이 양수가 되었습니다: 거리는 "
        "clamp_min(0) 으로 0 이상으로 만드세요 (미래 키는 인과 마스크가 따로 막습니다)": lambda: (
            bias(S - T, clamp=False)
        ),
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
    known = bias_misconceptions(h, T, S, device, dtype)
    assert_close(got, expected, what, inputs, tol[0], tol[1], misconceptions=known)


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


def t5_variant(rel, bidirectional=True, num_buckets=32, max_distance=128, **mistake):
    """The reference bucket rule with one known mistake: after (which keys get the offset),
    causal_abs (|rel| as the causal distance), clamp=False (no last bucket beyond max_distance),
    max_exact (a fixed number of exact buckets)."""
    buckets = torch.zeros_like(rel)
    if bidirectional:
        num_buckets //= 2
        buckets = mistake.get("after", lambda r: r > 0)(rel).long() * num_buckets
        n = rel.abs()
    else:
        n = rel.abs() if mistake.get("causal_abs") else (-rel).clamp_min(0)
    exact = mistake.get("max_exact", num_buckets // 2)
    scaled = torch.log(n.clamp_min(exact).float() / exact) / math.log(max_distance / exact)
    large = exact + (scaled * (num_buckets - exact)).long()
    large = large.clamp_max(num_buckets - 1) if mistake.get("clamp", True) else large
    return buckets + torch.where(n < exact, n, large)


def t5_misconceptions(rel, bidirectional=True, num_buckets=32, max_distance=128):
    args = (rel, bidirectional, num_buckets, max_distance)
    half = num_buckets // 2 if bidirectional else num_buckets

    def log_from_zero():
        n = rel.abs() if bidirectional else (-rel).clamp_min(0)
        ratio = torch.log2(n.float() + 1) / math.log2(max_distance)
        offset = (rel > 0).long() * half if bidirectional else 0
        return offset + (ratio * half).long().clamp_max(half - 1)

    return {
        "양방향에서 오프셋(num_buckets // 2)을 쿼리보다 앞선 키(relative_position < 0)에 "
        "더했습니다: 오프셋은 쿼리 뒤의 키(relative_position > 0)에 더합니다": lambda: (
            ref.t5_relative_position_bucket(-rel, True, num_buckets, max_distance)
            if bidirectional
            else None
        ),
        "상대 위치 0 (쿼리 자신)에도 오프셋을 더했습니다: 오프셋은 relative_position > 0 인 키에만 "
        "더합니다": lambda: t5_variant(*args, after=lambda r: r >= 0) if bidirectional else None,
        "인과적(bidirectional=False)인데 거리로 |relative_position| 을 썼습니다: 쿼리 뒤의 "
        "키(relative_position > 0)는 모두 버킷 0 이므로 거리는 (-relative_position).clamp_min(0) "
        "입니다": lambda: None if bidirectional else t5_variant(*args, causal_abs=True),
        "max_distance 를 넘는 거리를 마지막 버킷으로 묶지 않았습니다: 로그 간격 버킷 번호에 "
        "clamp_max(num_buckets - 1) 을 적용하세요 (양방향이면 절반의 num_buckets)": lambda: (
            t5_variant(*args, clamp=False)
        ),
        "정확한 버킷 수 max_exact 를 8 로 고정했습니다: max_exact 는 (양방향이면 절반으로 나눈) "
        "num_buckets 의 절반, num_buckets // 2 입니다": lambda: (
            None if half // 2 == 8 else t5_variant(*args, max_exact=8)
        ),
        "작은 거리까지 로그 간격으로 나누었습니다: 거리 0 .. max_exact - 1 은 버킷을 하나씩 "
        "갖고(max_exact = num_buckets // 2), 그보다 먼 거리만 max_distance 까지 로그 간격으로 "
        "나눕니다": log_from_zero,
        "num_buckets 를 2 로 나눌 때 반올림했습니다: 홀수 num_buckets 에서도 정수 나눗셈 "
        "num_buckets // 2 를 씁니다": lambda: (
            ref.t5_relative_position_bucket(rel, True, num_buckets + 1, max_distance)
            if bidirectional and num_buckets % 2
            else None
        ),
    }


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
    rule = (bidirectional, nb, md)
    got = accept_boundary(got, expected, rel, *rule)
    what = f"t5_relative_position_bucket [{case}]"
    known = {  # each mistake's buckets judged as the result is (boundary buckets accepted)
        diagnosis: lambda value=value: (
            None if (v := value()) is None else accept_boundary(v, expected, rel, *rule)
        )
        for diagnosis, value in t5_misconceptions(rel, **kwargs).items()
    }
    assert_close(got, expected, what, {"relative_position": rel, **kwargs}, misconceptions=known)
