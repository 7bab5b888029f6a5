"""Hidden checks for assignment ``normalization`` (chapter 6: 정규화와 트랜스포머 블록).

Every check builds the student's nn.Module, loads the judge's random weights into it (strict
load_state_dict, after reporting missing, extra or misshapen names) and compares it with the
same module of ``solutions.normalization`` holding the same weights: outputs, and gradients of
sum(output) w.r.t. the input and every parameter.

- LayerNorm: one or two trailing dims, 1-d to 4-d inputs, float64, float16 with |x| ~ 1000
  (x^2 overflows float16), bfloat16 (parameters stay float32: compute in float32, return the
  input dtype), a common offset of 1e4 (E[x^2] - E[x]^2 cancels in float32), variance below eps,
  constant rows, elementwise_affine=False.
- RMSNorm: the same kinds of inputs, eps given and eps=None (finfo of the computation dtype,
  float32 for half inputs), inputs with a nonzero mean, zero rows.
- FeedForward and TransformerBlock (pre-norm and post-norm, with the notebook's given
  MultiHeadAttention; masks (T, T) and (B, 1, 1, T)): eval outputs and gradients, eval() without
  dropout, and train() outputs compared exactly under the seed the reference uses (dropout masks
  drawn by the named nn.Dropout modules in the order of the notebook).
Ready-made normalization functions and Transformer layers may not be used in the solution cells.
"""

import contextlib
import math

import pytest
import torch
import torch.nn as nn

from autograder.judge.checking import HALF_TOL, assert_close, fail, randn, seeded
from solutions import normalization as ref

F32, F64, F16, BF16 = torch.float32, torch.float64, torch.float16, torch.bfloat16
NORM_SHORTCUTS = (
    "LayerNorm",
    "layer_norm",
    "native_layer_norm",
    "RMSNorm",
    "rms_norm",
    "GroupNorm",
    "group_norm",
)
BLOCK_SHORTCUTS = ("TransformerEncoderLayer", "TransformerDecoderLayer", "MultiheadAttention")
TOL = (1e-4, 1e-5)  # float32 modules whose inner sums may run in another order


# ----------------------------------------------------------------------------- shared helpers


def judge_state(module, rng, device):
    """Random values for every parameter of ``module`` (not its init), as a state_dict:
    Linear weights and biases U(-1/sqrt(fan_in), 1/sqrt(fan_in)), norm weights 1 + 0.5 N(0, 1),
    norm biases 0.5 N(0, 1)."""
    state = {}
    for prefix, m in module.named_modules():
        for pname, p in m.named_parameters(recurse=False):
            if isinstance(m, nn.Linear):
                bound = 1.0 / math.sqrt(m.in_features)
                v = (torch.rand(p.shape, generator=rng, dtype=F64) * 2 - 1) * bound
            elif pname == "weight":
                v = 1.0 + 0.5 * torch.randn(p.shape, generator=rng, dtype=F64)
            else:
                v = 0.5 * torch.randn(p.shape, generator=rng, dtype=F64)
            state[f"{prefix}.{pname}" if prefix else pname] = v.to(device, F32)
    return state


def check_names(student, name, kwargs, state, hint, probe):
    """The student's state_dict right after __init__ must have exactly the judge's names and
    shapes (the naming contract of the notebook). ``probe``: a small input for one forward."""
    own = student.module(name, kwargs, inputs=(probe,))["state"]
    missing = [k for k in state if k not in own]
    extra = [k for k in own if k not in state]
    call = f"{name}({', '.join(f'{k}={v!r}' for k, v in kwargs.items())})"
    if missing or extra:
        parts = []
        if missing:
            parts.append("없는 이름: " + ", ".join(missing[:6]))
        if extra:
            parts.append("있으면 안 되는 이름: " + ", ".join(extra[:6]))
        fail(
            f"{call}: state_dict 의 이름이 약속과 다릅니다 ({'; '.join(parts)}). {hint} "
            f"(여러분 모듈의 이름: {sorted(own)[:10]})"
        )
    for k, v in state.items():
        got = own[k]
        if isinstance(got, torch.Tensor) and tuple(got.shape) != tuple(v.shape):
            fail(
                f"{call}: {k} 의 모양이 {tuple(v.shape)} 이어야 하는데 {tuple(got.shape)} 입니다. "
                + hint
            )


def compare(
    student,
    name,
    kwargs,
    reference,
    state,
    x,
    *,
    what,
    tol=TOL,
    grad_tol=None,
    mask=None,
    train=False,
    seed=None,
    grad=True,
):
    """Run the student's module and ``reference`` (same weights) on x (and mask); compare the
    outputs and, with grad=True, the gradients of sum(output.float()) w.r.t. x and each
    parameter."""
    reference = reference.to(x.device)
    reference.load_state_dict(state)
    reference.train(train)
    reference.zero_grad(set_to_none=True)
    leaf = x.detach().clone().requires_grad_(grad)
    input_kwargs = {} if mask is None else {"mask": mask}
    same_seed = seeded(seed, x.device) if seed is not None else contextlib.nullcontext()
    with same_seed, torch.set_grad_enabled(grad):
        expected = reference(leaf, **input_kwargs)
    if grad:
        expected.float().sum().backward()
    out = student.module(
        name,
        kwargs,
        state_dict=state,
        inputs=(x,),
        input_kwargs=input_kwargs,
        train=train,
        grad=grad,
        forward_seed=seed,
    )
    inputs = {"x": x} if mask is None else {"x": x, "mask": mask}
    rtol, atol = tol
    known = None if train else MISCONCEPTIONS[name](reference, x, mask)
    assert_close(out["output"], expected.detach(), what, inputs, rtol, atol, misconceptions=known)
    if not grad:
        return
    rtol, atol = grad_tol or tol
    want = {"input0": leaf.grad, **{n: p.grad for n, p in reference.named_parameters()}}
    for key, g in want.items():
        label = "입력 x" if key == "input0" else key
        where = f"{what} 의 그래디언트(gradient) d(sum(output))/d({label})"
        if key not in out["grads"]:
            fail(f"{where}: 그래디언트가 없습니다 (계산 그래프가 끊겼거나 파라미터를 안 썼습니다)")
        assert_close(out["grads"][key], g, what=where, inputs=inputs, rtol=rtol, atol=atol)


def half_tol(dtype):
    return HALF_TOL.get(dtype, TOL)


# ----------------------------------------------------------------------------- misconceptions
# Known mistakes, and the value each gives on a check's inputs (None where those inputs cannot
# show it): a wrong result that matches one is named in the feedback (checking.diagnose). The
# values come from the reference module m holding the judge's weights, in eval mode.


def trailing(m, last_only=False):
    return (-1,) if last_only else tuple(range(-len(m.normalized_shape), 0))


@torch.no_grad()
def layer_norm_variant(m, x, mistake):
    """LayerNorm m's forward with one known mistake: "unbiased" (variance / (n - 1)), "one pass"
    (E[x^2] - E[x]^2), "eps outside" ((x - mean) / (std + eps)), "last dim" (statistics over
    the last dim only), "no upcast" (computed in x.dtype), "float32" (computed in float32)."""
    dims = trailing(m, mistake == "last dim")
    h = x if mistake == "no upcast" else x.float() if mistake == "float32" else ref._work(x)
    mean = h.mean(dim=dims, keepdim=True)
    centered = h - mean
    if mistake == "unbiased":
        var = h.var(dim=dims, keepdim=True)
    elif mistake == "one pass":
        var = (h * h).mean(dim=dims, keepdim=True) - mean * mean
    else:
        var = centered.pow(2).mean(dim=dims, keepdim=True)
    if mistake == "eps outside":
        y = centered / (var.sqrt() + m.eps)
    else:
        y = centered / torch.sqrt(var + m.eps)
    if m.weight is not None:
        y = y * m.weight + m.bias
    return y.to(x.dtype)


def layer_norm_misconceptions(m, x, mask=None):
    def variant(mistake):
        return lambda: layer_norm_variant(m, x, mistake)

    half, several = x.dtype in (F16, BF16), len(m.normalized_shape) > 1
    return {
        "분산을 n - 1 로 나누었습니다 (torch.var 의 기본값 unbiased=True): 층 정규화는 n 으로 "
        "나눈 분산을 씁니다 (unbiased=False 또는 ((x - mean)²).mean())": variant("unbiased"),
        "분산을 E[x²] - E[x]² 로 계산했습니다: 평균이 크면 두 큰 수의 차에서 유효 숫자가 "
        "사라집니다. 평균을 뺀 뒤 제곱의 평균 ((x - mean)²).mean() 으로 계산하세요": variant(
            "one pass"
        ),
        "eps 를 표준편차에 더했습니다 ((x - mean) / (std + eps)): eps 는 제곱근 안에서 분산에 "
        "더합니다 ((x - mean) / sqrt(var + eps))": variant("eps outside"),
        "평균과 분산을 마지막 차원에서만 구했습니다: normalized_shape 의 모든 차원(뒤쪽 "
        "len(normalized_shape) 개)에 걸쳐 구하세요": (
            variant("last dim") if several else lambda: None
        ),
        "float16/bfloat16 입력을 그 dtype 그대로 계산했습니다: |x| 가 크면 제곱이 float16 의 "
        "최댓값(65504)을 넘어 inf 가 됩니다. 평균과 분산은 float32 로 올려 계산하고 결과만 "
        "x.dtype 으로 바꾸세요": variant("no upcast") if half else lambda: None,
        "float64 입력을 float32 로 계산했습니다 (x.float()): float32 로 올리는 것은 float16/"
        "bfloat16 입력뿐이고, float64 는 float64 그대로 계산하세요": (
            variant("float32") if x.dtype == F64 else lambda: None
        ),
    }


@torch.no_grad()
def rms_norm_variant(m, x, eps=None, center=False, last_only=False):
    """RMSNorm m's forward with one known mistake: eps (used for eps=None), center (the mean
    subtracted first), last_only (statistics over the last dim only)."""
    dims, h = trailing(m, last_only), ref._work(x)
    h = h - h.mean(dim=dims, keepdim=True) if center else h
    if eps is None:
        eps = torch.finfo(h.dtype).eps if m.eps is None else m.eps
    y = h * torch.rsqrt(h.pow(2).mean(dim=dims, keepdim=True) + eps)
    y = y if m.weight is None else y * m.weight
    return y.to(x.dtype)


def rms_norm_misconceptions(m, x, mask=None):
    default = m.eps is None
    return {
        "RMS 정규화에서 평균을 뺐습니다: RMS 정규화는 평균을 빼지 않고 x / sqrt(mean(x²) + eps) "
        "로 크기만 맞춥니다": lambda: rms_norm_variant(m, x, center=True),
        "평균 제곱을 마지막 차원에서만 구했습니다: normalized_shape 의 모든 차원(뒤쪽 "
        "len(normalized_shape) 개)에 걸쳐 구하세요": lambda: (
            rms_norm_variant(m, x, last_only=True) if len(m.normalized_shape) > 1 else None
        ),
        "eps=None 에서 입력 dtype 의 torch.finfo(x.dtype).eps 를 썼습니다: 계산하는 dtype "
        "(float16/bfloat16 입력이면 float32)의 eps 를 쓰세요 (nn.RMSNorm 과 같음)": lambda: (
            rms_norm_variant(m, x, torch.finfo(x.dtype).eps)
            if default and x.dtype in (F16, BF16)
            else None
        ),
        "eps=None 에서 늘 float32 의 eps 를 썼습니다: eps 는 계산하는 dtype 의 것이라 float64 "
        "입력이면 torch.finfo(torch.float64).eps 입니다": lambda: (
            rms_norm_variant(m, x, torch.finfo(F32).eps) if default and x.dtype == F64 else None
        ),
        "eps=None 을 1e-6 으로 바꾸었습니다: eps=None 이면 계산하는 dtype 의 "
        "torch.finfo(dtype).eps 를 씁니다 (float32 면 약 1.19e-7)": lambda: (
            rms_norm_variant(m, x, 1e-6) if default else None
        ),
    }


@torch.no_grad()
def feed_forward_variant(m, x, activation):
    return m.linear2(activation(m.linear1(x)))


def feed_forward_misconceptions(m, x, mask=None):
    return {
        "활성화 함수로 ReLU 를 썼습니다: 이 과제의 FeedForward 는 GELU (정확한 erf 형태의 "
        "nn.GELU()) 를 씁니다": lambda: feed_forward_variant(m, x, nn.ReLU()),
        'GELU 의 tanh 근사(nn.GELU(approximate="tanh"))를 썼습니다: 이 과제는 정확한 erf 형태의 '
        "nn.GELU() 를 씁니다": lambda: feed_forward_variant(m, x, nn.GELU(approximate="tanh")),
    }


def layer_norm(norm, h, eps):
    """LayerNorm ``norm`` (weights and all) with another eps."""
    y = (h - h.mean(-1, keepdim=True)) * torch.rsqrt(h.var(-1, keepdim=True, unbiased=False) + eps)
    return y * norm.weight + norm.bias


@torch.no_grad()
def block_variant(m, x, mask, mistake):
    """TransformerBlock m's eval forward with one known mistake: "normalized residual" (pre-norm
    adds to the normalized x), "normalized sublayer" (post-norm: x + norm(sublayer(x))), "no
    mask", "inverted mask" (~mask passed), "default eps" (the norms built without eps)."""
    eps = 1e-5 if mistake == "default eps" else m.norm1.eps
    keep = None if mistake == "no mask" else ~mask if mistake == "inverted mask" else mask

    def attn(h):
        return m.self_attn(h, mask=keep)

    def norm1(h):
        return layer_norm(m.norm1, h, eps)

    def norm2(h):
        return layer_norm(m.norm2, h, eps)

    if m.norm_first and mistake == "normalized residual":
        x = norm1(x)
        x = norm2(x + attn(x))
        return x + m.ffn(x)
    if m.norm_first:
        x = x + attn(norm1(x))
        return x + m.ffn(norm2(x))
    if mistake == "normalized sublayer":
        x = x + norm1(attn(x))
        return x + norm2(m.ffn(x))
    x = norm1(x + attn(x))
    return norm2(x + m.ffn(x))


def block_misconceptions(m, x, mask=None):
    def variant(mistake):
        return lambda: block_variant(m, x, mask, mistake)

    def given(mistake, when=True):
        return variant(mistake) if when else lambda: None

    return {
        "사전 정규화에서 정규화한 값에 부분 층의 출력을 더했습니다 (x = norm1(x) 뒤 x + attn(x)): "
        "잔차 연결은 정규화하지 않은 원래 x 에 더합니다: x + attn(norm1(x))": given(
            "normalized residual", m.norm_first
        ),
        "사후 정규화에서 부분 층의 출력만 정규화해 더했습니다 (x + norm1(attn(x))): 사후 정규화는 "
        "잔차를 더한 합을 정규화합니다: norm1(x + attn(x))": given(
            "normalized sublayer", not m.norm_first
        ),
        "mask 를 self_attn 에 넘기지 않았습니다: self_attn(..., mask=mask) 로 넘기세요": given(
            "no mask", mask is not None
        ),
        "mask 를 뒤집어(~mask) 넘겼습니다: 이 과정의 mask 는 True 가 '볼 수 있음' 이므로 그대로 "
        "넘깁니다 (nn.MultiheadAttention 의 True = 막힘 규약과 반대)": given(
            "inverted mask", mask is not None
        ),
        "eps 를 LayerNorm 에 넘기지 않았습니다: norm1, norm2 = LayerNorm(d_model, eps=eps) 로 "
        "만드세요": given("default eps", m.norm1.eps != 1e-5),
    }


MISCONCEPTIONS = {
    "LayerNorm": layer_norm_misconceptions,
    "RMSNorm": rms_norm_misconceptions,
    "FeedForward": feed_forward_misconceptions,
    "TransformerBlock": block_misconceptions,
}


# ----------------------------------------------------------------------------- LayerNorm

NORM_HINT = (
    "weight(와 LayerNorm 의 bias)는 모양이 normalized_shape 인 nn.Parameter 이고, "
    "elementwise_affine=False 이면 파라미터가 없어야 합니다."
)


def norm_probe(kwargs, device):
    shape = kwargs["normalized_shape"]
    shape = (shape,) if isinstance(shape, int) else tuple(shape)
    return torch.zeros(2, *shape, device=device)


def constant_rows(rng, d):
    x = randn(rng, 3, 4, 16, device=d)
    x[0, 1] = 0.5
    x[2] = -2.25  # dyadic values: the mean is exact, the variance exactly 0
    return x


# label -> (rng, device) -> (x, init kwargs, output tolerance, gradient tolerance)
LAYER_NORM = {
    "(B, T, d) float32": lambda rng, d: (
        randn(rng, 3, 5, 16, scale=2.0, shift=0.5, device=d),
        dict(normalized_shape=16, eps=1e-5),
        TOL,
        None,
    ),
    "(N, d), eps=1e-2": lambda rng, d: (
        randn(rng, 7, 10, scale=0.3, device=d),
        dict(normalized_shape=10, eps=1e-2),
        TOL,
        None,
    ),
    "1차원 입력 (d,)": lambda rng, d: (
        randn(rng, 12, scale=3.0, device=d),
        dict(normalized_shape=12, eps=1e-5),
        TOL,
        None,
    ),
    "normalized_shape=(4, 6): 마지막 두 차원": lambda rng, d: (
        randn(rng, 2, 3, 4, 6, scale=2.0, shift=-1.0, device=d),
        dict(normalized_shape=(4, 6), eps=1e-5),
        TOL,
        None,
    ),
    "float64": lambda rng, d: (
        randn(rng, 2, 5, 16, scale=4.0, dtype=F64, device=d),
        dict(normalized_shape=16, eps=1e-5),
        (1e-7, 1e-7),
        None,
    ),
    "float16, |x|~1000 (x^2 > max(float16))": lambda rng, d: (
        randn(rng, 2, 4, 32, scale=300.0, shift=200.0, dtype=F16, device=d),
        dict(normalized_shape=32, eps=1e-5),
        HALF_TOL[F16],
        (1e-2, 1e-2),
    ),
    "bfloat16": lambda rng, d: (
        randn(rng, 3, 4, 32, scale=5.0, shift=3.0, dtype=BF16, device=d),
        dict(normalized_shape=32, eps=1e-5),
        HALF_TOL[BF16],
        (3e-2, 3e-2),
    ),
    "x + 1e4 (E[x^2] - E[x]^2의 자릿수 상쇄)": lambda rng, d: (
        randn(rng, 4, 6, 64, shift=1e4, device=d),
        dict(normalized_shape=64, eps=1e-5),
        (1e-2, 1e-2),
        (2e-2, 2e-2),
    ),
    "분산 < eps (x~1e-3)": lambda rng, d: (
        randn(rng, 3, 5, 16, scale=1e-3, device=d),
        dict(normalized_shape=16, eps=1e-5),
        TOL,
        (1e-4, 1e-3),
    ),
    "상수 행 (분산 0)": lambda rng, d: (
        constant_rows(rng, d),
        dict(normalized_shape=16, eps=1e-5),
        TOL,
        (1e-4, 1e-3),
    ),
    "elementwise_affine=False": lambda rng, d: (
        randn(rng, 2, 6, 8, scale=2.0, shift=1.0, device=d),
        dict(normalized_shape=8, eps=1e-5, elementwise_affine=False),
        TOL,
        None,
    ),
}


@pytest.mark.forbid(*NORM_SHORTCUTS)
@pytest.mark.parametrize("case", [*LAYER_NORM, "초기값: weight 1, bias 0"])
def test_layer_norm(student, rng, device, case):
    if case not in LAYER_NORM:
        hint = "학습할 weight 는 1 로, bias 는 0 으로 시작합니다 (nn.LayerNorm 과 같음)."
        kwargs = dict(normalized_shape=8)
        initial_state(student, "LayerNorm", kwargs, ref.LayerNorm, rng, device, case, hint)
        return
    x, kwargs, tol, grad_tol = LAYER_NORM[case](rng, device)
    reference = ref.LayerNorm(**kwargs)
    state = judge_state(reference, rng, device)
    check_names(student, "LayerNorm", kwargs, state, NORM_HINT, norm_probe(kwargs, device))
    what = f"LayerNorm(...)(x) [{case}]"
    compare(
        student, "LayerNorm", kwargs, reference, state, x, what=what, tol=tol, grad_tol=grad_tol
    )


# ----------------------------------------------------------------------------- RMSNorm


def zero_rows(rng, d):
    x = randn(rng, 3, 4, 8, device=d)
    x[1, 2] = 0.0
    return x


RMS_NORM = {
    "(B, T, d), eps=1e-6": lambda rng, d: (
        randn(rng, 3, 5, 16, scale=2.0, device=d),
        dict(normalized_shape=16, eps=1e-6),
        TOL,
        None,
    ),
    "x + 5 (평균이 0이 아님)": lambda rng, d: (
        randn(rng, 4, 12, shift=5.0, device=d),
        dict(normalized_shape=12, eps=1e-6),
        TOL,
        None,
    ),
    "eps=1e-3, normalized_shape=(3, 8)": lambda rng, d: (
        randn(rng, 2, 3, 8, scale=0.05, device=d),
        dict(normalized_shape=(3, 8), eps=1e-3),
        TOL,
        None,
    ),
    "eps=None, float32, x~1e-4 (mean(x^2) < eps)": lambda rng, d: (
        randn(rng, 3, 16, scale=1e-4, device=d),
        dict(normalized_shape=16, eps=None),
        TOL,
        (1e-4, 1e-3),
    ),
    "eps=None, float64, x~1e-9": lambda rng, d: (
        randn(rng, 3, 16, scale=1e-9, dtype=F64, device=d),
        dict(normalized_shape=16, eps=None),
        (1e-7, 1e-7),
        (1e-7, 1e-3),
    ),
    "eps=None, float16, x~3e-4 (float16이 아닌 float32의 eps)": lambda rng, d: (
        randn(rng, 3, 16, scale=3e-4, dtype=F16, device=d),
        dict(normalized_shape=16, eps=None),
        HALF_TOL[F16],
        (1e-2, 1e-2),
    ),
    "float16, |x|~1000 (x^2 > max(float16))": lambda rng, d: (
        randn(rng, 2, 4, 32, scale=300.0, shift=200.0, dtype=F16, device=d),
        dict(normalized_shape=32, eps=1e-6),
        HALF_TOL[F16],
        (1e-2, 1e-2),
    ),
    "bfloat16": lambda rng, d: (
        randn(rng, 3, 4, 32, scale=5.0, shift=3.0, dtype=BF16, device=d),
        dict(normalized_shape=32, eps=1e-6),
        HALF_TOL[BF16],
        (3e-2, 3e-2),
    ),
    "값이 모두 0인 행": lambda rng, d: (
        zero_rows(rng, d),
        dict(normalized_shape=8, eps=1e-6),
        TOL,
        (1e-4, 1e-3),
    ),
    "elementwise_affine=False": lambda rng, d: (
        randn(rng, 2, 6, 8, scale=2.0, device=d),
        dict(normalized_shape=8, eps=1e-5, elementwise_affine=False),
        TOL,
        None,
    ),
}


@pytest.mark.forbid(*NORM_SHORTCUTS)
@pytest.mark.parametrize("case", list(RMS_NORM))
def test_rms_norm(student, rng, device, case):
    x, kwargs, tol, grad_tol = RMS_NORM[case](rng, device)
    reference = ref.RMSNorm(**kwargs)
    state = judge_state(reference, rng, device)
    check_names(student, "RMSNorm", kwargs, state, NORM_HINT, norm_probe(kwargs, device))
    what = f"RMSNorm(...)(x) [{case}]"
    compare(student, "RMSNorm", kwargs, reference, state, x, what=what, tol=tol, grad_tol=grad_tol)


# ----------------------------------------------------------------------------- FeedForward

FFN_HINT = (
    "linear1 = nn.Linear(d_model, d_ff), linear2 = nn.Linear(d_ff, d_model) 두 개만 "
    "파라미터를 가져야 합니다."
)
DROPOUT_HINT = (
    "드롭아웃은 이름이 정해진 nn.Dropout 모듈로, 약속한 위치에서 한 번씩만 적용하세요 "
    "(다른 난수 함수를 부르면 같은 시드에서 다른 마스크가 나옵니다)."
)

# label -> (input shape, dropout, train, seeded, grad)
FEED_FORWARD = {
    "(B, T, d_model), eval()": ((3, 5, 16), 0.1, False, False, True),
    "(N, d_model), eval()": ((7, 16), 0.0, False, False, True),
    "4차원 입력 (B, h, T, d_model), eval()": ((2, 3, 4, 16), 0.0, False, False, False),
    "dropout=0.5, eval(): 드롭아웃 없음": ((4, 6, 16), 0.5, False, True, False),
    "dropout=0.3, train(), 같은 시드": ((4, 6, 16), 0.3, True, True, False),
    "dropout=0.25, train(), 같은 시드, 그래디언트": ((2, 5, 16), 0.25, True, True, True),
    "dropout=0.0, train()": ((3, 4, 16), 0.0, True, True, True),
}


def ffn_initial_weights(student, rng, device, case):
    """Under one seed, nn.Linear's initial weights depend on the order the layers are made in:
    the notebook asks for linear1, activation, dropout, linear2."""
    kwargs = dict(d_model=16, d_ff=40, dropout=0.1)
    hint = (
        "노트북이 정한 순서대로 linear1, activation, dropout, linear2 를 만드세요: nn.Linear 의 "
        "초기값은 만드는 순서대로 난수를 뽑습니다."
    )
    initial_state(student, "FeedForward", kwargs, ref.FeedForward, rng, device, case, hint)


def initial_state(student, name, kwargs, make, rng, device, case, hint):
    """The student's ``name(**kwargs)`` built under a seed holds exactly the parameters and
    buffers of ``make(**kwargs)`` built under the same seed (before any weights are loaded)."""
    seed = int(torch.randint(0, 2**31, (1,), generator=rng))
    with seeded(seed, "cpu"):
        expected = make(**kwargs).state_dict()
    x = torch.zeros(1, 2, kwargs.get("d_model", kwargs.get("normalized_shape")), device=device)
    out = student.module(name, kwargs, inputs=(x,), seed=seed)
    got = out["state"] if isinstance(out.get("state"), dict) else {}
    for key, value in expected.items():
        if key not in got or not torch.equal(got[key].cpu(), value):
            fail(
                f"{name}({', '.join(f'{k}={v}' for k, v in kwargs.items())}) [{case}]: 같은 "
                f"시드로 만든 직후의 {key} 이(가) 기준 구현과 다릅니다. {hint}"
            )


@pytest.mark.parametrize("case", [*FEED_FORWARD, "초기 가중치: 노트북이 정한 순서로 생성"])
def test_feed_forward(student, rng, device, case):
    if case not in FEED_FORWARD:
        ffn_initial_weights(student, rng, device, case)
        return
    shape, p, train, same_seed, grad = FEED_FORWARD[case]
    kwargs = dict(d_model=16, d_ff=40, dropout=p)
    reference = ref.FeedForward(**kwargs)
    state = judge_state(reference, rng, device)
    check_names(
        student, "FeedForward", kwargs, state, FFN_HINT, torch.zeros(1, 2, 16, device=device)
    )
    x = randn(rng, *shape, device=device)
    seed = int(torch.randint(0, 2**31, (1,), generator=rng)) if same_seed else None
    mode = "train()" if train else "eval()"
    what = f"FeedForward(d_model=16, d_ff=40, dropout={p}).{mode}(x) [{case}]"
    if train and p > 0:
        what += ": 같은 시드(seed)에서 기준 구현과 다릅니다. " + DROPOUT_HINT
    compare(
        student,
        "FeedForward",
        kwargs,
        reference,
        state,
        x,
        what=what,
        train=train,
        seed=seed,
        grad=grad,
    )


# ----------------------------------------------------------------------------- block

BLOCK_HINT = (
    "self_attn = MultiHeadAttention(d_model, num_heads, dropout), norm1/norm2 = "
    "LayerNorm(d_model, eps=eps), ffn = FeedForward(d_model, d_ff, dropout) 만 파라미터를 "
    "가져야 합니다."
)


def causal(T, d):
    return torch.ones(T, T, dtype=torch.bool, device=d).tril()


def padding(rng, B, T, d):
    lengths = torch.randint(1, T + 1, (B,), generator=rng)
    lengths[0] = T
    return (torch.arange(T)[None, :] < lengths[:, None]).view(B, 1, 1, T).to(d)


# label -> (norm_first, dropout, eps, train, mask kind, grad, x scale, T)
BLOCK = {
    "사전 정규화, eval()": (True, 0.1, 1e-5, False, None, True, 1.0, 6),
    "사후 정규화, eval()": (False, 0.1, 1e-5, False, None, True, 1.0, 6),
    "사전 정규화, 인과적 마스크 (T, T)": (True, 0.0, 1e-5, False, "causal", True, 1.0, 7),
    "사후 정규화, 패딩 마스크 (B, 1, 1, T)": (False, 0.0, 1e-5, False, "padding", True, 1.0, 5),
    "사전 정규화, x*5, eps=0.1": (True, 0.0, 0.1, False, None, False, 5.0, 4),
    "사후 정규화, eps=0.1, T=1": (False, 0.0, 0.1, False, None, False, 1.0, 1),
    "사후 정규화, dropout=0.3, eval(): 드롭아웃 없음": (
        False,
        0.3,
        1e-5,
        False,
        None,
        False,
        1.0,
        6,
    ),
    "사전 정규화, dropout=0.2, train(), 같은 시드": (True, 0.2, 1e-5, True, None, False, 1.0, 6),
    "사후 정규화, dropout=0.2, train(), 같은 시드": (False, 0.2, 1e-5, True, None, False, 1.0, 6),
    "사전 정규화, dropout=0.2, train(), 인과적 마스크, 그래디언트": (
        True,
        0.2,
        1e-5,
        True,
        "causal",
        True,
        1.0,
        5,
    ),
}


# the block's LayerNorm and FeedForward are the judge's (their own items grade the student's):
# a mistake in either costs its item only
@pytest.mark.given(LayerNorm=ref.LayerNorm, FeedForward=ref.FeedForward)
@pytest.mark.forbid(*BLOCK_SHORTCUTS, *NORM_SHORTCUTS)
@pytest.mark.parametrize("case", list(BLOCK))
def test_transformer_block(student, rng, device, case):
    norm_first, p, eps, train, mask_kind, grad, scale, T = BLOCK[case]
    B, d_model = 3, 16
    kwargs = dict(d_model=d_model, num_heads=4, d_ff=40, dropout=p, norm_first=norm_first, eps=eps)
    reference = ref.TransformerBlock(**kwargs)
    state = judge_state(reference, rng, device)
    check_names(
        student,
        "TransformerBlock",
        kwargs,
        state,
        BLOCK_HINT,
        torch.zeros(1, 2, d_model, device=device),
    )
    x = randn(rng, B, T, d_model, scale=scale, device=device)
    mask = {None: None, "causal": causal(T, device), "padding": padding(rng, B, T, device)}
    mask = mask[mask_kind]
    seed = int(torch.randint(0, 2**31, (1,), generator=rng))
    kind = "사전 정규화" if norm_first else "사후 정규화"
    what = f"TransformerBlock({kind}, dropout={p}, eps={eps}).{'train' if train else 'eval'}()"
    what += "(x)" if mask is None else "(x, mask)"
    what += f" [{case}]"
    if train:
        what += ": 같은 시드(seed)에서 기준 구현과 다릅니다. " + DROPOUT_HINT
    compare(
        student,
        "TransformerBlock",
        kwargs,
        reference,
        state,
        x,
        what=what,
        mask=mask,
        train=train,
        seed=seed,
        grad=grad,
    )
