"""Hidden checks for assignment ``masking`` (chapter 3: 마스킹).

Masks are compared exactly with ``solutions.masking``; masked softmax in several dtypes with
fully blocked rows and T != S; CausalAttention by loading the judge's weights into the student's
module (strict load_state_dict) and comparing forward outputs and gradients in eval mode, and by
checking that dropout acts in train mode only.
"""

import math

import torch

from autograder.compare import HALF_TOL, assert_close, expect_device, expect_tensor, fail
from autograder.judge import check
from solutions import masking as ref


def _exact(student, name, args, kwargs, expected, what, device, inputs):
    got = student.call(name, *args, **kwargs)
    expect_tensor(got, what, shape=expected.shape, dtype=expected.dtype, inputs=inputs)
    expect_device(got, device, what, inputs)
    assert_close(got, expected, what=what, inputs=inputs)
    return got


def _random_mask(rng, *shape, p_keep=0.6, device="cpu"):
    return (torch.rand(*shape, generator=rng) < p_keep).to(device)


@check("test_causal_mask")
def causal_mask(student, rng, device):
    if not student.has("causal_mask"):
        fail("causal_mask이(가) 정의되지 않았습니다 (함수 이름을 바꾸지 마세요)")
    dev = device.type
    cases = [(1, None), (5, None), (6, 6), (3, 7), (1, 4), (4, 9)]
    extra = int(torch.randint(2, 9, (1,), generator=rng))
    cases.append((extra, extra + int(torch.randint(0, 5, (1,), generator=rng))))
    for T, S in cases:
        kwargs = {"S": S, "device": dev} if S is not None else {"device": dev}
        what = f"causal_mask({T}" + (f", S={S}" if S is not None else "") + f", device={dev!r})"
        _exact(
            student,
            "causal_mask",
            (T,),
            kwargs,
            ref.causal_mask(T, S, device=device),
            what,
            device,
            {"T": T, "S": S},
        )
    # positional S, and device=None -> the default device (CPU)
    _exact(
        student,
        "causal_mask",
        (3, 5),
        {},
        ref.causal_mask(3, 5),
        "causal_mask(3, 5)",
        "cpu",
        {"T": 3, "S": 5},
    )


@check("test_padding_mask")
def padding_mask(student, rng, device):
    B, S = 6, 7
    lengths = torch.randint(1, S, (B,), generator=rng)
    lengths[1], lengths[4] = 0, S  # an empty and a full sequence
    lengths = lengths.to(device)
    inputs = {"lengths": lengths}
    _exact(
        student,
        "padding_mask",
        (lengths,),
        {},
        ref.padding_mask(lengths),
        "padding_mask(lengths)",
        device,
        inputs,
    )
    _exact(
        student,
        "padding_mask",
        (lengths,),
        {"S": S + 3},
        ref.padding_mask(lengths, S + 3),
        f"padding_mask(lengths, S={S + 3})",
        device,
        {**inputs, "S": S + 3},
    )
    one = torch.tensor([3], device=device)
    _exact(
        student,
        "padding_mask",
        (one,),
        {},
        ref.padding_mask(one),
        "padding_mask(lengths)",
        device,
        {"lengths": one},
    )
    zeros = torch.zeros(2, dtype=torch.long, device=device)
    _exact(
        student,
        "padding_mask",
        (zeros,),
        {"S": 4},
        ref.padding_mask(zeros, 4),
        "padding_mask(lengths, S=4) (길이 0)",
        device,
        {"lengths": zeros, "S": 4},
    )


@check("test_combine_masks")
def combine_masks(student, rng, device):
    T, S, B = 4, 6, 3
    causal = ref.causal_mask(T, S, device=device)
    lengths = torch.tensor([6, 2, 0], device=device)
    pad = ref.padding_mask(lengths, S)
    _exact(
        student,
        "combine_masks",
        (causal, pad),
        {},
        ref.combine_masks(causal, pad),
        "combine_masks(causal (T,S), padding (B,1,1,S))",
        device,
        {"causal": causal, "padding": pad},
    )
    _exact(
        student,
        "combine_masks",
        (pad, None, causal),
        {},
        ref.combine_masks(pad, causal),
        "combine_masks(padding, None, causal)",
        device,
        {"padding": pad, "causal": causal},
    )
    a = _random_mask(rng, B, 2, T, S, device=device)
    b = _random_mask(rng, T, S, device=device)
    c = _random_mask(rng, B, 1, 1, S, device=device)
    _exact(
        student,
        "combine_masks",
        (a, b, c),
        {},
        ref.combine_masks(a, b, c),
        "combine_masks(a (B,h,T,S), b (T,S), c (B,1,1,S))",
        device,
        {"a": a, "b": b, "c": c},
    )
    _exact(student, "combine_masks", (None, b), {}, b, "combine_masks(None, b)", device, {"b": b})


def _scores_and_mask(rng, device, dtype=torch.float32, B=2, h=3, T=4, S=6):
    scores = (torch.randn(B, h, T, S, generator=rng, dtype=torch.float64) * 3).to(device, dtype)
    keep = ref.combine_masks(
        ref.causal_mask(T, S, device=device),
        ref.padding_mask(torch.tensor([S, 2], device=device), S),
        _random_mask(rng, 1, h, T, S, p_keep=0.8, device=device),
    )
    keep[1, 0, 0] = False  # at least one fully blocked row
    return scores, keep


@check("test_masked_softmax")
def masked_softmax(student, rng, device):
    names = ("masked_softmax", "masked_softmax_renorm")
    for name in names:
        if not student.has(name):
            fail(f"{name}이(가) 정의되지 않았습니다 (함수 이름을 바꾸지 마세요)")
    for dtype in (torch.float32, torch.float64, torch.float16, torch.bfloat16):
        scores, keep = _scores_and_mask(rng, device, dtype)
        # softmax-then-renormalise is exact only in float32/64: in half precision the kept
        # probabilities underflow when a blocked score dominates, so it gets milder scores there
        half = dtype in HALF_TOL
        todo = [(names[0], scores)] + [(names[1], scores * 0.25 if half else scores)]
        results = []
        for name, sc in todo:
            expected = ref.masked_softmax(sc, keep)
            inputs = {"scores": sc, "mask": keep}
            if not half:
                rtol, atol = 1e-5, 1e-6
            elif name == names[0]:
                rtol, atol = HALF_TOL[dtype]
            else:
                rtol, atol = 2e-2, 1e-2
            what = f"{name}(scores, mask) ({str(dtype).replace('torch.', '')}, 일부 줄은 전부 가림)"
            got = student.call(name, sc, keep)
            expect_tensor(got, what, shape=expected.shape, dtype=dtype, inputs=inputs)
            expect_device(got, device, what, inputs)
            assert_close(got, expected, what=what, inputs=inputs, rtol=rtol, atol=atol)
            blocked = ~keep.expand_as(got)
            if (got[blocked.to(got.device)] != 0).any():
                fail(f"{what}: 가린 위치의 가중치는 정확히 0 이어야 합니다", inputs)
            results.append(got)
        if not half:
            assert_close(
                results[1],
                results[0],
                what="두 방법의 결과가 같아야 합니다 (renorm vs fill)",
                inputs={"scores": scores, "mask": keep},
                rtol=1e-5,
                atol=1e-6,
            )
    # a broadcast (T, S) mask with T != S, and normalising along dim=-2 (transposed layout)
    scores = (torch.randn(2, 3, 5, generator=rng) * 2).to(device)
    keep = ref.causal_mask(3, 5, device=device)
    for name in names:
        inputs = {"scores": scores, "mask": keep}
        got = student.call(name, scores, keep)
        assert_close(
            got,
            ref.masked_softmax(scores, keep),
            what=f"{name}(scores (2,3,5), causal (3,5))",
            inputs=inputs,
            rtol=1e-5,
            atol=1e-6,
        )
        st, kt = scores.transpose(-1, -2), keep.transpose(-1, -2)
        got = student.call(name, st, kt, dim=-2)
        assert_close(
            got,
            ref.masked_softmax(st, kt, dim=-2),
            what=f"{name}(scores, mask, dim=-2)",
            inputs={"scores": st, "mask": kt},
            rtol=1e-5,
            atol=1e-6,
        )


# ---------------------------------------------------------------- CausalAttention

WEIGHTS = ("W_query", "W_key", "W_value")


def _judge_weights(rng, d_in, d_out, bias, device):
    """Random weights from the judge (not the student's init), as a state_dict."""
    sd = {}
    bound = 1.0 / math.sqrt(d_in)
    for name in WEIGHTS:
        sd[f"{name}.weight"] = ((torch.rand(d_out, d_in, generator=rng) * 2 - 1) * bound).to(device)
        if bias:
            sd[f"{name}.bias"] = ((torch.rand(d_out, generator=rng) * 2 - 1) * bound).to(device)
    return sd


def _reference(kwargs, sd, device):
    m = ref.CausalAttention(**kwargs).to(device)
    m.load_state_dict(sd, strict=False)  # the reference's persistent mask buffer keeps its value
    return m


def _state_for_student(student, kwargs, sd, device):
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


@check("test_causal_attention")
def causal_attention(student, rng, device):
    if not student.has("CausalAttention"):
        fail("CausalAttention이(가) 정의되지 않았습니다 (클래스 이름을 바꾸지 마세요)")
    configs = [
        dict(d_in=5, d_out=4, context_length=8, dropout=0.0, qkv_bias=False),
        dict(d_in=3, d_out=6, context_length=6, dropout=0.5, qkv_bias=True),
    ]
    for kwargs in configs:
        sd = _judge_weights(rng, kwargs["d_in"], kwargs["d_out"], kwargs["qkv_bias"], device)
        state = _state_for_student(student, kwargs, sd, device)
        model = _reference(kwargs, sd, device).eval()
        desc = ", ".join(f"{k}={v}" for k, v in kwargs.items())
        for T in (kwargs["context_length"], 3):
            x = torch.randn(2, T, kwargs["d_in"], generator=rng).to(device)
            inputs = {"x": x}
            out = student.module(
                "CausalAttention", kwargs, state_dict=state, inputs=(x,), train=False
            )
            got = out["output"]
            what = f"CausalAttention({desc}).eval()(x), x.shape={tuple(x.shape)}"
            expect_tensor(got, what, shape=(2, T, kwargs["d_out"]), dtype=x.dtype, inputs=inputs)
            expect_device(got, device, what, inputs)
            assert_close(got, model(x), what=what, inputs=inputs, rtol=1e-4, atol=1e-5)

    # gradients w.r.t. the weights and the input (eval mode)
    kwargs = configs[1]
    sd = _judge_weights(rng, kwargs["d_in"], kwargs["d_out"], True, device)
    state = _state_for_student(student, kwargs, sd, device)
    x = torch.randn(3, 5, kwargs["d_in"], generator=rng).to(device)
    model = _reference(kwargs, sd, device).eval()
    xr = x.clone().requires_grad_(True)
    model(xr).float().sum().backward()
    out = student.module(
        "CausalAttention", kwargs, state_dict=state, inputs=(x,), train=False, grad=True
    )
    grads = out["grads"]
    expected = {"input0": xr.grad, **{n: p.grad for n, p in model.named_parameters()}}
    for name, g in expected.items():
        what = f"CausalAttention 의 기울기(gradient) {name}"
        if name not in grads:
            fail(f"{what}: 기울기가 없습니다")
        assert_close(grads[name], g, what=what, inputs={"x": x}, rtol=1e-4, atol=1e-5)

    # dropout: on in train(), off in eval()
    kwargs = dict(d_in=4, d_out=4, context_length=10, dropout=0.5, qkv_bias=False)
    sd = _judge_weights(rng, 4, 4, False, device)
    state = _state_for_student(student, kwargs, sd, device)
    x = torch.randn(4, 10, 4, generator=rng).to(device)
    expected = _reference(kwargs, sd, device).eval()(x)
    what = "CausalAttention(dropout=0.5).eval()(x): eval 에서는 드롭아웃이 꺼져야 합니다"
    for seed in (1, 2):
        ev = student.module("CausalAttention", kwargs, state_dict=state, inputs=(x,), seed=seed)
        assert_close(ev["output"], expected, what=what, inputs={"x": x}, rtol=1e-4, atol=1e-5)
    tr = student.module(
        "CausalAttention", kwargs, state_dict=state, inputs=(x,), train=True, seed=3
    )
    got = expect_tensor(
        tr["output"], "CausalAttention(dropout=0.5).train()(x)", shape=expected.shape
    )
    if torch.allclose(got.cpu(), expected.cpu(), rtol=1e-4, atol=1e-5):
        fail(
            "CausalAttention(dropout=0.5).train()(x): train 모드에서는 어텐션 가중치에 드롭아웃이 "
            "적용되어 eval 출력과 달라야 합니다 (self.dropout 을 forward 에서 쓰세요)"
        )
    kwargs0 = dict(kwargs, dropout=0.0)
    tr0 = student.module("CausalAttention", kwargs0, state_dict=state, inputs=(x,), train=True)
    assert_close(
        tr0["output"],
        expected,
        what="CausalAttention(dropout=0.0).train()(x)",
        inputs={"x": x},
        rtol=1e-4,
        atol=1e-5,
    )
