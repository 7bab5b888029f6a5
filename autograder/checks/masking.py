"""Hidden checks for assignment ``masking`` (chapter 3: 마스킹).

Masks are compared exactly with ``solutions.masking`` (on the device given, including the
meta-device probe); masked softmax in four dtypes with fully blocked rows, T != S, another
``dim`` and scores near the end of the dtype's range (a -1e9 or -1e4 fill is not below them);
CausalAttention by loading the judge's weights into the student's module (strict
load_state_dict): eval outputs and gradients, and train-mode outputs compared exactly under
the seed the reference uses (dropout on the attention weights, scaled by 1/(1-p)).
"""

import functools
import math

import pytest
import torch
import torch.nn.functional as F

from autograder.judge.checking import (
    HALF_TOL,
    CheckFailed,
    assert_close,
    extreme,
    fail,
    randn,
    seeded,
)
from solutions import masking as ref

F32, F64, F16, BF16 = torch.float32, torch.float64, torch.float16, torch.bfloat16
SHORTCUTS = ("scaled_dot_product_attention", "MultiheadAttention")


def random_mask(rng, *shape, p_keep=0.6, device="cpu"):
    return (torch.rand(*shape, generator=rng) < p_keep).to(device)


def exact(student, name, args, kwargs, expected, what, inputs):
    """Call the student's mask function ``name`` and compare exactly with ``expected``; a wrong
    result that a known misconception gives is named."""
    got = student.call(name, *args, **kwargs)
    known = MISCONCEPTIONS[name](*args, **kwargs)
    assert_close(got, expected, what=what, inputs=inputs, misconceptions=known)


# ----------------------------------------------------------------------------- misconceptions
# Known mistakes, and the value each gives on a check's inputs (None where those inputs cannot
# show it): a wrong result that matches one is named in the feedback (checking.diagnose).


def causal_mask_misconceptions(T, S=None, device=None):
    S = T if S is None else S
    ones = torch.ones(T, S, dtype=torch.bool, device=device)
    no_diagonal, inverted = ones.tril(S - T - 1), ~ones.tril(S - T)
    same = torch.equal(no_diagonal, inverted)  # e.g. T = S = 1: both block the only key
    return {
        "쿼리가 자기 자신(대각선)을 보지 못하게 막았습니다: 대각선을 빼고 만들었거나 True/False "
        "를 뒤집은 마스크입니다. keep 마스크는 쿼리 i 가 키 j <= i + (S - T) 를 볼 수 있는 곳에서 "
        "True 입니다 (대각선 포함, tril(diagonal=S - T))": lambda: no_diagonal if same else None,
        "대각선까지 막았습니다: 쿼리는 자기 자신의 위치도 봅니다. tril(diagonal=S - T) 로 "
        "대각선을 포함하세요": lambda: None if same else no_diagonal,
        "True/False 를 뒤집었습니다 (nn.MultiheadAttention 처럼 True = 막힘): 이 과정의 마스크는 "
        "F.scaled_dot_product_attention 처럼 볼 수 있는 곳(keep)이 True 입니다": lambda: (
            None if same else inverted
        ),
        "S > T 인데 키 오프셋 S - T 를 무시하고 왼쪽 위에 맞췄습니다 (tril()): 새 쿼리 T 개는 S 개 "
        "위치 중 마지막 T 개이므로 쿼리 i 는 키 j <= i + (S - T) 를 봅니다 "
        "(tril(diagonal=S - T))": lambda: None if S == T else ones.tril(),
    }


def padding_mask_misconceptions(lengths, S=None):
    n = int(lengths.max()) if S is None else S
    pos = torch.arange(n, device=lengths.device)
    return {
        "길이보다 한 칸 더 남겼습니다 (off-by-one): 위치 j 는 j < length 일 때만 남깁니다 "
        "(<= 가 아니라 <)": lambda: (pos <= lengths[:, None])[:, None, None, :],
        "모양이 (B, S) 입니다: (B, 1, 1, S) 로 만들어야 (B, h, T, S) 점수에 헤드와 쿼리를 따라 "
        "브로드캐스팅됩니다 ([:, None, None, :])": lambda: ref.padding_mask(lengths, n)[:, 0, 0],
        "S 를 주지 않았을 때 배치 크기 len(lengths) 를 썼습니다: S 의 기본값은 가장 긴 길이 "
        "lengths.max() 입니다": lambda: (
            None if S is not None or len(lengths) == n else ref.padding_mask(lengths, len(lengths))
        ),
    }


def combine_masks_misconceptions(*masks):
    def any_of():
        kept = [m for m in masks if m is not None]
        return functools.reduce(torch.logical_or, kept)

    return {
        "마스크를 | (OR) 로 합쳤습니다: 어느 한 마스크라도 막은 위치는 막혀야 하므로 keep "
        "마스크는 & (AND) 로 합칩니다": any_of,
    }


def masked_softmax_misconceptions(scores, mask, dim=-1):
    def filled(value, zero_blocked=True):
        w = torch.softmax(scores.masked_fill(~mask, value), dim=dim)
        return w.masked_fill(~mask, 0.0) if zero_blocked else w

    last = dim in (-1, scores.dim() - 1)
    return {
        "막힌 점수를 -inf 로 채워서 모든 키가 막힌 행이 NaN 이 되었습니다 (exp 의 합이 0 이라 "
        "0/0): torch.finfo(scores.dtype).min 으로 채우고, 소프트맥스 뒤에 막힌 위치를 0 으로 "
        "만드세요": lambda: filled(float("-inf"), zero_blocked=False),
        "모든 키가 막힌 행이 균등 분포(1/S)가 되었습니다: finfo.min 으로 채운 행은 값이 모두 같아 "
        "소프트맥스가 고르게 나눕니다. 소프트맥스 뒤에 막힌 위치를 0 으로 만드세요 "
        "(masked_fill(~mask, 0))": lambda: filled(torch.finfo(scores.dtype).min, False),
        "막힌 점수를 -1e4 같은 고정된 음수로 채웠습니다: 점수가 그보다 작으면 막힌 키가 오히려 "
        "가중치를 가져갑니다. dtype 의 가장 작은 값 torch.finfo(scores.dtype).min 으로 "
        "채우세요": lambda: filled(-1e4),
        "dim 인자를 쓰지 않고 늘 마지막 차원으로 소프트맥스를 계산했습니다": lambda: (
            None if last else ref.masked_softmax(scores, mask, dim=-1)
        ),
    }


def renorm_misconceptions(scores, mask, dim=-1):
    w = torch.where(mask, torch.softmax(scores, dim=dim), 0.0)
    s = w.sum(dim=dim, keepdim=True)
    eps = {
        f"분모에 작은 수 {e:g} 을(를) 더했습니다: 남은 가중치의 합이 작은 행에서 결과가 눈에 띄게 "
        "작아집니다. 합이 0 인 행만 따로 처리하세요 (torch.where(s > 0, s, 1) 로 "
        "나누기)": lambda e=e: w / (s + e)
        for e in (1e-9, 1e-8, 1e-6)
    }
    return {
        "막힌 가중치를 0 으로 만든 뒤 다시 정규화하지 않았습니다: 남은 가중치를 행의 합으로 "
        "나누어 합이 1 이 되게 하세요": lambda: w,
        "모든 키가 막힌 행에서 0 을 0 으로 나누어 NaN 이 되었습니다: 합이 0 인 행은 나누지 말고 "
        "0 으로 두세요 (torch.where(s > 0, s, 1) 로 나누기)": lambda: w / s,
        **eps,
    }


MISCONCEPTIONS = {
    "causal_mask": causal_mask_misconceptions,
    "padding_mask": padding_mask_misconceptions,
    "combine_masks": combine_masks_misconceptions,
    "masked_softmax": masked_softmax_misconceptions,
    "masked_softmax_renorm": renorm_misconceptions,
}


def attention_parts(model, x):
    """The reference CausalAttention's scaled scores, causal keep-mask and values for x."""
    q, k, v = model.W_query(x), model.W_key(x), model.W_value(x)
    T = x.shape[-2]
    return q @ k.transpose(-2, -1), k.shape[-1], model.mask[:T, :T], v


def attention_misconceptions(model, x):
    """eval(): the reference's forward with a wrong scale or mask."""
    dot, d_k, keep, v = attention_parts(model, x)
    d_in = x.shape[-1]

    def out(scale=d_k**-0.5, mask=keep):
        return ref.masked_softmax(dot * scale, mask) @ v

    return {
        "점수를 √d_k 로 나누지 않았습니다: 스케일드 닷-프로덕트 어텐션은 q @ kᵀ / √d_k 입니다 "
        "(나누지 않으면 d_k 가 클 때 소프트맥스가 한 키에 쏠립니다)": lambda: out(scale=1.0),
        "점수를 √d_k 로 나누지 않고 곱했습니다: 스케일드 닷-프로덕트 어텐션은 q @ kᵀ / √d_k "
        "입니다": lambda: out(scale=d_k**0.5),
        "√d_k 대신 입력 차원 d_in 의 제곱근으로 나누었습니다: d_k 는 키의 차원 "
        "(k.shape[-1] = d_out) 입니다": lambda: None if d_in == d_k else out(scale=d_in**-0.5),
        "인과적 마스크가 바로 다음 토큰(미래)까지 보여 줍니다 (tril(diagonal=1)): 쿼리 i 는 키 "
        "j <= i 만 봅니다 (대각선까지)": lambda: out(mask=torch.ones_like(keep).tril(1)),
    }


def dropout_misconceptions(model, x, p, seed, device):
    """train(): the reference's forward with dropout misplaced, under the student's seed."""
    if p == 0:
        return {}
    dot, d_k, keep, v = attention_parts(model, x)
    scores = dot / math.sqrt(d_k)
    weights = ref.masked_softmax(scores, keep)

    def drawn(forward):
        with seeded(seed, device):
            return forward()

    return {
        "train() 에서 드롭아웃을 적용하지 않았습니다: self.dropout 을 어텐션 가중치에 적용하세요 "
        "(eval() 에서는 nn.Dropout 이 저절로 꺼집니다)": lambda: weights @ v,
        "드롭아웃을 소프트맥스 전의 어텐션 점수에 적용했습니다: 소프트맥스로 얻은 어텐션 "
        "가중치에 적용하세요": lambda: drawn(
            lambda: ref.masked_softmax(F.dropout(scores, p), keep) @ v
        ),
        "드롭아웃을 어텐션 출력(weights @ v)에 적용했습니다: 어텐션 가중치에 적용한 뒤 값(v)과 "
        "곱하세요": lambda: drawn(lambda: F.dropout(weights @ v, p)),
        "드롭아웃 뒤 남은 가중치를 1/(1-p) 로 키우지 않았습니다 (역 드롭아웃(inverted "
        "dropout)): self.dropout(nn.Dropout) 을 쓰면 키워 줍니다": lambda: drawn(
            lambda: (weights * (torch.rand_like(weights) >= p)) @ v
        ),
        "드롭아웃을 torch.rand_like 로 직접 만들었습니다: 계산은 맞지만 같은 시드에서 nn.Dropout "
        "과 다른 위치를 지웁니다. __init__ 에서 만든 self.dropout 을 어텐션 가중치에 "
        "적용하세요": lambda: drawn(
            lambda: (weights * (torch.rand_like(weights) >= p) / (1 - p)) @ v
        ),
    }


# ----------------------------------------------------------------------------- masks

CAUSAL = [(1, None), (5, None), (6, 6), (3, 7), (1, 4), (4, 9), (2, "무작위"), (3, "기본값")]


@pytest.mark.spec(builds_on_device=True)  # the notebook: made on `device` directly
@pytest.mark.parametrize("T, S", CAUSAL, ids=[f"T={t},S={s}" for t, s in CAUSAL])
def test_causal_mask(student, rng, device, T, S):
    if S == "기본값":  # S given positionally, device=None: the default device (CPU)
        what = "causal_mask(3, 5)"
        exact(student, "causal_mask", (3, 5), {}, ref.causal_mask(3, 5), what, {})
        return
    if S == "무작위":
        T = int(torch.randint(2, 9, (1,), generator=rng))
        S = T + int(torch.randint(0, 5, (1,), generator=rng))
    kwargs = {"device": device} if S is None else {"S": S, "device": device}
    what = f"causal_mask({T}, S={S}, device={device.type!r})"
    expected = ref.causal_mask(T, S, device=device)
    exact(student, "causal_mask", (T,), kwargs, expected, what, {"T": T, "S": S})


def lengths_mixed(rng, d):
    lengths = torch.randint(1, 7, (6,), generator=rng)
    lengths[1], lengths[4] = 0, 7  # an empty and a full sequence
    return lengths.to(d)


PADDING = {
    "lengths에 0과 최대 길이 포함": lambda rng, d: (lengths_mixed(rng, d), {}),
    "S > 최대 길이": lambda rng, d: (lengths_mixed(rng, d), {"S": 10}),
    "시퀀스 1개": lambda rng, d: (torch.tensor([3], device=d), {}),
    "lengths 전부 0, S=4": lambda rng, d: (torch.zeros(2, dtype=torch.long, device=d), {"S": 4}),
}


@pytest.mark.parametrize("case", list(PADDING))
def test_padding_mask(student, rng, device, case):
    lengths, kwargs = PADDING[case](rng, device)
    what = f"padding_mask(lengths, {kwargs}) [{case}]"
    expected = ref.padding_mask(lengths, **kwargs)
    exact(student, "padding_mask", (lengths,), kwargs, expected, what, {"lengths": lengths})


def combine_cases(rng, d):
    causal = ref.causal_mask(4, 6, device=d)
    pad = ref.padding_mask(torch.tensor([6, 2, 0], device=d), 6)
    a = random_mask(rng, 3, 2, 4, 6, device=d)
    b = random_mask(rng, 4, 6, device=d)
    c = random_mask(rng, 3, 1, 1, 6, device=d)
    return {
        "인과적 (T,S) & 패딩 (B,1,1,S)": (causal, pad),
        "패딩, None, 인과적": (pad, None, causal),
        "(B,h,T,S) & (T,S) & (B,1,1,S)": (a, b, c),
        "None, b": (None, b),
    }


@pytest.mark.parametrize("case", list(combine_cases(torch.Generator(), "cpu")))
def test_combine_masks(student, rng, device, case):
    masks = combine_cases(rng, device)[case]
    what = f"combine_masks [{case}]"
    inputs = {f"mask{i}": m for i, m in enumerate(masks)}
    exact(student, "combine_masks", masks, {}, ref.combine_masks(*masks), what, inputs)


# ----------------------------------------------------------------------------- masked softmax


def scores_and_mask(rng, device, dtype, scale=3.0, shift=0.0, B=2, h=3, T=4, S=6):
    scores = randn(rng, B, h, T, S, scale=scale, shift=shift, dtype=dtype, device=device)
    keep = ref.combine_masks(
        ref.causal_mask(T, S, device=device),
        ref.padding_mask(torch.tensor([S, 2], device=device), S),
        random_mask(rng, 1, h, T, S, p_keep=0.8, device=device),
    )
    keep[1, 0, 0] = False  # at least one fully blocked row
    return scores, keep


def renorm_tol(dtype):
    """softmax-then-renormalise loses accuracy in half precision (kept weights underflow)."""
    return (2e-2, 1e-2) if dtype in HALF_TOL else (1e-5, 1e-6)


MASKED = {
    "float32": lambda rng, d: (*scores_and_mask(rng, d, F32), (1e-5, 1e-6), {}),
    "float64": lambda rng, d: (*scores_and_mask(rng, d, F64), (1e-5, 1e-6), {}),
    "float16": lambda rng, d: (*scores_and_mask(rng, d, F16, scale=0.75), HALF_TOL[F16], {}),
    "bfloat16": lambda rng, d: (*scores_and_mask(rng, d, BF16, scale=0.75), HALF_TOL[BF16], {}),
    "T != S, mask (T,S)": lambda rng, d: (
        randn(rng, 2, 3, 5, scale=2.0, device=d),
        ref.causal_mask(3, 5, device=d),
        (1e-5, 1e-6),
        {},
    ),
    "dim=-2": lambda rng, d: (
        randn(rng, 2, 5, 3, scale=2.0, device=d),
        ref.causal_mask(3, 5, device=d).T,
        (1e-5, 1e-6),
        {"dim": -2},
    ),
    "점수~-max(float32)": lambda rng, d: (
        *scores_and_mask(rng, d, F32, scale=1e36, shift=-extreme(F32)),
        (1e-5, 1e-6),
        {},
    ),
    "점수~-max(float16)": lambda rng, d: (
        *scores_and_mask(rng, d, F16, scale=2.0, shift=-extreme(F16)),
        HALF_TOL[F16],
        {},
    ),
}


# softmax-then-renormalise has no fill constant; with scores at the range's end its kept weights
# underflow by design (the notebook says so), so those cases test the fill-first function only
PAIRS = [
    (case, name)
    for case in MASKED
    for name in ("masked_softmax", "masked_softmax_renorm")
    if not (name == "masked_softmax_renorm" and "max" in case)
]


@pytest.mark.forbid(*SHORTCUTS)
@pytest.mark.parametrize("case, name", PAIRS, ids=[f"{c}-{n}" for c, n in PAIRS])
def test_masked_softmax(student, rng, device, case, name):
    scores, keep, tol, kwargs = MASKED[case](rng, device)
    if name == "masked_softmax_renorm":
        tol = max(tol, renorm_tol(scores.dtype))
    what = f"{name}(scores, mask) [{case}]"
    inputs = {"scores": scores, "mask": keep, **kwargs}
    got = student.call(name, scores, keep, **kwargs)
    expected = ref.masked_softmax(scores, keep, **kwargs)
    known = MISCONCEPTIONS[name](scores, keep, **kwargs)
    assert_close(got, expected, what, inputs, tol[0], tol[1], misconceptions=known)
    blocked = ~keep.expand_as(expected).cpu()
    if (got.cpu()[blocked] != 0).any():
        fail(f"{what}: 막힌 위치의 가중치는 정확히 0 이어야 합니다", inputs)


# ----------------------------------------------------------------------------- CausalAttention

WEIGHTS = ("W_query", "W_key", "W_value")


def judge_weights(rng, d_in, d_out, bias, device):
    """Random weights from the judge (not the student's init), as a state_dict."""
    sd = {}
    bound = 1.0 / math.sqrt(d_in)
    for name in WEIGHTS:
        sd[f"{name}.weight"] = ((torch.rand(d_out, d_in, generator=rng) * 2 - 1) * bound).to(device)
        if bias:
            sd[f"{name}.bias"] = ((torch.rand(d_out, generator=rng) * 2 - 1) * bound).to(device)
    return sd


def reference(kwargs, sd, device):
    m = ref.CausalAttention(**kwargs).to(device)
    m.load_state_dict(sd, strict=False)  # the reference's persistent mask buffer keeps its value
    return m


def state_for_student(student, kwargs, sd, device):
    """The judge's weights plus the student's own buffers (e.g. a persistent `mask`)."""
    probe = torch.zeros(1, 2, kwargs["d_in"], device=device)
    state = student.module("CausalAttention", kwargs, inputs=(probe,))["state"]
    missing = [k for k in sd if k not in state]
    if missing:
        fail(
            "CausalAttention: state_dict에 "
            + ", ".join(missing)
            + " 이(가) 없습니다. W_query, W_key, W_value 는 nn.Linear(d_in, d_out, bias=qkv_bias) "
            f"이어야 합니다 (학생 모듈의 키: {sorted(state)[:8]})"
        )
    for k, v in sd.items():
        if isinstance(state[k], torch.Tensor) and tuple(state[k].shape) != tuple(v.shape):
            fail(
                f"CausalAttention: {k} 의 모양이 {tuple(v.shape)} 이어야 하는데 "
                f"{tuple(state[k].shape)} 입니다 "
                "(nn.Linear(d_in, d_out) 의 weight 는 (d_out, d_in))"
            )
    full = {k: v for k, v in state.items() if isinstance(v, torch.Tensor)}
    full.update(sd)
    return full


def describe_config(kwargs):
    return ", ".join(f"{k}={v}" for k, v in kwargs.items())


CONFIGS = {
    "no bias": dict(d_in=5, d_out=4, context_length=8, dropout=0.0),
    "bias": dict(d_in=3, d_out=6, context_length=6, dropout=0.5, qkv_bias=True),
}


def eval_output(student, rng, device, config, T):
    """eval(): outputs equal the reference's with the same weights."""
    kwargs = dict(CONFIGS[config], qkv_bias=CONFIGS[config].get("qkv_bias", False))
    T = kwargs["context_length"] if T is None else T
    sd = judge_weights(rng, kwargs["d_in"], kwargs["d_out"], kwargs["qkv_bias"], device)
    state = state_for_student(student, kwargs, sd, device)
    x = randn(rng, 2, T, kwargs["d_in"], device=device)
    out = student.module("CausalAttention", kwargs, state_dict=state, inputs=(x,))
    what = f"CausalAttention({describe_config(kwargs)}).eval()(x), x.shape={tuple(x.shape)}"
    model = reference(kwargs, sd, device).eval()
    known = attention_misconceptions(model, x)
    assert_close(out["output"], model(x), what, {"x": x}, 1e-4, 1e-5, misconceptions=known)


def gradients(student, rng, device):
    """Gradients of sum(output) w.r.t. the input and every weight (eval mode)."""
    kwargs = dict(d_in=3, d_out=6, context_length=6, dropout=0.5, qkv_bias=True)
    sd = judge_weights(rng, 3, 6, True, device)
    state = state_for_student(student, kwargs, sd, device)
    x = randn(rng, 3, 5, 3, device=device)
    model = reference(kwargs, sd, device).eval()
    xr = x.clone().requires_grad_(True)
    model(xr).float().sum().backward()
    out = student.module(
        "CausalAttention", kwargs, state_dict=state, inputs=(x,), train=False, grad=True
    )
    expected = {"input0": xr.grad, **{n: p.grad for n, p in model.named_parameters()}}
    for name, g in expected.items():
        what = f"CausalAttention 의 그래디언트(gradient) {name}"
        if name not in out["grads"]:
            fail(f"{what}: 그래디언트가 없습니다")
        assert_close(out["grads"][name], g, what=what, inputs={"x": x}, rtol=1e-4, atol=1e-5)


def dropout(student, rng, device, p):
    """train(): the same dropout mask as the reference under the same seed, on the attention
    weights, scaled by 1/(1-p); eval(): no dropout."""
    kwargs = dict(d_in=4, d_out=4, context_length=10, dropout=p, qkv_bias=False)
    sd = judge_weights(rng, 4, 4, False, device)
    state = state_for_student(student, kwargs, sd, device)
    x = randn(rng, 4, 10, 4, device=device)
    model = reference(kwargs, sd, device)
    seed = int(torch.randint(0, 2**31, (1,), generator=rng))
    with seeded(seed, device):
        expected = model.train()(x)
    got = student.module(
        "CausalAttention", kwargs, state_dict=state, inputs=(x,), train=True, forward_seed=seed
    )["output"]
    what = f"CausalAttention(dropout={p}).train()(x)"
    known = dropout_misconceptions(model, x, p, seed, device)
    try:
        assert_close(got, expected, what, {"x": x}, 1e-4, 1e-5, misconceptions=known)
    except CheckFailed as e:
        if "흔한 실수" in str(e):
            raise
        hint = (
            "같은 시드(seed)에서 드롭아웃 결과가 기준 구현과 다릅니다. self.dropout 을 어텐션 "
            "가중치에 한 번만 적용하세요 (nn.Dropout 이 남은 값을 1/(1-p) 로 키웁니다)"
        )
        raise CheckFailed(f"{what}: {hint}\n{e}") from None
    evaluated = student.module(
        "CausalAttention", kwargs, state_dict=state, inputs=(x,), forward_seed=seed
    )["output"]
    what = f"CausalAttention(dropout={p}).eval()(x): eval 에서는 드롭아웃이 꺼져야 합니다"
    assert_close(evaluated, model.eval()(x), what=what, inputs={"x": x}, rtol=1e-4, atol=1e-5)


ATTENTION = {
    "eval(), 편향 없음, T=context_length": lambda s, r, d: eval_output(s, r, d, "no bias", None),
    "eval(), 편향 없음, T=3": lambda s, r, d: eval_output(s, r, d, "no bias", 3),
    "eval(), 편향 있음, dropout=0.5, T=context_length": lambda s, r, d: eval_output(
        s, r, d, "bias", None
    ),
    "eval(), 편향 있음, dropout=0.5, T=3": lambda s, r, d: eval_output(s, r, d, "bias", 3),
    "그래디언트": gradients,
    "train(), dropout=0.5": lambda s, r, d: dropout(s, r, d, 0.5),
    "train(), dropout=0.1": lambda s, r, d: dropout(s, r, d, 0.1),
    "train(), dropout=0.0": lambda s, r, d: dropout(s, r, d, 0.0),
}


@pytest.mark.given(causal_mask=ref.causal_mask, masked_softmax=ref.masked_softmax)
@pytest.mark.forbid(*SHORTCUTS)
@pytest.mark.parametrize("case", list(ATTENTION))
def test_causal_attention(student, rng, device, case):
    ATTENTION[case](student, rng, device)
