"""Hidden checks for assignment ``masking`` (chapter 3: 마스킹).

Masks are compared exactly with ``solutions.masking`` (on the device given, including the
meta-device probe); masked softmax in four dtypes with fully blocked rows, T != S, another
``dim`` and scores near the end of the dtype's range (a -1e9 or -1e4 fill is not below them);
CausalAttention by loading the judge's weights into the student's module (strict
load_state_dict): eval outputs and gradients, and train-mode outputs compared exactly under
the seed the reference uses (dropout on the attention weights, scaled by 1/(1-p)).
"""

import math

import pytest
import torch

from autograder.checking import HALF_TOL, assert_close, extreme, fail, randn, seeded
from solutions import masking as ref

F32, F64, F16, BF16 = torch.float32, torch.float64, torch.float16, torch.bfloat16
SHORTCUTS = ("scaled_dot_product_attention", "MultiheadAttention")


def random_mask(rng, *shape, p_keep=0.6, device="cpu"):
    return (torch.rand(*shape, generator=rng) < p_keep).to(device)


def exact(student, name, args, kwargs, expected, what, inputs):
    got = student.call(name, *args, **kwargs)
    assert_close(got, expected, what=what, inputs=inputs)


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
    assert_close(got, expected, what=what, inputs=inputs, rtol=tol[0], atol=tol[1])
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
    expected = reference(kwargs, sd, device).eval()(x)
    assert_close(out["output"], expected, what=what, inputs={"x": x}, rtol=1e-4, atol=1e-5)


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
    what = (
        f"CausalAttention(dropout={p}).train()(x): 같은 시드(seed)에서 드롭아웃 결과가 기준 구현과 "
        "다릅니다. self.dropout 을 어텐션 가중치에 한 번만 적용하세요 "
        "(nn.Dropout 이 남은 값을 1/(1-p) 로 키웁니다)"
    )
    assert_close(got, expected, what=what, inputs={"x": x}, rtol=1e-4, atol=1e-5)
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
