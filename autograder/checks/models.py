"""Hidden checks for assignment ``models`` (chapter 8: 트랜스포머 모델 계열).

The judge draws its own weights for every module, loads them (strict ``load_state_dict``) into
the student's module and into the reference from ``solutions.models`` and compares outputs:

- ``DecoderBlock``: pre-norm masked self-attention, cross-attention on ``memory`` and FFN, with
  T != S, padding masks on either attention, T = 1, gradients, dropout off in eval() and the
  same dropout masks as the reference in train() under the same seed.
- ``mlm_mask``: BERT's corruption, checked statistically (binomial tolerances of 5 sigma):
  independent Bernoulli selection of non-special tokens with probability p (the per-row count
  varies), 80/10/10 of the selected, uniform random ids, labels, dtype, device, seeds.
- ``GPTModel``: logits equal to the reference, weight tying (one shared Parameter, its gradient
  from both uses); test_gpt_causal alone: logits at position t unchanged (exactly) when tokens
  after t change, and changed where they change (one mistake, one item).
- ``apply_rope`` and ``ModernBlock``: RoPE with the "half" pairing, RMSNorm, grouped-query
  attention (MQA, GQA, MHA), SwiGLU, with masks and gradients.
"""

import copy
import functools
import math

import pytest
import torch

from autograder.judge.checking import (
    HALF_TOL,
    CheckFailed,
    assert_close,
    expect_device,
    expect_tensor,
    fail,
    seeded,
)
from solutions import models as ref
from solutions.positional import apply_rope, rope_angles

REFERENCE = {**vars(ref), "apply_rope": apply_rope}
READY_MADE = (
    "scaled_dot_product_attention",
    "MultiheadAttention",
    "TransformerDecoderLayer",
    "TransformerEncoderLayer",
    "Transformer",
)
TOL = {"rtol": 1e-4, "atol": 1e-5}
TIE_STEP_LR = 0.01  # one SGD step on sum(logits): tied and untied weights move apart
TIE_HINT = (
    "tie_weights=True 이면 lm_head.weight 와 tok_emb.weight 는 같은 Parameter 여야 합니다 "
    "(self.lm_head.weight = self.tok_emb.weight): 그래디언트는 두 쓰임의 합이고, 값만 복사하거나 "
    "저장 공간(.data)만 나누면 두 행렬이 따로 학습됩니다."
)
TIE_RTOL = 1e-2  # of the reference's move: rounding is ~1e-5 of it, an untied model ~1
GRAD_RTOL = 1e-4  # gradients: also the absolute tolerance, as a fraction of max |g|

# ----------------------------------------------------------------------------- weights


@torch.no_grad()
def judge_weights(model, rng, device):
    """Random weights for every tensor of ``model.state_dict()`` (norm gains around 1, so a norm
    used in the wrong place shows); loads them into ``model`` and returns them as a state_dict."""
    sd = {}
    shared = {}
    for name, t in model.state_dict(keep_vars=True).items():
        if id(t) in shared:  # a tied parameter: same values under both names
            sd[name] = sd[shared[id(t)]].clone()
            continue
        shared[id(t)] = name
        z = torch.randn(t.shape, generator=rng, dtype=torch.float64)
        if t.dim() >= 2:
            value = z / math.sqrt(t.shape[-1])
        elif "norm" in name and name.endswith("weight"):
            value = 1.0 + 0.3 * z
        else:
            value = 0.2 * z
        sd[name] = value.to(device, t.dtype)
    model.load_state_dict(sd, strict=True)
    return sd


def student_state(student, name, kwargs, sd, inputs, input_kwargs=None):
    """The judge's weights in the student's names, after checking names and shapes."""
    state = student.module(name, kwargs, inputs=inputs, input_kwargs=input_kwargs)["state"]
    missing = [k for k in sd if k not in state]
    if missing:
        fail(
            f"{name}: state_dict에 {', '.join(missing[:6])} 이(가) 없습니다. 노트북에 적힌 속성 "
            f"이름을 그대로 쓰세요 (여러분 모듈의 키: {', '.join(sorted(state)[:10])} ...)"
        )
    for k, v in sd.items():
        if tuple(state[k].shape) != tuple(v.shape):
            fail(
                f"{name}: {k} 의 모양이 {tuple(v.shape)} 이어야 하는데 "
                f"{tuple(state[k].shape)} 입니다"
            )
    extra = [k for k in state if k not in sd and k.rsplit(".", 1)[-1] in ("weight", "bias")]
    if extra:
        fail(
            f"{name}: 표에 없는 파라미터 {', '.join(extra[:6])} 이(가) 있습니다. "
            "노트북의 표에 있는 층만, 적힌 설정(bias 유무 등)으로 만드세요"
        )
    full = {k: v for k, v in state.items() if isinstance(v, torch.Tensor)}
    full.update(sd)
    return full


def cfg_text(kwargs):
    return ", ".join(f"{k}={v}" for k, v in kwargs.items())


def padding(lengths, S, device):
    """Keep-mask (B, 1, 1, S) from a list of lengths."""
    lengths = torch.tensor(lengths)
    return (torch.arange(S)[None, :] < lengths[:, None])[:, None, None, :].to(device)


def randn(rng, *shape, device):
    return torch.randn(*shape, generator=rng).to(device)


# ----------------------------------------------------------------------------- DecoderBlock

# case -> (init kwargs, B, T, S, self lengths or None, memory lengths or None, mode)
DECODER = {
    "T=5, S=7, 마스크 없음": (dict(d_model=16, num_heads=4, d_ff=32), 2, 5, 7, None, None, "eval"),
    "T=6 > S=3": (dict(d_model=12, num_heads=3, d_ff=20), 2, 6, 3, None, None, "eval"),
    "memory_mask 패딩 (B,1,1,S)": (
        dict(d_model=16, num_heads=2, d_ff=24),
        3,
        4,
        6,
        None,
        [6, 2, 1],
        "eval",
    ),
    "self_mask 패딩 (B,1,1,T) + memory_mask": (
        dict(d_model=8, num_heads=2, d_ff=16),
        2,
        5,
        4,
        [5, 3],
        [2, 4],
        "eval",
    ),
    "T=1": (dict(d_model=8, num_heads=4, d_ff=8), 2, 1, 5, None, None, "eval"),
    "eps=1e-3, 그래디언트(gradient)": (
        dict(d_model=8, num_heads=2, d_ff=16, eps=1e-3),
        2,
        4,
        5,
        None,
        [5, 3],
        "grad",
    ),
    "dropout=0.3, eval(): 드롭아웃 꺼짐": (
        dict(d_model=16, num_heads=4, d_ff=32, dropout=0.3),
        2,
        5,
        6,
        None,
        None,
        "eval",
    ),
    "dropout=0.25, train(), 같은 시드": (
        dict(d_model=16, num_heads=4, d_ff=32, dropout=0.25),
        2,
        5,
        6,
        [5, 4],
        [6, 3],
        "train",
    ),
}


# ----------------------------------------------------------------------------- misconceptions
# Known mistakes, and the value each gives on a check's inputs and weights (None where those
# inputs cannot show it): a wrong result that matches one is named (checking.diagnose).


@torch.no_grad()
def decoder_variant(model, x, memory, self_mask=None, memory_mask=None, **wrong):
    """The reference DecoderBlock (eval) with one step written wrong: ``post_norm``,
    ``one_norm`` (norm1 for all three), ``keys_from_x`` (cross-attention without memory),
    ``swap_masks``, ``eps`` (the norms' eps)."""
    m = copy.deepcopy(model).eval()
    if "eps" in wrong:
        for norm in (m.norm1, m.norm2, m.norm3):
            norm.eps = wrong["eps"]
    if wrong.get("post_norm"):
        m.norm_first = False
        return m(x, memory, self_mask=self_mask, memory_mask=memory_mask)
    if wrong.get("swap_masks"):
        self_mask, memory_mask = memory_mask, self_mask
    n1, n2, n3 = (m.norm1,) * 3 if wrong.get("one_norm") else (m.norm1, m.norm2, m.norm3)
    context = None if wrong.get("keys_from_x") else memory
    x = x + m.self_attn(n1(x), mask=self_mask)
    x = x + m.cross_attn(n2(x), context=context, mask=memory_mask)
    return x + m.ffn(n3(x))


def decoder_misconceptions(model, x, memory, self_mask=None, memory_mask=None):
    def wrong(**step):
        return decoder_variant(model, x, memory, self_mask, memory_mask, **step)

    return {
        "사후 정규화(post-norm)로 썼습니다: x = norm(x + 부분 층(x)) 이 아니라, 사전 정규화"
        "(pre-norm)는 부분 층의 입력만 정규화하고 잔차 연결은 정규화 없이 더합니다 "
        "(x = x + 부분 층(norm(x)))": lambda: wrong(post_norm=True),
        "크로스 어텐션의 키와 값을 디코더 입력에서 만들었습니다: 쿼리는 디코더(norm2(x))에서, 키와 "
        "값은 인코더 출력 memory 에서 만드세요 (context=memory)": lambda: wrong(keys_from_x=True),
        "self_mask 와 memory_mask 를 바꾸어 넘겼습니다: self_mask 는 셀프 어텐션에, memory_mask 는 "
        "크로스 어텐션에 넘기세요": lambda: wrong(swap_masks=True),
        "세 부분 층이 모두 norm1 을 썼습니다: 셀프 어텐션은 norm1, 크로스 어텐션은 norm2, FFN 은 "
        "norm3 으로 각자의 층 정규화를 거치세요": lambda: wrong(one_norm=True),
        "층 정규화에 eps 를 넘기지 않아 기본값 1e-5 를 썼습니다: LayerNorm(d_model, eps=eps) 처럼 "
        "생성자의 eps 를 세 정규화 모두에 넘기세요": lambda: wrong(eps=1e-5),
    }


@pytest.mark.forbid(*READY_MADE)
@pytest.mark.parametrize("case", list(DECODER))
def test_decoder_block(student, rng, device, case):
    kwargs, B, T, S, self_len, mem_len, mode = DECODER[case]
    model = ref.DecoderBlock(**kwargs, norm_first=True).to(device)
    sd = judge_weights(model, rng, device)
    x = randn(rng, B, T, kwargs["d_model"], device=device)
    memory = randn(rng, B, S, kwargs["d_model"], device=device)
    kw = {}
    if self_len is not None:
        kw["self_mask"] = padding(self_len, T, device)
    if mem_len is not None:
        kw["memory_mask"] = padding(mem_len, S, device)
    state = student_state(student, "DecoderBlock", kwargs, sd, (x, memory), kw)
    what = f"DecoderBlock({cfg_text(kwargs)}) [{case}]"
    inputs = {"x": x, "memory": memory, **kw}
    if mode == "train":
        with seeded(11, device):
            expected = model.train()(x, memory, **kw)
        out = student.module(
            "DecoderBlock", kwargs, state, (x, memory), kw, train=True, forward_seed=11
        )
        what += (
            " (self.dropout 을 각 부분 층 출력에, 어텐션과 FFN 에 dropout 을 넘겼는지 확인하세요)"
        )
    else:
        grad = mode == "grad"
        xr, mr = x.clone().requires_grad_(grad), memory.clone().requires_grad_(grad)
        expected = model.eval()(xr, mr, **kw)
        out = student.module("DecoderBlock", kwargs, state, (x, memory), kw, grad=grad)
    got = expect_tensor(out["output"], what, shape=(B, T, kwargs["d_model"]), inputs=inputs)
    expect_device(got, device, what, inputs)
    known = None if mode == "train" else decoder_misconceptions(model, x, memory, **kw)
    assert_close(got, expected, what=what, inputs=inputs, **TOL, misconceptions=known)
    if mode == "grad":
        compare_grads(out["grads"], model, expected, {"input0": xr, "input1": mr}, what, inputs)


def compare_grads(grads, model, output, named_inputs, what, inputs):
    """The student's gradients of sum(output) against the reference's (same weights).

    A gradient entry sums many float32 terms that partly cancel, so its rounding error follows the
    tensor's largest entries, not its own size: the absolute tolerance scales with ``max |g|``
    (a float32 run in another process differed by 6e-6 of it; a wrong gradient by order 1)."""
    output.float().sum().backward()
    expected = {n: p.grad for n, p in model.named_parameters()}
    expected.update({k: t.grad for k, t in named_inputs.items()})
    for name, g in expected.items():
        if name not in grads:
            fail(f"{what}: {name} 의 그래디언트(gradient)가 없습니다 (계산 그래프가 끊겼습니다)")
        scale = max(1.0, g.abs().max().item())
        assert_close(
            grads[name],
            g,
            what=f"{what}: {name} 의 그래디언트",
            inputs=inputs,
            rtol=GRAD_RTOL,
            atol=GRAD_RTOL * scale,
        )


# ----------------------------------------------------------------------------- mlm_mask

SIGMAS = 5.0


def within(count, n, p, what, label):
    """Fail unless count/n is within SIGMAS binomial standard deviations of p."""
    sd = math.sqrt(max(p * (1 - p), 1e-12) / n)
    rate = count / n
    if abs(rate - p) > SIGMAS * sd + 1e-12:
        fail(
            f"{what}: {label} 비율이 {rate:.4f} ({count}/{n}) 인데 기대값은 {p:.4f} 입니다 "
            f"(허용 오차 ±{SIGMAS * sd:.4f}, 표준편차의 {SIGMAS:g}배)"
        )


def token_batch(rng, B, T, V, specials, pad_rows=True, dtype=torch.long):
    """Ids in [len(specials), V) framed by [CLS] ... [SEP], half the rows padded (id 0)."""
    ids = torch.randint(len(specials) + 1, V, (B, T), generator=rng)
    ids[:, 0], ids[:, -1] = specials[1], specials[2]
    if pad_rows:
        cut = torch.randint(T // 4, T - 1, (B,), generator=rng)
        for b in range(0, B, 2):
            ids[b, cut[b] :] = specials[0]
    return ids.to(dtype)


def call_mlm(student, ids, V, mask_id, specials, seed, p, device, what, fresh=False):
    """mlm_mask on ``device`` -> (inputs, labels) on the CPU; ``fresh``: in a process of its
    own (a seed check: remembering earlier calls must not help)."""
    ids = ids.to(device)
    call = student.call_fresh if fresh else student.call
    got = call("mlm_mask", ids, V, mask_id, list(specials), seed, p=p)
    inputs = {"input_ids": ids, "vocab_size": V, "mask_id": mask_id, "seed": seed, "p": p}
    if not isinstance(got, tuple | list) or len(got) != 2:
        fail(f"{what}: (inputs, labels) 두 텐서를 돌려주어야 합니다", inputs)
    for label, t in zip(("inputs", "labels"), got, strict=True):
        expect_tensor(t, f"{what}: {label}", shape=ids.shape, dtype=ids.dtype, inputs=inputs)
        expect_device(t, device, f"{what}: {label}", inputs)
    return got[0].cpu(), got[1].cpu()


def check_rules(ids, out, lab, specials, V, what):
    """Exact rules: specials never selected, labels, unselected inputs unchanged, id range."""
    special = torch.isin(ids, torch.tensor(specials, dtype=ids.dtype))
    sel = lab != -100
    if (sel & special).any():
        pos = (sel & special).nonzero()[0].tolist()
        fail(
            f"{what}: 특수 토큰(위치 {pos}, id {ids[tuple(pos)].item()})의 labels 가 -100 이 "
            "아닙니다. 특수 토큰은 선택하지 않고, 선택되지 않은 위치의 labels 는 -100 입니다"
        )
    if not torch.equal(lab[sel], ids[sel]):
        fail(f"{what}: 선택된 위치의 labels 는 원래 토큰 id 여야 합니다")
    if not torch.equal(out[~sel], ids[~sel]):
        pos = ((out != ids) & ~sel).nonzero()[0].tolist()
        fail(f"{what}: 선택되지 않은 위치(예: {pos})의 입력이 바뀌었습니다 (labels 가 -100 인 곳)")
    if ((out < 0) | (out >= V)).any():
        fail(f"{what}: 바뀐 토큰 id 가 [0, vocab_size) 범위를 벗어났습니다")
    return special, sel


def replaced(s_in, s_orig, mask_id):
    """Selected positions that hold a random token: neither [MASK] nor the original."""
    return (s_in != mask_id) & (s_in != s_orig)


def check_rates(ids, out, sel, special, V, mask_id, p, what):
    """Selection rate p among non-special tokens; 80/10/10 among the selected."""
    within(int(sel.sum()), int((~special).sum()), p, what, "선택된 토큰(특수 토큰 제외)")
    s_in, s_orig = out[sel], ids[sel]
    n = s_in.numel()
    masked = s_in == mask_id
    kept = (s_in == s_orig) & ~masked
    other = replaced(s_in, s_orig, mask_id)
    # a uniform random id equals mask_id or the original with probability 1/V each
    within(int(masked.sum()), n, 0.8 + 0.1 / V, what, "선택된 것 중 [MASK]")
    within(int(kept.sum()), n, 0.1 + 0.1 / V, what, "선택된 것 중 그대로 둔 것")
    within(int(other.sum()), n, 0.1 * (1 - 2 / V), what, "선택된 것 중 무작위 토큰")


def random_draws(ids, out, sel, mask_id):
    """(random ids, their original ids) at the selected positions that hold a random token."""
    s_in, s_orig = out[sel], ids[sel]
    other = replaced(s_in, s_orig, mask_id)
    return s_in[other].long(), s_orig[other].long()


def check_uniform(random_ids, originals, V, mask_id, what):
    """Pearson chi-square of the random replacements against uniform over [0, V) (a replacement
    seen here differs from its original and from mask_id)."""
    n = random_ids.numel()
    if n < 5 * (V - 2):
        return  # too few draws per id for the chi-square approximation
    expected = torch.full((V,), n / (V - 2), dtype=torch.float64)
    expected -= torch.bincount(originals, minlength=V).double() / (V - 2)
    expected[mask_id] = 0.0
    counts = torch.bincount(random_ids, minlength=V).double()
    keep = expected > 0
    chi2 = ((counts[keep] - expected[keep]) ** 2 / expected[keep]).sum().item()
    dof = int(keep.sum()) - 1
    if chi2 > chi2_bounds(dof)[1]:
        fail(
            f"{what}: 무작위로 바꾼 토큰이 [0, vocab_size) 에 고르게 퍼져 있지 않습니다 "
            f"(카이제곱 {chi2:.1f}, 자유도 {dof}). torch.randint(vocab_size, ...) 로 위치마다 "
            "따로 뽑으세요"
        )


@functools.cache  # pure arithmetic on (dof, tail): 400 bisection steps, asked again per notebook
def chi2_bounds(dof, tail=1e-7):
    """(low, high) with P(X < low) = P(X > high) = tail for X ~ chi-square(dof)."""

    def cdf(x):
        return torch.special.gammainc(torch.tensor(dof / 2, dtype=torch.float64), x / 2).item()

    def solve(target):
        lo, hi = 0.0, dof + 100.0 * math.sqrt(2 * dof) + 100.0
        for _ in range(200):
            mid = (lo + hi) / 2
            lo, hi = (
                (mid, hi) if cdf(torch.tensor(mid, dtype=torch.float64)) < target else (lo, mid)
            )
        return lo

    return solve(tail), solve(1 - tail)


def row_count_spread(counts, n, p, what, unit):
    """Bernoulli selection: the counts vary like Binomial(n, p) (chi-square with len dof)."""
    chi2 = ((counts - n * p) ** 2 / (n * p * (1 - p))).sum().item()
    low, high = chi2_bounds(counts.numel())
    if not low <= chi2 <= high:
        fail(
            f"{what}: {unit}마다 선택된 토큰 수의 퍼짐이 독립 베르누이 선택과 맞지 않습니다 "
            f"(카이제곱 {chi2:.1f}, 기대 범위 [{low:.1f}, {high:.1f}]). 토큰마다 "
            "독립적으로 확률 p 로 고르세요 (정확히 round(p * n) 개를 고르는 방식이 아닙니다)"
        )


SPECIALS = [0, 1, 2, 3]  # [PAD], [CLS], [SEP], [MASK]


def mlm_statistics(student, rng, device, case, V, p, B=64, T=128, dtype=torch.long, seeds=3):
    what = f"mlm_mask [{case}]"
    pooled = [], [], [], []
    for _ in range(seeds):
        ids = token_batch(rng, B, T, V, SPECIALS, dtype=dtype)
        seed = int(torch.randint(2**31, (1,), generator=rng))
        out, lab = call_mlm(student, ids, V, 3, SPECIALS, seed, p, device, what)
        special, sel = check_rules(ids, out, lab, SPECIALS, V, what)
        # the draws' shape before any rate: one random id shared by all positions that happens
        # to be [MASK] would otherwise show up as a wrong [MASK] rate, not as what it is
        check_uniform(*random_draws(ids, out, sel, 3), V, 3, what)
        for acc, t in zip(pooled, (ids, out, sel, special), strict=True):
            acc.append(t)
    ids, out, sel, special = (torch.cat(t) for t in pooled)
    check_uniform(*random_draws(ids, out, sel, 3), V, 3, what)  # (one call may have too few)
    check_rates(ids, out, sel, special, V, 3, p, what)
    n = (~special).sum(dim=1).double()
    rows = n > 0
    row_count_spread(sel.sum(dim=1).double()[rows], n[rows], p, what, "문장(행)")


def mlm_one_row(student, rng, device, case):
    """(1, T) inputs, many seeds: the total count must vary from seed to seed."""
    what = f"mlm_mask [{case}]"
    ids = token_batch(rng, 1, 200, 500, SPECIALS, pad_rows=False)
    counts = []
    for seed in range(30):
        out, lab = call_mlm(student, ids, 500, 3, SPECIALS, seed, 0.15, device, what)
        counts.append(float((lab != -100).sum()))
    n = float((~torch.isin(ids, torch.tensor(SPECIALS))).sum())
    row_count_spread(torch.tensor(counts, dtype=torch.float64), n, 0.15, what, "시드")


def mlm_extremes(student, rng, device, case):
    what = f"mlm_mask [{case}]"
    ids = token_batch(rng, 4, 32, 100, SPECIALS)
    special = torch.isin(ids, torch.tensor(SPECIALS))
    out, lab = call_mlm(student, ids, 100, 3, SPECIALS, 5, 0.0, device, what + " p=0")
    if not torch.equal(out, ids) or (lab != -100).any():
        fail(f"{what}: p=0 이면 아무 토큰도 선택하지 않아야 합니다")
    out, lab = call_mlm(student, ids, 100, 3, SPECIALS, 5, 1.0, device, what + " p=1")
    if not torch.equal(lab != -100, ~special):
        fail(f"{what}: p=1 이면 특수 토큰이 아닌 모든 토큰을 선택해야 합니다")
    allspecial = torch.tensor([[1, 0, 0, 2]])
    out, lab = call_mlm(student, allspecial, 100, 3, SPECIALS, 5, 1.0, device, what)
    if not torch.equal(out, allspecial) or (lab != -100).any():
        fail(f"{what}: 특수 토큰만 있는 입력은 그대로여야 하고 labels 는 모두 -100 입니다")
    plain = torch.randint(0, 30, (3, 20), generator=rng)
    out, lab = call_mlm(student, plain, 30, 29, [], 8, 1.0, device, what + " special_ids=[]")
    if (lab != plain).any():
        fail(f"{what}: special_ids 가 빈 리스트이고 p=1 이면 모든 토큰을 선택해야 합니다")


def mlm_seeds(student, rng, device, case):
    """Same seed -> same result (on every device); another seed -> another result. Each call
    runs in a process of its own, as a seed is used in practice."""
    what = f"mlm_mask [{case}]"
    ids = token_batch(rng, 8, 64, 1000, SPECIALS)
    a = call_mlm(student, ids, 1000, 3, SPECIALS, 123, 0.15, device, what, fresh=True)
    b = call_mlm(student, ids, 1000, 3, SPECIALS, 123, 0.15, device, what, fresh=True)
    c = call_mlm(student, ids, 1000, 3, SPECIALS, 124, 0.15, device, what, fresh=True)
    if not (torch.equal(a[0], b[0]) and torch.equal(a[1], b[1])):
        fail(f"{what}: 같은 seed 로 두 번 부르면 결과가 같아야 합니다 (torch.Generator 를 seed 로)")
    if torch.equal(a[1], c[1]):
        fail(f"{what}: seed 가 다르면 선택된 위치도 달라야 합니다 (seed 를 쓰고 있나요?)")
    if device.type != "cpu":
        cpu = torch.device("cpu")
        d = call_mlm(student.on(cpu), ids, 1000, 3, SPECIALS, 123, 0.15, cpu, what, fresh=True)
        if not (torch.equal(a[0], d[0]) and torch.equal(a[1], d[1])):
            fail(
                f"{what}: 같은 seed 인데 {device.type} 과 cpu 의 결과가 다릅니다. 난수는 CPU 의 "
                "torch.Generator().manual_seed(seed) 로 뽑은 뒤 input_ids.device 로 옮기세요"
            )


MLM = {
    "p=0.15, V=1000, 패딩 행": lambda s, r, d, c: mlm_statistics(s, r, d, c, 1000, 0.15),
    "p=0.3, V=40 (무작위 토큰이 고른지)": lambda s, r, d, c: mlm_statistics(s, r, d, c, 40, 0.3),
    "p=0.5, V=6 (id 0 부터 모든 id 가 뽑혀야 함)": lambda s, r, d, c: mlm_statistics(
        s, r, d, c, 6, 0.5
    ),
    "int32 토큰 id, p=0.15": lambda s, r, d, c: mlm_statistics(
        s, r, d, c, 500, 0.15, dtype=torch.int32, seeds=2
    ),
    "(1, T) 시드 30개: 선택 개수가 변해야 함": mlm_one_row,
    "p=0, p=1, 특수 토큰만, special_ids=[]": mlm_extremes,
    "같은 seed -> 같은 결과, 장치와 무관": mlm_seeds,
}


@pytest.mark.spec(draws_on="cpu")  # the notebook: g = torch.Generator().manual_seed(seed)
@pytest.mark.parametrize("case", list(MLM))
def test_mlm_mask(student, rng, device, case):
    MLM[case](student, rng, device, case)


# ----------------------------------------------------------------------------- GPTModel

# case -> (init kwargs, B, T)
GPT = {
    "V=37, T=context_length=8, 2층": (
        dict(vocab_size=37, context_length=8, d_model=16, num_heads=4, num_layers=2, d_ff=32),
        2,
        8,
    ),
    "T=3 < context_length": (
        dict(vocab_size=20, context_length=10, d_model=12, num_heads=2, num_layers=1, d_ff=24),
        3,
        3,
    ),
    "T=1, 3층": (
        dict(vocab_size=11, context_length=5, d_model=8, num_heads=2, num_layers=3, d_ff=16),
        2,
        1,
    ),
    "tie_weights=True": (
        dict(
            vocab_size=23,
            context_length=7,
            d_model=16,
            num_heads=4,
            num_layers=2,
            d_ff=16,
            tie_weights=True,
        ),
        2,
        6,
    ),
}


@torch.no_grad()
def gpt_variant(model, idx, pos=True, causal=True, final_norm=True, last_block_only=False):
    """The reference GPTModel (eval) with one step left out or written wrong."""
    m = copy.deepcopy(model).eval()
    x = m.tok_emb(idx)
    if pos:
        x = x + m.pos_emb(torch.arange(idx.shape[1], device=idx.device))
    blocks = [m.blocks[-1]] * len(m.blocks) if last_block_only else m.blocks
    for block in blocks:
        block.attn.causal = causal
        x = block(x)
    return m.lm_head(m.final_norm(x) if final_norm else x)


NOT_CAUSAL = (
    "블록의 어텐션이 인과적이지 않습니다: 미래 토큰을 보지 않도록 MultiHeadAttention 을 "
    "causal=True 로 만드세요 (인과적 마스크)"
)


def gpt_misconceptions(model, idx):
    return {
        "위치 임베딩을 더하지 않았습니다: 토큰 임베딩에 pos_emb(torch.arange(T)) 를 더해야 모델이 "
        "토큰의 순서를 압니다": lambda: gpt_variant(model, idx, pos=False),
        NOT_CAUSAL: lambda: gpt_variant(model, idx, causal=False),
        "마지막 층 정규화(final_norm)를 빠뜨렸습니다: 사전 정규화(pre-norm) 블록의 출력은 "
        "정규화되지 않으므로 lm_head 에 넣기 전에 final_norm 을 거치세요": lambda: gpt_variant(
            model, idx, final_norm=False
        ),
        "모든 층이 같은 블록(가중치)을 씁니다: [GPTBlock(...)] * num_layers 는 한 객체를 여러 번 "
        "담습니다. 층마다 새 GPTBlock 을 만드세요 (nn.ModuleList(GPTBlock(...) for _ in "
        "range(num_layers)))": lambda: gpt_variant(model, idx, last_block_only=True),
    }


def gpt_setup(student, rng, device, kwargs, B, T):
    model = ref.GPTModel(**kwargs).to(device)
    sd = judge_weights(model, rng, device)
    idx = torch.randint(kwargs["vocab_size"], (B, T), generator=rng).to(device)
    state = student_state(student, "GPTModel", kwargs, sd, (idx,))
    return model.eval(), idx, state


@pytest.mark.forbid(*READY_MADE)
@pytest.mark.parametrize("case", list(GPT))
def test_gpt_model(student, rng, device, case):
    kwargs, B, T = GPT[case]
    model, idx, state = gpt_setup(student, rng, device, kwargs, B, T)
    what = f"GPTModel({cfg_text(kwargs)}) [{case}]"
    tied = kwargs.get("tie_weights", False)
    lr = TIE_STEP_LR if tied else None
    out = student.module("GPTModel", kwargs, state, (idx,), grad=tied, step_lr=lr)
    got = expect_tensor(
        out["output"], what, shape=(B, T, kwargs["vocab_size"]), inputs={"idx": idx}
    )
    expect_device(got, device, what, {"idx": idx})
    expected = model(idx)
    known = gpt_misconceptions(model, idx)
    assert_close(got, expected, what=what, inputs={"idx": idx}, **TOL, misconceptions=known)
    if tied:
        check_tied_step(out["after_step"] - got, model, expected, idx, what)
        try:
            compare_grads(out["grads"], model, expected, {}, what, {"idx": idx})
        except CheckFailed as e:
            fail(f"{e}\n{TIE_HINT}")


def check_tied_step(moved, model, output, idx, what):
    """Tying judged by behaviour: after one SGD step on sum(logits), a tied model's shared
    matrix has moved by both uses' gradients, an untied one's two matrices by one each, so the
    logits on the same input move differently (whatever names the student's module reports).
    ``moved``: the student's logits after the step minus before it. Compared with the
    reference's move relative to its size: float32 gradients from two processes differ by
    ~1e-5 of it, a missing gradient by order 1."""
    params = list(model.parameters())  # the reference's: each shared Parameter once
    grads = torch.autograd.grad(output.float().sum(), params, retain_graph=True)
    after = copy.deepcopy(model)
    with torch.no_grad():
        for p, g in zip(after.parameters(), grads, strict=True):
            p -= TIE_STEP_LR * g.to(p.dtype)
        expected = after(idx).double() - output.detach().double()
    error = (moved.double() - expected).abs().max()
    if not error <= TIE_RTOL * expected.abs().max():
        fail(
            f"{what}: 학습 한 단계(SGD, lr={TIE_STEP_LR}) 뒤 로짓이 움직인 양이 가중치를 묶은 "
            f"모델과 다릅니다 (차이 최대 {float(error):.3g}, 움직인 양 최대 "
            f"{float(expected.abs().max()):.3g}). {TIE_HINT}",
            {"idx": idx},
        )


CAUSAL = {
    "t=3 이후 변경": (
        dict(vocab_size=29, context_length=9, d_model=16, num_heads=4, num_layers=2),
        9,
        3,
    ),
    "t=0 이후 변경, 3층": (
        dict(vocab_size=13, context_length=6, d_model=8, num_heads=2, num_layers=3, d_ff=8),
        6,
        0,
    ),
    "마지막 토큰만 변경": (
        dict(vocab_size=50, context_length=12, d_model=16, num_heads=2, num_layers=1),
        10,
        8,
    ),
}


@pytest.mark.forbid(*READY_MADE)
@pytest.mark.parametrize("case", list(CAUSAL))
def test_gpt_causal(student, rng, device, case):
    kwargs, T, t = CAUSAL[case]
    kwargs = dict(kwargs)
    kwargs.setdefault("d_ff", 4 * kwargs["d_model"])
    # the student's own initial weights (the same seed for both calls): causality holds for any
    # weights, so a mistake in the names or shapes of the state costs test_gpt_model alone
    idx = torch.randint(0, kwargs["vocab_size"], (2, T), generator=rng).to(device)
    state = None
    changed = idx.clone()
    changed[:, t + 1 :] = (idx[:, t + 1 :] + 1 + torch.arange(T - t - 1, device=device)) % (
        kwargs["vocab_size"]
    )
    what = f"GPTModel [{case}]"
    a = student.module("GPTModel", kwargs, state, (idx,))["output"]
    b = student.module("GPTModel", kwargs, state, (changed,))["output"]
    inputs = {"idx": idx, "changed": changed}
    expect_tensor(b, what, shape=(2, T, kwargs["vocab_size"]), inputs=inputs)
    assert_close(
        b[:, : t + 1],
        a[:, : t + 1],
        what=f"{what}: 위치 {t + 1} 이후의 토큰만 바꾸었는데 위치 0..{t} 의 로짓이 바뀌었습니다 "
        "(미래 토큰이 새어 들어갑니다: 인과적 마스크를 확인하세요)",
        inputs=inputs,
        rtol=0.0,
        atol=0.0,
    )
    # one mistake, one item: the logits' values are test_gpt_model's; here only that the
    # changed tokens reach the logits from their own positions on (a model ignoring its input
    # is causal too, and earns nothing)
    if torch.equal(b[:, t + 1 :], a[:, t + 1 :]):
        fail(
            f"{what}: 위치 {t + 1} 이후의 토큰을 바꾸었는데 그 위치들의 로짓이 그대로입니다 "
            "(모델의 출력이 입력 토큰에 따라 달라져야 합니다)",
            inputs,
        )


# ----------------------------------------------------------------------------- ModernBlock

# apply_rope cases: (B, h, T, d_head, dtype, positions offset or None, base)
ROPE = {
    "apply_rope (2,3,5,8) float32": (2, 3, 5, 8, torch.float32, None, 10000.0),
    "apply_rope float64, base=100": (1, 2, 6, 4, torch.float64, None, 100.0),
    "apply_rope positions=arange(7, 10) (KV 캐시 뒤)": (2, 2, 3, 6, torch.float32, 7, 10000.0),
    "apply_rope bfloat16, positions=arange(100, 109)": (1, 4, 9, 8, torch.bfloat16, 100, 1e4),
}

# ModernBlock cases: (init kwargs, B, T, lengths for a padding mask or None, grad)
MODERN = {
    "GQA h=4, h_kv=2": (dict(d_model=16, num_heads=4, num_kv_heads=2, d_ff=24), 2, 6, None, False),
    "MQA h_kv=1": (dict(d_model=16, num_heads=4, num_kv_heads=1, d_ff=20), 2, 5, None, False),
    "MHA h_kv=h=2": (dict(d_model=8, num_heads=2, num_kv_heads=2, d_ff=16), 3, 4, None, False),
    "패딩 마스크 (B,1,1,T), rope_base=500": (
        dict(d_model=16, num_heads=4, num_kv_heads=2, d_ff=24, rope_base=500.0),
        3,
        7,
        [7, 4, 1],
        False,
    ),
    "T=1, eps=1e-2": (
        dict(d_model=8, num_heads=4, num_kv_heads=2, d_ff=8, eps=1e-2),
        2,
        1,
        None,
        False,
    ),
    "d_head=2, 그래디언트(gradient)": (
        dict(d_model=8, num_heads=4, num_kv_heads=2, d_ff=12),
        2,
        5,
        [5, 3],
        True,
    ),
    "큰 어텐션 점수 (|q.k| ~ 1e4), 패딩 마스크": (
        dict(d_model=16, num_heads=4, num_kv_heads=2, d_ff=16),
        6,
        8,
        [8, 5, 8, 3, 6, 8],
        False,
    ),
    "아주 큰 어텐션 점수 (|q.k| ~ 1e10), 위치 0의 출력": (
        dict(d_model=16, num_heads=4, num_kv_heads=2, d_ff=16),
        4,
        6,
        None,
        False,
    ),
    "모든 키가 막힌 시퀀스 (패딩 길이 0)": (
        dict(d_model=16, num_heads=4, num_kv_heads=2, d_ff=16),
        3,
        5,
        [5, 0, 2],
        False,
    ),
}
# W_query and W_key scaled by these: scores of order 1e4 and 1e10. At 1e10 float32 scores carry
# errors of ~1e3, so only position 0 is compared: each head sees only key 0 there (weight 1 in
# any correct code), and head 0's one score is below -1e9 (see test_modern_block)
BIG_SCORES = {
    "큰 어텐션 점수 (|q.k| ~ 1e4), 패딩 마스크": 150.0,
    "아주 큰 어텐션 점수 (|q.k| ~ 1e10), 위치 0의 출력": 1e5,
}


def gqa_variant(attn, x, mask=None, cache=None, tile=False, rope_k=True, fill=None):
    """The reference GroupedQueryAttention's forward (no cache) with one step written wrong:
    ``tile`` (k/v heads by repeat), ``rope_k=False`` (keys not rotated), ``fill`` (a fixed
    score for blocked keys)."""
    B, T, _ = x.shape

    def heads(linear, n):
        return linear(x).view(B, T, n, attn.d_head).transpose(1, 2)

    q = apply_rope(heads(attn.W_query, attn.num_heads), base=attn.rope_base)
    k = heads(attn.W_key, attn.num_kv_heads)
    k = apply_rope(k, base=attn.rope_base) if rope_k else k
    v = heads(attn.W_value, attn.num_kv_heads)
    r = attn.num_heads // attn.num_kv_heads
    k, v = (t.repeat(1, r, 1, 1) if tile else t.repeat_interleave(r, dim=1) for t in (k, v))
    scores = q @ k.transpose(-2, -1) / math.sqrt(attn.d_head)
    i = torch.arange(T, device=x.device)
    keep = i[None, :] <= i[:, None]
    keep = keep if mask is None else keep & mask
    low = torch.finfo(scores.dtype).min if fill is None else fill
    weights = torch.softmax(scores.masked_fill(~keep, low), dim=-1)
    return attn.out_proj((weights @ v).transpose(1, 2).reshape(B, T, -1))


@torch.no_grad()
def modern_variant(model, x, mask=None, eps=None, **wrong):
    """The reference ModernBlock (eval) with the norms' ``eps`` or one attention step wrong."""
    m = copy.deepcopy(model).eval()
    if eps is not None:
        m.attn_norm.eps = m.ffn_norm.eps = eps
    if wrong:
        m.attn.forward = functools.partial(gqa_variant, m.attn, **wrong)
    return m(x, mask=mask)


def modern_misconceptions(model, x, mask=None, select=lambda out: out):
    """Known mistakes and their outputs, as ``select`` takes them (all, or a part)."""

    def wrong(**step):
        return select(modern_variant(model, x, mask, **step))

    return {
        "키/값 헤드를 repeat 로 통째로 반복했습니다 (헤드 0, 1, 0, 1, ...): 그룹 쿼리 어텐션(GQA)"
        "에서 쿼리 헤드 i 는 키/값 헤드 i // (h // h_kv) 를 쓰므로 repeat_interleave(h // h_kv, "
        "dim=1) 로 각 헤드를 이어서 반복하세요 (0, 0, 1, 1, ...)": lambda: wrong(tile=True),
        "회전 위치 임베딩(RoPE)을 쿼리에만 적용했습니다: 점수 q·k 가 상대 위치에만 의존하려면 "
        "키에도 같은 위치로 apply_rope 를 적용해야 합니다": lambda: wrong(rope_k=False),
        "막힌 점수를 고정된 음수(-1e4 등)로 채웠습니다: 점수가 그보다 작으면 소프트맥스에서 막힌 "
        "키가 가중치를 가져갑니다. torch.finfo(scores.dtype).min 으로 채우세요": lambda: wrong(
            fill=-1e4
        ),
        "RMS 정규화에 eps 를 넘기지 않아 기본값 1e-6 을 썼습니다: RMSNorm(d_model, eps) 처럼 "
        "생성자의 eps 를 두 정규화 모두에 넘기세요": lambda: wrong(eps=1e-6),
    }


def rope_in(x, work, positions=None, base=10000.0):
    """apply_rope ("half" pairing) with its angles and rotation computed in ``work``."""
    d = x.shape[-1]
    if positions is None:
        positions = torch.arange(x.shape[-2], device=x.device)
    angles = rope_angles(positions, d, base, work)
    cos, sin = angles.cos(), angles.sin()
    xf = x.to(work)
    a, b = xf[..., : d // 2], xf[..., d // 2 :]
    return torch.cat((a * cos - b * sin, a * sin + b * cos), dim=-1).to(x.dtype)


def rope_misconceptions(x, positions=None, base=10000.0):
    return {
        "인접한 성분 (2i, 2i+1) 을 짝지었습니다 (interleaved): 이 과제의 회전 위치 임베딩(RoPE)은 "
        "성분 i 와 i + d_head/2 를 짝짓습니다 (a = x[..., :d/2], b = x[..., d/2:])": lambda: (
            apply_rope(x, positions, base, pairing="interleaved")
        ),
        "positions 인자를 무시하고 위치를 0 부터 세었습니다: positions 가 주어지면 그 위치(예: KV "
        "캐시 뒤의 새 토큰)로 회전하세요": lambda: (
            None if positions is None else apply_rope(x, base=base)
        ),
        "각도와 회전을 입력 dtype(bfloat16)으로 계산했습니다: bfloat16 은 큰 위치와 각도를 정확히 "
        "나타내지 못하므로 적어도 float32 (torch.promote_types(x.dtype, torch.float32)) 로 계산한 "
        "뒤 x.dtype 으로 돌려주세요": lambda: rope_in(x, x.dtype, positions, base),
        "float64 입력의 각도와 회전을 float32 로 계산했습니다: 정밀도를 잃지 않도록 "
        "torch.promote_types(x.dtype, torch.float32) 처럼 float64 는 float64 로 계산하세요": (
            lambda: rope_in(x, torch.float32, positions, base)
        ),
    }


@pytest.mark.forbid("scaled_dot_product_attention", "MultiheadAttention")
@pytest.mark.parametrize("case", list(ROPE) + list(MODERN))
def test_modern_block(student, rng, device, case):
    if case in ROPE:
        rope_case(student, rng, device, case)
        return
    kwargs, B, T, lengths, grad = MODERN[case]
    model = ref.ModernBlock(**kwargs).to(device)
    sd = judge_weights(model, rng, device)
    tol, select = TOL, None
    if case in BIG_SCORES:
        for name in ("attn.W_query.weight", "attn.W_key.weight"):
            sd[name] = sd[name] * BIG_SCORES[case]
        # query head 0 = -(key head 0, which it shares under GQA): at position 0 (no rotation,
        # only itself to see) its one score is -|k_0|^2 / sqrt(d_head), below -1e4 in ~93% of
        # rows at scale 150, so a mask fill such as -1e4 outweighs it and changes row 0 of head
        # 0 in one of the 6 sequences for all but ~1e-7 of the seeds; at scale 1e5 it is below
        # -1e9 in all but ~1e-9 of the rows, so a fill of -1e9 does too
        d_head = kwargs["d_model"] // kwargs["num_heads"]
        sd["attn.W_query.weight"][:d_head] = -sd["attn.W_key.weight"][:d_head]
        model.load_state_dict(sd)
        tol = {"rtol": 1e-3, "atol": 1e-3}  # float32 scores of 1e4 carry errors of ~1e-3
        if BIG_SCORES[case] > 1e3:
            tol, select = TOL, lambda out: out[:, :1]
            what_part = ": 위치 0의 출력 (B, 1, d_model)"
    x = randn(rng, B, T, kwargs["d_model"], device=device)
    kw = {} if lengths is None else {"mask": padding(lengths, T, device)}
    state = student_state(student, "ModernBlock", kwargs, sd, (x,), kw)
    what = f"ModernBlock({cfg_text(kwargs)}) [{case}]"
    inputs = {"x": x, **kw}
    out = student.module("ModernBlock", kwargs, state, (x,), kw, grad=grad)
    blocked = lengths is not None and 0 in lengths  # a sequence whose keys are all blocked
    got = expect_tensor(out["output"], what, shape=x.shape, finite=not blocked, inputs=inputs)
    expect_device(got, device, what, inputs)
    xr = x.clone().requires_grad_(grad)
    expected = model.eval()(xr, **kw)
    if blocked:
        # the notebook: a query whose keys are all blocked must not give NaN; its values are
        # not graded (finfo.min scores weigh every key alike, the reference gives it zero
        # weights), so only the sequences with a key to see are compared
        if not bool(torch.isfinite(got).all()):
            fail(
                f"{what}: 모든 키가 막힌 시퀀스에서 NaN/inf 가 나왔습니다. 막힌 점수를 -inf 로 "
                "채우면 모든 키가 막힌 쿼리의 소프트맥스가 NaN 이 됩니다: "
                "torch.finfo(scores.dtype).min 으로 채우세요",
                inputs,
            )
        seen = torch.tensor([n > 0 for n in lengths], device=device)
        select, what_part = (lambda out: out[seen]), ": 볼 수 있는 키가 있는 시퀀스의 출력"
    if select is None:
        select, what_part = (lambda out: out), ""
    known = modern_misconceptions(model, x, kw.get("mask"), select)
    assert_close(
        select(got),
        select(expected),
        what=what + what_part,
        inputs=inputs,
        **tol,
        misconceptions=known,
    )
    if grad:
        compare_grads(out["grads"], model, expected, {"input0": xr}, what, inputs)


def rope_case(student, rng, device, case):
    B, h, T, d, dtype, offset, base = ROPE[case]
    x = (torch.randn(B, h, T, d, generator=rng, dtype=torch.float64) * 2).to(device, dtype)
    kwargs = {"base": base}
    if offset is not None:
        kwargs["positions"] = torch.arange(offset, offset + T).to(device)
    got = student.call("apply_rope", x, **kwargs)
    tol = HALF_TOL.get(dtype, (1e-9, 1e-10) if dtype == torch.float64 else (1e-5, 1e-6))
    assert_close(
        got,
        apply_rope(x, **kwargs),
        what=f"{case} (짝: i 와 i + d_head/2)",
        inputs={"x": x, **kwargs},
        rtol=tol[0],
        atol=tol[1],
        misconceptions=rope_misconceptions(x, kwargs.get("positions"), base),
    )
