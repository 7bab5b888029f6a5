"""Hidden checks for assignment ``multihead`` (chapter 4: 멀티헤드 어텐션).

- split_heads / merge_heads: exact comparison with ``solutions.multihead`` on several shapes and
  dtypes, and merge_heads on a non-contiguous input.
- MultiHeadAttentionWrapper and MultiHeadAttention: the judge draws the weights, loads them into
  the student's module (strict load_state_dict under the names the notebook fixes) and into the
  reference, then compares eval outputs (float32, float64, bfloat16), gradients, and train-mode
  outputs under a shared seed (dropout on the attention weights, exactly). Masks of several
  shapes, cross-attention with T != S, fully blocked query rows and scores far beyond a -1e9
  fill test the masking.
- mha_parameter_count: a data function (ints, up to values past int32).
- nn.MultiheadAttention: its state and its bool masks (True = blocked) go through the student's
  converters into the reference MultiHeadAttention, which must give nn.MultiheadAttention's
  output (the student's class is graded by its own items: one mistake, one item).

Ready-made attention (nn.MultiheadAttention, F.scaled_dot_product_attention) may not be used.
The checks of the attention modules take split_heads / merge_heads as given (``given`` marker):
the judge answers the student's calls of them, so a mistake there costs only its own item.
"""

import math

import pytest
import torch
import torch.nn as nn

from autograder.judge.checking import assert_close, fail, randn, seeded
from solutions import multihead as ref

F32, F64, BF16, F16 = torch.float32, torch.float64, torch.bfloat16, torch.float16
READY_MADE = ("MultiheadAttention", "scaled_dot_product_attention")
ROLES = ("W_query", "W_key", "W_value")
TOL = {F32: (1e-4, 1e-5), F64: (1e-7, 1e-9), BF16: (3e-2, 3e-2)}


def in_dtype(cls, dtype):
    """Subclass of ``cls`` converted to ``dtype`` after __init__ (as the notebook's given cell)."""

    class Converted(cls):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            self.to(dtype)

    return Converted


def class_name(base, dtype):
    return base if dtype == F32 else f"{base}_{str(dtype).removeprefix('torch.')}"


REFERENCE = {
    **vars(ref),
    "MultiHeadAttentionWrapper_float64": in_dtype(ref.MultiHeadAttentionWrapper, F64),
    "MultiHeadAttention_float64": in_dtype(ref.MultiHeadAttention, F64),
    "MultiHeadAttention_bfloat16": in_dtype(ref.MultiHeadAttention, BF16),
}


def name_of(dtype):
    return str(dtype).removeprefix("torch.")


# ----------------------------------------------------------------------------- split / merge

SPLIT = {
    "분할 (2, 5, 12), h=3": lambda rng, d: ("split_heads", randn(rng, 2, 5, 12, device=d), 3),
    "분할 h=1": lambda rng, d: ("split_heads", randn(rng, 1, 4, 6, device=d), 1),
    "분할 d_head=1 (h=d)": lambda rng, d: ("split_heads", randn(rng, 2, 3, 4, device=d), 4),
    "분할 T=1": lambda rng, d: ("split_heads", randn(rng, 3, 1, 8, device=d), 4),
    "분할 float64": lambda rng, d: ("split_heads", randn(rng, 2, 6, 8, dtype=F64, device=d), 2),
    "분할 bfloat16": lambda rng, d: ("split_heads", randn(rng, 2, 4, 12, dtype=BF16, device=d), 6),
    "분할 int64 (0, 1, 2, ...)": lambda rng, d: (
        "split_heads",
        torch.arange(2 * 3 * 8, device=d).view(2, 3, 8),
        2,
    ),
    "병합 (2, 3, 5, 4)": lambda rng, d: ("merge_heads", randn(rng, 2, 3, 5, 4, device=d), None),
    "병합 h=1": lambda rng, d: ("merge_heads", randn(rng, 2, 1, 5, 4, device=d), None),
    "분할 T=0 (빈 시퀀스)": lambda rng, d: ("split_heads", randn(rng, 2, 0, 12, device=d), 3),
    "병합 T=0 (빈 시퀀스)": lambda rng, d: (
        "merge_heads",
        randn(rng, 2, 3, 0, 4, device=d),
        None,
    ),
    "병합 float16": lambda rng, d: (
        "merge_heads",
        randn(rng, 1, 4, 3, 2, dtype=F16, device=d),
        None,
    ),
    "병합, 메모리가 연속이 아닌 입력": lambda rng, d: (
        "merge_heads",
        randn(rng, 2, 5, 3, 4, dtype=F64, device=d).transpose(1, 2),
        None,
    ),
}


def split_misconceptions(x, num_heads):
    B, T, d = x.shape
    return {
        "x.view(B, num_heads, T, d_head) 로 바로 모양을 바꾸었습니다: 메모리 순서는 (B, T, d) "
        "이므로 위치와 특징이 뒤섞입니다. view(B, T, num_heads, d_head) 로 마지막 차원만 나눈 뒤 "
        "transpose(1, 2) 로 헤드 축을 T 앞으로 옮기세요": lambda: x.reshape(
            B, num_heads, T, d // num_heads
        ),
    }


def merge_misconceptions(x):
    B, h, T, d_head = x.shape
    return {
        "transpose 없이 (B, h, T, d_head) 를 바로 (B, T, h * d_head) 로 바꾸었습니다: 헤드와 "
        "위치가 뒤섞입니다. 먼저 transpose(1, 2) 로 (B, T, h, d_head) 를 만든 뒤 "
        ".contiguous().view(...) (또는 reshape) 하세요": lambda: x.reshape(B, T, h * d_head),
    }


@pytest.mark.parametrize("case", list(SPLIT))
def test_split_heads(student, rng, device, case):
    name, x, h = SPLIT[case](rng, device)
    args = (x, h) if h is not None else (x,)
    expected = ref.split_heads(x, h) if h is not None else ref.merge_heads(x)
    got = student.call(name, *args)
    inputs = {"x": x, "num_heads": h} if h is not None else {"x": x}
    known = split_misconceptions(x, h) if h is not None else merge_misconceptions(x)
    assert_close(got, expected, f"{name} [{case}]", inputs, 0, 0, misconceptions=known)
    if h is not None:  # and back: merge_heads(split_heads(x)) == x
        back = student.call("merge_heads", expected)
        what = f"merge_heads(split_heads(x)) [{case}]"
        known = merge_misconceptions(expected)
        assert_close(back, x, what, {"x": x}, 0, 0, misconceptions=known)


# ----------------------------------------------------------------------------- weights


def uniform(rng, *shape, bound, dtype, device):
    return ((torch.rand(*shape, generator=rng, dtype=F64) * 2 - 1) * bound).to(device, dtype)


def linear_state(rng, prefix, d_in, d_out, bias, dtype, device, scale=1.0):
    """Weights of ``prefix`` = nn.Linear(d_in, d_out): weight (d_out, d_in), bias (d_out,)."""
    bound = scale / math.sqrt(d_in)
    sd = {f"{prefix}.weight": uniform(rng, d_out, d_in, bound=bound, dtype=dtype, device=device)}
    if bias:
        sd[f"{prefix}.bias"] = uniform(rng, d_out, bound=bound, dtype=dtype, device=device)
    return sd


def mha_state(rng, cfg, dtype, device, qk_scale=1.0):
    """Judge's weights for MultiHeadAttention(**cfg); qk_scale enlarges W_query and W_key."""
    sd = {}
    for role in ROLES:
        scale = qk_scale if role != "W_value" else 1.0
        sd |= linear_state(
            rng, role, cfg["d_in"], cfg["d_out"], cfg.get("qkv_bias", False), dtype, device, scale
        )
    sd |= linear_state(rng, "out_proj", cfg["d_out"], cfg["d_out"], True, dtype, device)
    return sd


def wrapper_state(rng, cfg, dtype, device):
    sd = {}
    for i in range(cfg["num_heads"]):
        for role in ROLES:
            sd |= linear_state(
                rng,
                f"heads.{i}.{role}",
                cfg["d_in"],
                cfg["d_out"],
                cfg.get("qkv_bias", False),
                dtype,
                device,
            )
    return sd


def state_for_student(student, name, cfg, sd, device, dtype):
    """The judge's weights plus the student's own mask buffers; Korean errors for wrong names."""
    state = student.module(name, cfg, method=None)["state"]  # built, not run
    missing = [k for k in sd if k not in state]
    if missing:
        parts = [k.split(".", 1) for k in missing if "." in k]
        renamed = any(k.endswith("." + rest) or k == rest for _, rest in parts for k in state)
        no_bias = all(
            k.endswith(".bias") and k[: -len("bias")] + "weight" in state for k in missing
        )
        hint = (
            " 편향(bias)만 없습니다: qkv_bias 인자를 쓰지 않았습니다. nn.Linear(d_in, d_out, "
            "bias=qkv_bias) 에 (래퍼라면 CausalAttention(..., qkv_bias) 에) 넘기세요."
            if no_bias
            else f" self.{parts[0][0]} 의 하위 모듈이 하나도 등록되지 않았습니다: 파이썬 list 에 "
            "담은 모듈은 nn.Module 이 모르므로 state_dict, parameters(), .to(device) 에서 "
            "빠집니다. nn.ModuleList([...]) 에 담으세요."
            if parts and not renamed
            else " 노트북이 정한 이름(nn.Linear 속성 이름)을 지키세요."
        )
        fail(
            f"{name}: state_dict에 {', '.join(missing[:6])} 이(가) 없습니다.{hint} "
            f"여러분 모듈의 키: {sorted(state)[:10]}"
        )
    extra = [k for k in state if k not in sd and "mask" not in k.rsplit(".", 1)[-1]]
    if extra:
        fail(
            f"{name}: state_dict에 정해지지 않은 항목 {', '.join(extra[:6])} 이(가) 있습니다. "
            "노트북이 정한 파라미터 외에는 만들지 마세요"
        )
    for k, v in sd.items():
        got = state[k]
        if not isinstance(got, torch.Tensor) or tuple(got.shape) != tuple(v.shape):
            shape = tuple(got.shape) if isinstance(got, torch.Tensor) else type(got).__name__
            fail(
                f"{name}: {k} 의 모양이 {tuple(v.shape)} 이어야 하는데 {shape} 입니다 "
                "(nn.Linear(d_in, d_out) 의 weight 는 (d_out, d_in))"
            )
    full = {k: v.to(device) for k, v in state.items() if isinstance(v, torch.Tensor)}
    full.update(sd)
    return full


def reference_module(cls, cfg, sd, device, dtype):
    m = cls(**cfg).to(device=device, dtype=dtype)
    m.load_state_dict(sd, strict=True)
    return m


def run_both(student, base, cfg, sd, inputs, input_kwargs, device, dtype, mode, case):
    """Run the student's and the reference module the same way; compare the outputs.

    mode: "eval", "train" (shared forward seed) or "grad" (eval, compare gradients too).
    """
    name = class_name(base, dtype)
    state = state_for_student(student, name, cfg, sd, device, dtype)
    model = reference_module(REFERENCE[name], cfg, sd, device, dtype)
    train = mode == "train"
    model.train(train)
    seed = 1000 + len(case)
    shown = {f"x{i}" if i else "x": t for i, t in enumerate(inputs)} | dict(input_kwargs)
    what = f"{name}({', '.join(f'{k}={v}' for k, v in cfg.items())}) [{case}]"
    out = student.module(
        name,
        cfg,
        state_dict=state,
        inputs=inputs,
        input_kwargs=input_kwargs,
        train=train,
        grad=mode == "grad",
        forward_seed=seed if train else None,
    )
    ref_inputs = [x.detach().clone().requires_grad_(mode == "grad") for x in inputs]
    with torch.set_grad_enabled(mode == "grad"), seeded(seed, device):
        expected = model(*ref_inputs, **input_kwargs)
    rtol, atol = TOL[dtype]
    if train:
        what += " (train 모드, 같은 시드: 드롭아웃은 self.dropout 으로 어텐션 가중치에 한 번)"
    known = None if train else MISCONCEPTIONS[base](model, *inputs, **input_kwargs)
    assert_close(out["output"], expected, what, shown, rtol, atol, misconceptions=known)
    if mode == "grad":
        expected.float().sum().backward()
        want = {"input0": ref_inputs[0].grad, **{n: p.grad for n, p in model.named_parameters()}}
        for key, g in want.items():
            if key not in out["grads"]:
                fail(f"{what}: {key} 의 그래디언트(gradient)가 없습니다", shown)
            assert_close(
                out["grads"][key],
                g,
                what=f"{what}: {key} 의 그래디언트",
                inputs=shown,
                rtol=1e-4,
                atol=1e-5,
            )


# ----------------------------------------------------------------------------- misconceptions
# Known mistakes, and the value each gives on a check's inputs (None where those inputs cannot
# show it): a wrong result that matches one is named in the feedback (checking.diagnose). The
# modules' values come from the reference module holding the same weights, in eval mode.


def given_masked_softmax(scores, mask):
    """The notebook's given masked_softmax (finfo.min fill, blocked weights set to 0)."""
    if mask is None:
        return torch.softmax(scores, dim=-1)
    filled = scores.masked_fill(~mask, torch.finfo(scores.dtype).min)
    return torch.softmax(filled, dim=-1).masked_fill(~mask, 0.0)


def wrapper_misconceptions(model, x):
    @torch.no_grad()
    def outputs():  # each head's output (B, T, d_out), eval mode
        return [head(x) for head in model.heads]

    h = len(model.heads)
    return {
        "헤드의 출력을 더했습니다: 각 헤드의 출력 (B, T, d_out) 을 마지막 차원으로 이어 붙여 "
        "(torch.cat(..., dim=-1)) (B, T, num_heads * d_out) 를 만드세요": lambda: torch.stack(
            outputs()
        ).sum(dim=0),
        "모든 헤드가 같은 모듈(같은 가중치)입니다: [CausalAttention(...)] * num_heads 는 모듈 "
        "하나를 num_heads 번 담습니다. 헤드마다 새 모듈을 만드세요 (리스트 컴프리헨션)": lambda: (
            None if h < 2 else torch.cat([outputs()[-1]] * h, dim=-1)
        ),
    }


@torch.no_grad()
def mha_variant(m, x, context=None, mask=None, **mistake):
    """The reference MultiHeadAttention m's forward (eval) with one known mistake: d (scores
    divided by sqrt(d)), no_out_proj, masks ("or": mask | causal, "causal": the mask argument
    ignored, "cross": causal rule in cross-attention too), fill (blocked scores filled with it,
    plain softmax), float32 (the weights computed in float32)."""
    source = x if context is None else context
    q, k, v = (
        ref.split_heads(w(s), m.num_heads)
        for w, s in ((m.W_query, x), (m.W_key, source), (m.W_value, source))
    )
    scores = q @ k.transpose(-2, -1) / math.sqrt(mistake.get("d", m.head_dim))
    rule = mistake.get("masks", "and")
    if rule == "causal":
        mask = None
    if m.causal and (context is None or rule == "cross"):
        causal = ref.causal_mask(x.shape[1], source.shape[1], device=x.device)
        mask = causal if mask is None else mask | causal if rule == "or" else mask & causal
    if "fill" in mistake and mask is not None:
        weights = torch.softmax(scores.masked_fill(~mask, mistake["fill"]), dim=-1)
    elif mistake.get("float32"):
        weights = given_masked_softmax(scores.float(), mask).to(v.dtype)
    else:
        weights = given_masked_softmax(scores, mask)
    out = ref.merge_heads(weights @ v)
    return out if mistake.get("no_out_proj") else m.out_proj(out)


def mha_misconceptions(model, x, context=None, mask=None):
    h, d_in, d_out = model.num_heads, model.W_query.in_features, model.d_out

    def variant(**mistake):
        return mha_variant(model, x, context, mask, **mistake)

    return {
        "점수를 √d_out 으로 나누었습니다: 각 헤드의 내적은 head_dim = d_out // num_heads "
        "차원이므로 √head_dim 으로 나누세요": lambda: None if h == 1 else variant(d=d_out),
        "head_dim 을 d_in // num_heads 로 계산했습니다: 헤드는 투영된 d_out 을 나누므로 head_dim = "
        "d_out // num_heads 이고, 점수는 √head_dim 으로 나눕니다": lambda: (
            None if d_in == d_out else variant(d=d_in // h)
        ),
        "출력 투영(out_proj)을 적용하지 않았습니다: 헤드를 합친 (B, T, d_out) 에 self.out_proj 를 "
        "적용해 돌려주세요": lambda: variant(no_out_proj=True),
        "mask 인자를 쓰지 않았습니다: 주어진 mask 를 인과 마스크와 AND(&) 로 합쳐 적용하세요 "
        "(인과 마스크가 없으면 mask 그대로)": lambda: (
            None if mask is None else variant(masks="causal")
        ),
        "mask 와 인과 마스크를 OR(|) 로 합쳤습니다: True 가 '볼 수 있음' 이므로 두 마스크가 모두 "
        "허락한 위치만 남도록 AND(&) 로 합치세요": lambda: (
            None if mask is None else variant(masks="or")
        ),
        "크로스 어텐션(context 가 주어짐)에도 인과 마스크를 적용했습니다: 키와 값이 다른 "
        "시퀀스에서 오므로 인과 규칙은 context 가 없을 때만 적용합니다": lambda: (
            None if context is None else variant(masks="cross")
        ),
        "막힌 점수를 -inf 로 채워서 모든 키가 막힌 쿼리 행이 NaN 이 되었습니다: "
        "torch.finfo(dtype).min 으로 채우고, 소프트맥스 뒤에 막힌 위치를 0 으로 만드세요 (주어진 "
        "masked_softmax)": lambda: variant(fill=float("-inf")),
        "모든 키가 막힌 쿼리 행이 균등 분포(1/S)가 되었습니다: 막힌 점수를 유한한 값(-1e9, "
        "finfo.min 등)으로 채우면 그 행의 값이 모두 같아 소프트맥스가 고르게 나눕니다. 소프트맥스 "
        "뒤에 막힌 위치를 0 으로 만드세요 (주어진 masked_softmax)": lambda: variant(
            fill=torch.finfo(x.dtype).min
        ),
        "float64 모듈에서 어텐션 가중치를 float32 로 계산했습니다 (scores.float()): 정밀도를 잃지 "
        "않도록 입력의 dtype 그대로 계산하세요": lambda: (
            variant(float32=True) if x.dtype == F64 else None
        ),
    }


MISCONCEPTIONS = {
    "MultiHeadAttentionWrapper": wrapper_misconceptions,
    "MultiHeadAttention": mha_misconceptions,
}


# ----------------------------------------------------------------------------- wrapper


def wcfg(d_in, d_out, ctx, h, dropout=0.0, bias=False):
    return dict(
        d_in=d_in, d_out=d_out, context_length=ctx, dropout=dropout, num_heads=h, qkv_bias=bias
    )


# label -> (config, (B, T), dtype, mode)
WRAPPER = {
    "h=2, d_out=2": (wcfg(3, 2, 6, 2), (2, 6), F32, "eval"),
    "h=4, qkv_bias, T < context_length": (wcfg(5, 3, 10, 4, bias=True), (3, 7), F32, "eval"),
    "h=1": (wcfg(4, 4, 5, 1), (2, 5), F32, "eval"),
    "T=1": (wcfg(4, 2, 5, 3), (2, 1), F32, "eval"),
    "float64": (wcfg(6, 2, 8, 3, bias=True), (2, 8), F64, "eval"),
    "dropout=0.5, eval()": (wcfg(4, 3, 6, 3, dropout=0.5), (2, 6), F32, "eval"),
    "dropout=0.5, train(), 같은 시드": (wcfg(4, 3, 6, 3, dropout=0.5), (2, 6), F32, "train"),
    "그래디언트": (wcfg(4, 2, 6, 2, bias=True), (2, 5), F32, "grad"),
}


@pytest.mark.forbid(*READY_MADE)
@pytest.mark.parametrize("case", list(WRAPPER))
def test_wrapper(student, rng, device, case):
    cfg, (B, T), dtype, mode = WRAPPER[case]
    sd = wrapper_state(rng, cfg, dtype, device)
    x = randn(rng, B, T, cfg["d_in"], dtype=dtype, device=device)
    run_both(student, "MultiHeadAttentionWrapper", cfg, sd, (x,), {}, device, dtype, mode, case)


# ----------------------------------------------------------------------------- MultiHeadAttention


def mcfg(d_in, d_out, ctx, h, dropout=0.0, bias=False, causal=True):
    return dict(wcfg(d_in, d_out, ctx, h, dropout, bias), causal=causal)


MHA = {
    "causal=True, h=2, d_out=2": (mcfg(3, 2, 6, 2), (2, 6), F32, "eval"),
    "causal=True, qkv_bias, d_in != d_out, T < context_length": (
        mcfg(8, 16, 12, 4, bias=True),
        (3, 9),
        F32,
        "eval",
    ),
    "causal=False": (mcfg(6, 6, 8, 3, causal=False), (2, 5), F32, "eval"),
    "h=1": (mcfg(4, 4, 5, 1), (2, 5), F32, "eval"),
    "d_head=1 (h=d_out)": (mcfg(5, 4, 6, 4, bias=True), (2, 6), F32, "eval"),
    "T=1": (mcfg(4, 8, 6, 2), (3, 1), F32, "eval"),
    "float64": (mcfg(6, 12, 8, 3, bias=True), (2, 8), F64, "eval"),
    "bfloat16": (mcfg(8, 8, 8, 2, bias=True), (2, 8), BF16, "eval"),
    "dropout=0.3, eval()": (mcfg(6, 6, 7, 3, dropout=0.3), (2, 7), F32, "eval"),
    "dropout=0.3, train(), 같은 시드": (mcfg(6, 6, 7, 3, dropout=0.3), (2, 7), F32, "train"),
    "dropout=0.5, causal=False, train(), 같은 시드": (
        mcfg(4, 8, 6, 2, dropout=0.5, bias=True, causal=False),
        (3, 6),
        F32,
        "train",
    ),
    "그래디언트, qkv_bias": (mcfg(6, 6, 6, 2, bias=True), (2, 6), F32, "grad"),
}


@pytest.mark.given(split_heads=ref.split_heads, merge_heads=ref.merge_heads)
@pytest.mark.forbid(*READY_MADE)
@pytest.mark.parametrize("case", list(MHA))
def test_multihead_attention(student, rng, device, case):
    cfg, (B, T), dtype, mode = MHA[case]
    sd = mha_state(rng, cfg, dtype, device)
    x = randn(rng, B, T, cfg["d_in"], dtype=dtype, device=device)
    run_both(student, "MultiHeadAttention", cfg, sd, (x,), {}, device, dtype, mode, case)


# ----------------------------------------------------------------------------- masks, cross


def lengths_mask(lengths, S, device):
    """(B, 1, 1, S) keep-mask: position < length."""
    return (torch.arange(S)[None, :] < torch.tensor(lengths)[:, None])[:, None, None, :].to(device)


def random_keep(rng, *shape, device):
    keep = torch.rand(*shape, generator=rng) < 0.7
    keep[..., 0] = True  # every query keeps a key
    return keep.to(device)


def blocked_row(device):
    keep = torch.ones(2, 1, 5, 5, dtype=torch.bool)
    keep[1, 0, 2] = False  # query 2 of the second sequence sees nothing
    keep[0, 0, :, 3] = False
    return keep.to(device)


# label -> (rng, device) -> (config, x, kwargs, dtype, mode, qk_scale)
MASKS = {
    "mask (B,h,T,S), causal=True": lambda rng, d: (
        mcfg(6, 6, 6, 3),
        randn(rng, 2, 5, 6, device=d),
        {"mask": random_keep(rng, 2, 3, 5, 5, device=d)},
    ),
    "패딩 (B,1,1,S), causal=True": lambda rng, d: (
        mcfg(6, 6, 8, 2, bias=True),
        randn(rng, 3, 7, 6, device=d),
        {"mask": lengths_mask([7, 4, 1], 7, d)},
    ),
    "크로스 어텐션, 쿼리 길이 T=0, S=4": lambda rng, d: (
        mcfg(6, 6, 6, 3, causal=False),
        randn(rng, 2, 0, 6, device=d),
        {"context": randn(rng, 2, 4, 6, device=d)},
    ),
    "mask (T,S), causal=False": lambda rng, d: (
        mcfg(4, 8, 6, 4, causal=False),
        randn(rng, 2, 6, 4, device=d),
        {"mask": random_keep(rng, 6, 6, device=d)},
    ),
    "크로스 어텐션 T=3, S=7, 패딩": lambda rng, d: (
        mcfg(8, 8, 8, 2, bias=True),
        randn(rng, 2, 3, 8, device=d),
        {"context": randn(rng, 2, 7, 8, device=d), "mask": lengths_mask([7, 2], 7, d)},
    ),
    "크로스 어텐션 T=6 > S=2, causal=True (적용 안 됨)": lambda rng, d: (
        mcfg(4, 4, 8, 2),
        randn(rng, 2, 6, 4, device=d),
        {"context": randn(rng, 2, 2, 4, device=d)},
    ),
    "크로스 어텐션 float64, mask (B,1,T,S)": lambda rng, d: (
        mcfg(6, 6, 8, 3, bias=True, causal=False),
        randn(rng, 2, 4, 6, dtype=F64, device=d),
        {
            "context": randn(rng, 2, 5, 6, dtype=F64, device=d),
            "mask": random_keep(rng, 2, 1, 4, 5, device=d),
        },
        F64,
    ),
    "모든 키가 막힌 쿼리 행 -> 가중치 0": lambda rng, d: (
        mcfg(4, 4, 5, 2, bias=True, causal=False),
        randn(rng, 2, 5, 4, device=d),
        {"mask": blocked_row(d)},
    ),
    "크로스 어텐션, 길이 0인 시퀀스": lambda rng, d: (
        mcfg(4, 4, 5, 2, bias=True),
        randn(rng, 2, 3, 4, device=d),
        {"context": randn(rng, 2, 4, 4, device=d), "mask": lengths_mask([4, 0], 4, d)},
    ),
    "점수 ~1e6 (float32), 패딩": lambda rng, d: (
        mcfg(4, 4, 6, 2),
        randn(rng, 2, 6, 4, scale=30.0, device=d),
        {"mask": lengths_mask([6, 3], 6, d)},
        F32,
        "eval",
        300.0,
    ),
    "점수 ~1e13 (float64), causal=True": lambda rng, d: (
        mcfg(4, 4, 6, 2, causal=True),
        randn(rng, 3, 6, 4, scale=1e3, dtype=F64, device=d),
        {},
        F64,
        "eval",
        3e3,
    ),
    "dropout=0.4, 크로스 어텐션, train(), 같은 시드": lambda rng, d: (
        mcfg(6, 6, 8, 2, dropout=0.4, bias=True),
        randn(rng, 2, 3, 6, device=d),
        {"context": randn(rng, 2, 5, 6, device=d), "mask": lengths_mask([5, 3], 5, d)},
        F32,
        "train",
    ),
    "크로스 어텐션 T=S=5, causal=True (길이가 같아도 적용 안 됨)": lambda rng, d: (
        mcfg(4, 4, 8, 2),
        randn(rng, 2, 5, 4, device=d),
        {"context": randn(rng, 2, 5, 4, device=d)},
    ),
}


@pytest.mark.given(split_heads=ref.split_heads, merge_heads=ref.merge_heads)
@pytest.mark.forbid(*READY_MADE)
@pytest.mark.parametrize("case", list(MASKS))
def test_mha_mask_cross(student, rng, device, case):
    cfg, x, kwargs, *rest = MASKS[case](rng, device)
    dtype, mode, qk_scale = list(rest) + [F32, "eval", 1.0][len(rest) :]
    sd = mha_state(rng, cfg, dtype, device, qk_scale=qk_scale)
    run_both(student, "MultiHeadAttention", cfg, sd, (x,), kwargs, device, dtype, mode, case)


# ----------------------------------------------------------------------------- parameter count

COUNT = {
    "d=768": ((768,), {}),
    "d=768, bias=False": ((768,), {"bias": False}),
    "d=1": ((1,), {}),
    "d=0": ((0,), {}),
    "d=64, bias=False (위치 인자)": ((64, False), {}),
    "d=12288 (GPT-3)": ((12288,), {}),
    "d=100000 (int32 범위 초과)": ((100_000,), {"bias": True}),
    "d=10**12 (float64의 정확한 정수 범위 초과)": ((10**12,), {}),
}


def count_misconceptions(d_model, bias=True):
    return {
        "출력 투영(out_proj)을 빼고 세었습니다: 쿼리·키·값·출력의 d_model × d_model 행렬 네 "
        "개(4 d²)와 편향 4 d 입니다": lambda: 3 * d_model * d_model + (3 * d_model if bias else 0),
        "d_model ** 2.0 처럼 float 로 계산해 큰 d_model 에서 정밀도를 잃었습니다 (float64 는 2⁵³ "
        "까지의 정수만 정확합니다): 정수 연산(d_model * d_model)만 쓰세요": lambda: int(
            4 * d_model**2.0 + (4 * d_model if bias else 0)
        ),
    }


@pytest.mark.parametrize("case", list(COUNT))
def test_parameter_count(student, rng, device, case):
    args, kwargs = COUNT[case]
    got = student.call("mha_parameter_count", *args, **kwargs)
    expected = ref.mha_parameter_count(*args, **kwargs)
    inputs = {"d_model": args[0], "bias": args[1] if len(args) > 1 else kwargs.get("bias", True)}
    what, known = (
        f"mha_parameter_count [{case}] (파이썬 int)",
        count_misconceptions(*args, **kwargs),
    )
    assert_close(got, expected, what, inputs, misconceptions=known)


# ------------------------------------------------------------------ nn.MultiheadAttention


def torch_mha(rng, d, h, bias, dtype, device):
    """nn.MultiheadAttention(batch_first=True) with weights drawn from ``rng`` (biases non-zero)."""
    m = nn.MultiheadAttention(d, h, bias=bias, batch_first=True, device=device, dtype=dtype)
    with torch.no_grad():
        for p in m.parameters():
            p.copy_(uniform(rng, *p.shape, bound=1.0 / math.sqrt(d), dtype=dtype, device=device))
    return m.eval()


def causal_blocked(T, device):
    return torch.ones(T, T, dtype=torch.bool).triu(1).to(device)


def padding_blocked(lengths, S, device):
    return (torch.arange(S)[None, :] >= torch.tensor(lengths)[:, None]).to(device)


def random_blocked(rng, T, S, device):
    blocked = torch.rand(T, S, generator=rng) < 0.3
    blocked[:, 0] = False
    return blocked.to(device)


# label -> (d, h, bias, dtype, (B, T, S or None), causal, attn_mask fn, key padding lengths)
TORCH = {
    "attn_mask 인과적 + key_padding_mask": (
        8,
        2,
        True,
        F32,
        (3, 6, None),
        False,
        "causal",
        [6, 4, 1],
    ),
    "bias=False (state에 편향 없음)": (8, 4, False, F32, (2, 5, None), False, "causal", None),
    "float64, bias=False (float64 편향 0)": (
        8,
        4,
        False,
        F64,
        (2, 5, None),
        False,
        "causal",
        None,
    ),
    "마스크 없음": (6, 3, True, F32, (2, 4, None), False, None, None),
    "causal=True 모듈, 무작위 attn_mask + key_padding_mask": (
        8,
        2,
        True,
        F32,
        (2, 6, None),
        True,
        "random",
        [6, 3],
    ),
    "causal=True 모듈, key_padding_mask만": (
        8,
        2,
        True,
        F32,
        (2, 6, None),
        True,
        None,
        [6, 2],
    ),
    "크로스 어텐션 T=4, S=9, 무작위 attn_mask + 패딩": (
        12,
        3,
        True,
        F32,
        (2, 4, 9),
        False,
        "random",
        [9, 5],
    ),
    "float64, 크로스 어텐션, key_padding_mask": (6, 2, True, F64, (2, 3, 5), False, None, [5, 1]),
}


def state_misconceptions(expected, key):
    return {
        "가중치를 전치(.T)했습니다: in_proj_weight 의 세 덩어리와 out_proj.weight 는 이미 "
        "nn.Linear 의 weight 와 같은 (out, in) 모양이므로 그대로 씁니다": lambda: (
            expected[key].T if key.endswith(".weight") else None
        ),
    }


def keep_misconceptions(attn_mask=None, key_padding_mask=None):
    pad = None if key_padding_mask is None else ~key_padding_mask[:, None, None, :]
    return {
        "attn_mask 를 뒤집지 않았습니다: nn.MultiheadAttention 의 bool 마스크는 True 가 '막힘' "
        "이고 이 과정의 mask 는 True 가 '볼 수 있음' 이므로 ~attn_mask 로 뒤집으세요": lambda: (
            None if attn_mask is None else ref.keep_mask_from_torch(~attn_mask, key_padding_mask)
        ),
        "두 마스크를 OR(|) 로 합쳤습니다: 두 마스크가 모두 허락한 위치만 볼 수 있도록 AND(&) 로 "
        "합치세요": lambda: None if attn_mask is None or pad is None else ~attn_mask | pad,
    }


def compare_state(student, theirs_state, case):
    got = student.call("from_torch_mha_state", theirs_state)
    expected = ref.from_torch_mha_state(theirs_state)
    what = f"from_torch_mha_state [{case}]"
    shapes = dict(theirs_state)
    if not isinstance(got, dict) or sorted(got) != sorted(expected):
        keys = sorted(got) if isinstance(got, dict) else type(got).__name__
        fail(f"{what}: 키가 {sorted(expected)} 이어야 하는데 {keys} 입니다", shapes)
    for k, v in expected.items():
        known = state_misconceptions(expected, k)
        assert_close(got[k], v, f"{what}['{k}']", shapes, 0, 0, misconceptions=known)
    return got


def compare_keep(student, attn_mask, key_padding_mask, case):
    got = student.call("keep_mask_from_torch", attn_mask, key_padding_mask)
    expected = ref.keep_mask_from_torch(attn_mask, key_padding_mask)
    inputs = {"attn_mask": attn_mask, "key_padding_mask": key_padding_mask}
    what = f"keep_mask_from_torch [{case}]"
    if expected is None:
        if got is not None:
            fail(f"{what}: 마스크가 둘 다 None 이면 None 을 돌려주어야 합니다", inputs)
        return None
    known = keep_misconceptions(attn_mask, key_padding_mask)
    assert_close(got, expected, what, inputs, misconceptions=known)
    return got


@pytest.mark.forbid(*READY_MADE)
@pytest.mark.parametrize("case", list(TORCH))
def test_torch_mha(student, rng, device, case):
    d, h, bias, dtype, (B, T, S), causal, attn, lengths = TORCH[case]
    theirs = torch_mha(rng, d, h, bias, dtype, device)
    x = randn(rng, B, T, d, dtype=dtype, device=device)
    context = None if S is None else randn(rng, B, S, d, dtype=dtype, device=device)
    kv = x if context is None else context
    S = kv.shape[1]
    attn_mask = {None: None, "causal": causal_blocked(T, device)}.get(attn)
    if attn == "random":
        attn_mask = random_blocked(rng, T, S, device)
    kpm = None if lengths is None else padding_blocked(lengths, S, device)

    state = compare_state(student, dict(theirs.state_dict()), case)
    keep = compare_keep(student, attn_mask, kpm, case)

    with torch.no_grad():
        blocked = attn_mask
        if causal:
            rule = causal_blocked(T, device)
            blocked = rule if attn_mask is None else attn_mask | rule
        expected = theirs(x, kv, kv, attn_mask=blocked, key_padding_mask=kpm, need_weights=False)[0]
    # the student's converted state and keep-mask drive the reference class (the notebook):
    # their MultiHeadAttention is graded by its own items
    cfg = mcfg(d, d, max(T, 8), h, dropout=0.0, bias=bias, causal=causal)
    name = class_name("MultiHeadAttention", dtype)
    model = reference_module(REFERENCE[name], cfg, state, device, dtype)
    kwargs = {"mask": keep} | ({"context": context} if context is not None else {})
    with torch.no_grad():
        got = model.eval()(x, **kwargs)
    what = f"참조 MultiHeadAttention 에 여러분이 바꾼 가중치와 마스크를 넣은 출력 [{case}]"
    rtol, atol = TOL[dtype]
    shown = {"x": x, "attn_mask": attn_mask, "key_padding_mask": kpm}
    assert_close(got, expected, what, shown, max(rtol, 1e-5), atol)
