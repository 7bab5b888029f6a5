"""Plausible student mistakes for assignment ``masking`` (graded by tests/grader/test_mistakes.py).

The notebook's CausalAttention uses the student's own causal_mask and masked_softmax, so a
wrong mask also costs the CausalAttention cell (its feedback says which function it used).
"""

ASSIGNMENT = "masking"
CM, PM, CB = "test_causal_mask", "test_padding_mask", "test_combine_masks"
MS, CA = "test_masked_softmax", "test_causal_attention"

RENORM = """

def masked_softmax_renorm(scores, mask, dim=-1):
    weights = torch.softmax(scores, dim=dim).masked_fill(~mask, 0.0)
    total = weights.sum(dim=dim, keepdim=True)
    return torch.where(total > 0, weights / total, torch.zeros_like(weights))
"""
FILL_FIRST = """def masked_softmax(scores, mask, dim=-1):
    filled = scores.masked_fill(~mask, torch.finfo(scores.dtype).min)
    return torch.softmax(filled, dim=dim).masked_fill(~mask, 0.0)

"""
ATTENTION = """class CausalAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, qkv_bias=False):
        super().__init__()
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.dropout = nn.Dropout(dropout)
        self.p = dropout
        self.register_buffer("mask", causal_mask(context_length), persistent=False)

    def forward(self, x):
        T = x.shape[-2]
        q, k, v = self.W_query(x), self.W_key(x), self.W_value(x)
        scores = q @ k.transpose(-2, -1) / k.shape[-1] ** 0.5
"""


def attention(body):
    """CausalAttention whose forward continues with ``body`` (8-space indented lines)."""
    return ATTENTION + body


MISTAKES = [
    {
        "name": "causal_excludes_diagonal",
        "kind": "logic",
        "cell": "causal_mask",
        "source": """def causal_mask(T, S=None, device=None):
    S = T if S is None else S
    return torch.ones(T, S, dtype=torch.bool, device=device).tril(diagonal=S - T - 1)
""",
        "fails": [CM],
        "says": "자기 자신(대각선)을 보지 못하게",
    },
    {
        "name": "causal_ignores_key_offset",
        "kind": "logic",
        "cell": "causal_mask",
        "source": """def causal_mask(T, S=None, device=None):
    S = T if S is None else S
    return torch.ones(T, S, dtype=torch.bool, device=device).tril()
""",
        "fails": [CM],
        "says": "키 오프셋 S - T 를 무시하고",
    },
    {
        "name": "causal_ignores_device",
        "kind": "device",
        "cell": "causal_mask",
        "source": """def causal_mask(T, S=None, device=None):
    S = T if S is None else S
    return torch.ones(T, S, dtype=torch.bool).tril(diagonal=S - T)
""",
        "fails": [CM],
        "says": "장치",
    },
    {
        "name": "causal_true_means_blocked",
        "kind": "logic",
        "cell": "causal_mask",
        "source": """def causal_mask(T, S=None, device=None):
    S = T if S is None else S
    return torch.ones(T, S, dtype=torch.bool, device=device).triu(diagonal=S - T + 1)
""",
        "fails": [CM],
        "says": "True/False 를 뒤집은",
    },
    {
        "name": "padding_mask_2d",
        "kind": "logic",
        "cell": "padding_mask",
        "source": """def padding_mask(lengths, S=None):
    S = int(lengths.max()) if S is None else S
    return torch.arange(S, device=lengths.device) < lengths.unsqueeze(-1)
""",
        "fails": [PM],
        "says": "모양이 (B, S) 입니다",
    },
    {
        "name": "padding_off_by_one",
        "kind": "logic",
        "cell": "padding_mask",
        "source": """def padding_mask(lengths, S=None):
    S = int(lengths.max()) if S is None else S
    keep = torch.arange(S, device=lengths.device) <= lengths.unsqueeze(-1)
    return keep.view(-1, 1, 1, S)
""",
        "fails": [PM],
        "says": "한 칸 더 남겼습니다",
    },
    {
        "name": "padding_arange_on_default_device",
        "kind": "device",
        "cell": "padding_mask",
        "source": """def padding_mask(lengths, S=None):
    S = int(lengths.max()) if S is None else S
    keep = torch.arange(S) < lengths.unsqueeze(-1)
    return keep.view(-1, 1, 1, S)
""",
        "fails": [PM],
        "says": "장치",
    },
    {
        "name": "combine_with_or",
        "kind": "logic",
        "cell": "combine_masks",
        "source": """def combine_masks(*masks):
    out = None
    for m in masks:
        if m is not None:
            out = m if out is None else out | m
    return out
""",
        "fails": [CB],
        "says": "| (OR) 로 합쳤습니다",
    },
    {
        "name": "combine_forgets_none",
        "kind": "logic",
        "cell": "combine_masks",
        "source": """def combine_masks(*masks):
    out = masks[0]
    for m in masks[1:]:
        out = out & m
    return out
""",
        "fails": [CB],
        "says": "None",
    },
    {
        "name": "fill_minus_1e9",
        "kind": "constant",
        "cell": "masked_softmax",
        "source": """def masked_softmax(scores, mask, dim=-1):
    filled = scores.masked_fill(~mask, -1e9)
    return torch.softmax(filled, dim=dim).masked_fill(~mask, 0.0)
"""
        + RENORM,
        "fails": [MS],
        "says": "-1e9",
    },
    {
        "name": "fill_minus_1e4",
        "kind": "constant",
        "cell": "masked_softmax",
        "source": """def masked_softmax(scores, mask, dim=-1):
    filled = scores.masked_fill(~mask, -1e4)
    return torch.softmax(filled, dim=dim).masked_fill(~mask, 0.0)
"""
        + RENORM,
        "fails": [MS],
        "says": "고정된 음수로 채웠습니다",
    },
    {
        "name": "fully_masked_rows_uniform",
        "kind": "logic",
        "cell": "masked_softmax",
        "source": """def masked_softmax(scores, mask, dim=-1):
    filled = scores.masked_fill(~mask, torch.finfo(scores.dtype).min)
    return torch.softmax(filled, dim=dim)
"""
        + RENORM,
        "fails": [MS],
        "says": "균등 분포(1/S)가 되었습니다",
    },
    {
        "name": "fill_neg_inf_gives_nan",
        "kind": "logic",
        "cell": "masked_softmax",
        "source": """def masked_softmax(scores, mask, dim=-1):
    return torch.softmax(scores.masked_fill(~mask, float("-inf")), dim=dim)
"""
        + RENORM,
        "fails": [MS],
        "says": "-inf 로 채워서",
    },
    {
        "name": "fill_scores_in_place",
        "kind": "in-place",
        "cell": "masked_softmax",
        "source": """def masked_softmax(scores, mask, dim=-1):
    scores.masked_fill_(~mask, torch.finfo(scores.dtype).min)
    return torch.softmax(scores, dim=dim).masked_fill(~mask, 0.0)
"""
        + RENORM,
        "fails": [MS],
        "says": "제자리",
    },
    {
        "name": "ignores_dim",
        "kind": "logic",
        "cell": "masked_softmax",
        "source": """def masked_softmax(scores, mask, dim=-1):
    filled = scores.masked_fill(~mask, torch.finfo(scores.dtype).min)
    return torch.softmax(filled, dim=-1).masked_fill(~mask, 0.0)
"""
        + RENORM,
        "fails": [MS],
        "says": "dim 인자를 쓰지 않고",
    },
    {
        "name": "renorm_nan_rows",
        "kind": "logic",
        "cell": "masked_softmax",
        "source": FILL_FIRST
        + """def masked_softmax_renorm(scores, mask, dim=-1):
    weights = torch.softmax(scores, dim=dim) * mask
    return weights / weights.sum(dim=dim, keepdim=True)
""",
        "fails": [MS],
        "says": "0 을 0 으로 나누어 NaN",
    },
    {
        "name": "renorm_forgets_renormalising",
        "kind": "logic",
        "cell": "masked_softmax",
        "source": FILL_FIRST
        + """def masked_softmax_renorm(scores, mask, dim=-1):
    return torch.softmax(scores, dim=dim).masked_fill(~mask, 0.0)
""",
        "fails": [MS],
        "says": "다시 정규화하지 않았습니다",
    },
    {
        "name": "dropout_in_eval_too",
        "kind": "randomness",
        "cell": "causal_attention",
        "source": attention(
            """        weights = masked_softmax(scores, self.mask[:T, :T])
        return F.dropout(weights, self.p, training=True) @ v
"""
        ),
        "fails": [CA],
        "says": "eval",
    },
    {
        "name": "no_dropout",
        "kind": "randomness",
        "cell": "causal_attention",
        "source": attention(
            """        weights = masked_softmax(scores, self.mask[:T, :T])
        return weights @ v
"""
        ),
        "fails": [CA],
        "says": "드롭아웃을 적용하지 않았습니다",
    },
    {
        "name": "dropout_on_scores",
        "kind": "randomness",
        "cell": "causal_attention",
        "source": attention(
            """        weights = masked_softmax(self.dropout(scores), self.mask[:T, :T])
        return weights @ v
"""
        ),
        "fails": [CA],
        "says": "소프트맥스 전의 어텐션 점수에",
    },
    {
        "name": "dropout_on_output",
        "kind": "randomness",
        "cell": "causal_attention",
        "source": attention(
            """        weights = masked_softmax(scores, self.mask[:T, :T])
        return self.dropout(weights @ v)
"""
        ),
        "fails": [CA],
        "says": "어텐션 출력(weights @ v)에",
    },
    {
        "name": "dropout_without_rescale",
        "kind": "randomness",
        "cell": "causal_attention",
        "source": attention(
            """        weights = masked_softmax(scores, self.mask[:T, :T])
        if self.training and self.p > 0:
            weights = weights * (torch.rand_like(weights) >= self.p)
        return weights @ v
"""
        ),
        "fails": [CA],
        "says": "1/(1-p) 로 키우지 않았습니다",
    },
    {
        "name": "no_scaling",
        "kind": "logic",
        "cell": "causal_attention",
        "source": attention(
            """        weights = masked_softmax(scores * k.shape[-1] ** 0.5, self.mask[:T, :T])
        return self.dropout(weights) @ v
"""
        ),
        "fails": [CA],
        "says": "√d_k 로 나누지 않았습니다",
    },
    {
        "name": "sees_one_future_token",
        "kind": "logic",
        "cell": "causal_attention",
        "source": attention(
            """        keep = torch.ones(T, T, dtype=torch.bool, device=x.device).tril(diagonal=1)
        weights = masked_softmax(scores, keep)
        return self.dropout(weights) @ v
"""
        ),
        "fails": [CA],
        "says": "바로 다음 토큰(미래)까지",
    },
    {
        "name": "mask_built_on_default_device",
        "kind": "device",
        "cell": "causal_attention",
        "source": attention(
            """        keep = torch.tril(torch.ones(T, T)).bool()
        weights = masked_softmax(scores, keep)
        return self.dropout(weights) @ v
"""
        ),
        "fails": [CA],
        "says": "장치",
    },
    {
        "name": "sdpa_shortcut",
        "kind": "forbidden",
        "cell": "causal_attention",
        "source": attention(
            """        p = self.p if self.training else 0.0
        return F.scaled_dot_product_attention(q, k, v, dropout_p=p, is_causal=True)
"""
        ),
        "fails": [CA],
        "says": "scaled_dot_product_attention",
    },
    {
        "name": "one_fused_qkv_layer",
        "kind": "logic",
        "cell": "causal_attention",
        "source": """class CausalAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, qkv_bias=False):
        super().__init__()
        self.qkv = nn.Linear(d_in, 3 * d_out, bias=qkv_bias)
        self.dropout = nn.Dropout(dropout)
        self.register_buffer("mask", causal_mask(context_length), persistent=False)

    def forward(self, x):
        T = x.shape[-2]
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        scores = q @ k.transpose(-2, -1) / k.shape[-1] ** 0.5
        return self.dropout(masked_softmax(scores, self.mask[:T, :T])) @ v
""",
        "fails": [CA],
        "says": "W_query",
    },
    {
        "name": "weights_as_parameters_d_in_by_d_out",
        "kind": "logic",
        "cell": "causal_attention",
        "source": """class CausalAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, qkv_bias=False):
        super().__init__()
        self.W_query = nn.Parameter(torch.rand(d_in, d_out))
        self.W_key = nn.Parameter(torch.rand(d_in, d_out))
        self.W_value = nn.Parameter(torch.rand(d_in, d_out))
        self.dropout = nn.Dropout(dropout)
        self.register_buffer("mask", causal_mask(context_length), persistent=False)

    def forward(self, x):
        T = x.shape[-2]
        q, k, v = x @ self.W_query, x @ self.W_key, x @ self.W_value
        scores = q @ k.transpose(-2, -1) / k.shape[-1] ** 0.5
        return self.dropout(masked_softmax(scores, self.mask[:T, :T])) @ v
""",
        "fails": [CA],
        "says": "W_query.weight",
    },
]

MISTAKES += [
    {
        "name": "causal_float_mask",
        "kind": "logic",
        "cell": "causal_mask",
        "source": """def causal_mask(T, S=None, device=None):
    if S is None:
        S = T
    return torch.ones(T, S, device=device).tril(S - T)
""",
        "fails": [CM],
        "says": "bool",
    },
    {
        "name": "padding_default_S_is_batch_size",
        "kind": "logic",
        "cell": "padding_mask",
        "source": """def padding_mask(lengths, S=None):
    if S is None:
        S = len(lengths)
    pos = torch.arange(S, device=lengths.device)
    return (pos < lengths.unsqueeze(-1)).view(-1, 1, 1, S)
""",
        "fails": [PM],
        "says": "배치 크기 len(lengths) 를 썼습니다",
    },
    {
        "name": "combine_and_into_first_mask",
        "kind": "in-place",
        "cell": "combine_masks",
        "source": """def combine_masks(*masks):
    masks = [m for m in masks if m is not None]
    out = masks[0]
    for m in masks[1:]:
        out &= m
    return out
""",
        "fails": [CB],
        "says": "combine_masks",
    },
    {
        "name": "combine_by_stacking",
        "kind": "logic",
        "cell": "combine_masks",
        "source": """def combine_masks(*masks):
    masks = [m for m in masks if m is not None]
    return torch.stack(masks).all(dim=0)
""",
        "fails": [CB],
        "says": "combine_masks",
    },
    {
        "name": "fill_float32_min_for_every_dtype",
        "kind": "constant",
        "cell": "masked_softmax",
        "source": """def masked_softmax(scores, mask, dim=-1):
    filled = scores.masked_fill(~mask, torch.finfo(torch.float32).min)
    return torch.softmax(filled, dim=dim).masked_fill(~mask, 0.0)
"""
        + RENORM,
        "fails": [MS],
        "says": "float16",
    },
    {
        "name": "renorm_epsilon_in_denominator",
        "kind": "constant",
        "cell": "masked_softmax",
        "source": FILL_FIRST
        + """def masked_softmax_renorm(scores, mask, dim=-1):
    weights = torch.softmax(scores, dim=dim).masked_fill(~mask, 0.0)
    return weights / (weights.sum(dim=dim, keepdim=True) + 1e-9)
""",
        "fails": [MS],
        "says": "분모에 작은 수",
    },
    {
        "name": "mask_as_plain_attribute",
        "kind": "device",
        "cell": "causal_attention",
        "source": ATTENTION.replace(
            'self.register_buffer("mask", causal_mask(context_length), persistent=False)',
            "self.mask = causal_mask(context_length)",
        )
        + """        weights = masked_softmax(scores, self.mask[:T, :T])
        return self.dropout(weights) @ v
""",
        "fails": [CA],
        "says": "장치",
    },
    {
        "name": "scaled_by_sqrt_d_in",
        "kind": "logic",
        "cell": "causal_attention",
        "source": ATTENTION.replace("k.shape[-1] ** 0.5", "x.shape[-1] ** 0.5")
        + """        weights = masked_softmax(scores, self.mask[:T, :T])
        return self.dropout(weights) @ v
""",
        "fails": [CA],
        "says": "입력 차원 d_in 의 제곱근",
    },
    {
        "name": "dropout_module_built_in_forward",
        "kind": "randomness",
        "cell": "causal_attention",
        "source": attention(
            """        weights = masked_softmax(scores, self.mask[:T, :T])
        return nn.Dropout(self.p)(weights) @ v
"""
        ),
        "fails": [CA],
        "says": "eval",
    },
]

MISTAKES += [
    {
        "name": "dropout_hand_rolled_with_rand_like",
        "kind": "randomness",
        "cell": "causal_attention",
        "source": attention(
            """        weights = masked_softmax(scores, self.mask[:T, :T])
        if self.training and self.p > 0:
            keep = torch.rand_like(weights) >= self.p
            weights = weights * keep / (1 - self.p)
        return weights @ v
"""
        ),
        "fails": [CA],
        "says": "torch.rand_like 로 직접 만들었습니다",
    },
]

CORRECT = [
    {
        "name": "ok_causal_tril_on_device",
        "cell": "causal_mask",
        "source": """def causal_mask(T, S=None, device=None):
    S = T if S is None else S
    return torch.ones(T, S, dtype=torch.bool, device=device).tril(diagonal=S - T)
""",
        "why": "tril with diagonal S - T, made directly on device",
    },
    {
        "name": "ok_padding_indexing_and_ge",
        "cell": "padding_mask",
        "source": """def padding_mask(lengths, S=None):
    if S is None:
        S = int(lengths.max().item())
    pos = torch.arange(S, device=lengths.device)
    blocked = pos[None, :] >= lengths[:, None]
    return ~blocked[:, None, None, :]
""",
        "why": "negated >= test, None-indexing instead of view",
    },
    {
        "name": "ok_combine_reduce_logical_and",
        "cell": "combine_masks",
        "source": """import functools


def combine_masks(*masks):
    kept = [m for m in masks if m is not None]
    if len(kept) == 1:
        return kept[0]
    return functools.reduce(torch.logical_and, kept)
""",
        "why": "functools.reduce over torch.logical_and (broadcasts like &)",
    },
    {
        "name": "ok_masked_softmax_where_and_float32_inside",
        "cell": "masked_softmax",
        "source": """def masked_softmax(scores, mask, dim=-1):
    s = scores.float()
    filled = torch.where(mask, s, torch.finfo(s.dtype).min)
    w = torch.softmax(filled, dim=dim)
    return torch.where(mask, w, 0.0).to(scores.dtype)


def masked_softmax_renorm(scores, mask, dim=-1):
    w = torch.softmax(scores.float(), dim=dim)
    w = torch.where(mask, w, 0.0)
    total = w.sum(dim=dim, keepdim=True)
    total = torch.where(total > 0, total, torch.ones_like(total))
    return (w / total).to(scores.dtype)
""",
        "why": "torch.where instead of masked_fill, float32 inside for half inputs, cast back",
    },
    {
        "name": "ok_masked_softmax_minus_inf_then_where",
        "cell": "masked_softmax",
        "source": """def masked_softmax(scores, mask, dim=-1):
    w = torch.softmax(scores.masked_fill(~mask, float("-inf")), dim=dim)
    return torch.where(mask, w, torch.zeros_like(w))
"""
        + RENORM,
        "why": "-inf fill; the NaN of a fully blocked row sits only at blocked places, which "
        "torch.where replaces by 0",
    },
    {
        "name": "ok_attention_einsum",
        "cell": "causal_attention",
        "source": """class CausalAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, qkv_bias=False):
        super().__init__()
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.dropout = nn.Dropout(dropout)
        self.register_buffer("mask", causal_mask(context_length), persistent=False)

    def forward(self, x):
        T = x.shape[1]
        q = self.W_query(x)
        k = self.W_key(x)
        v = self.W_value(x)
        scores = torch.einsum("btd,bsd->bts", q, k) * k.shape[-1] ** -0.5
        weights = self.dropout(masked_softmax(scores, self.mask[:T, :T]))
        return torch.einsum("bts,bsd->btd", weights, v)
""",
        "why": "einsum for both products, scale as a power -0.5",
    },
]

OPEN = [
    {
        "name": "causal_tril_on_cpu_then_moved",
        "kind": "device",
        "cell": "causal_mask",
        "source": """def causal_mask(T, S=None, device=None):
    if S is None:
        S = T
    return torch.ones(T, S, dtype=torch.bool).tril(S - T).to(device)
""",
        "fails": [CM],
        "says": "장치",
        "why": (
            "full marks: built on CPU and moved with .to(device), which the spec forbids in "
            "bold; only the result's device is checked"
        ),
    },
]

# gaps closed since (the simulated GPU reports a CPU tensor moved to the device): graded now
CLOSED = {"causal_tril_on_cpu_then_moved"}
MISTAKES += [dict(m, says="CPU에 만든 뒤") for m in OPEN if m["name"] in CLOSED]
OPEN = [m for m in OPEN if m["name"] not in CLOSED]

# correct variants written on 2026-11-28 by an author who saw only the release notebook and
# the book (loops, library-style code, float64 inside): full marks on first contact
CORRECT += [
    {
        "name": "ok_causal_mask_row_loop",
        "cell": "causal_mask",
        "source": """def causal_mask(T, S=None, device=None):
    '''Build the mask one query row at a time.'''
    if S is None:
        S = T
    keys = torch.arange(S, device=device)
    rows = [keys <= (i + S - T) for i in range(T)]
    if not rows:
        return torch.zeros((0, S), dtype=torch.bool, device=device)
    return torch.stack(rows)
""",
        "why": (
            "Row i keeps keys j <= i + S - T; stacking the rows gives the same (T, S) bool mask "
            "on device (T = 0 handled)."
        ),
    },
    {
        "name": "ok_padding_mask_batch_loop",
        "cell": "padding_mask",
        "source": """def padding_mask(lengths, S=None):
    '''One row per sequence in a Python loop, stacked and unsqueezed.'''
    if S is None:
        S = int(lengths.max())
    pos = torch.arange(S, device=lengths.device)
    rows = [pos < n for n in lengths]
    if rows:
        m = torch.stack(rows)
    else:
        m = torch.zeros((0, S), dtype=torch.bool, device=lengths.device)
    return m[:, None, None, :]
""",
        "why": (
            "Each row compares positions with that sequence's length (a 0-d tensor, no .item()), "
            "so it works on any device; indexing with None adds the two broadcast dims."
        ),
    },
    {
        "name": "ok_combine_masks_de_morgan",
        "cell": "combine_masks",
        "source": """def combine_masks(*masks):
    '''AND via De Morgan: a position is kept unless some mask blocks it.'''
    blocked = None
    count = 0
    only = None
    for m in masks:
        if m is None:
            continue
        count += 1
        only = m
        blocked = ~m if blocked is None else (blocked | ~m)
    if count == 0:
        return None
    if count == 1:
        return only
    return ~blocked
""",
        "why": (
            "not(any mask blocks) == all masks keep; OR of the blocked masks broadcasts the same "
            "way as AND of the keep masks."
        ),
    },
    {
        "name": "ok_causal_attention_fused_qkv_where",
        "cell": "causal_attention",
        "source": (
            "class CausalAttention(nn.Module):\n"
            "    '''Single-head causal self-attention with dropout on the attention"
            " weights.'''\n"
            "\n"
            "    def __init__(self, d_in, d_out, context_length, dropout, "
            "qkv_bias=False):\n"
            "        super().__init__()\n"
            "        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)\n"
            "        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)\n"
            "        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)\n"
            "        self.dropout = nn.Dropout(dropout)\n"
            "        self.register_buffer('mask', causal_mask(context_length), "
            "persistent=False)\n"
            "\n"
            "    def forward(self, x):\n"
            "        lins = (self.W_query, self.W_key, self.W_value)\n"
            "        w = torch.cat([m.weight for m in lins], dim=0)\n"
            "        b = None if lins[0].bias is None else torch.cat([m.bias for m "
            "in lins], dim=0)\n"
            "        q, k, v = F.linear(x, w, b).chunk(3, dim=-1)\n"
            "        T = x.shape[-2]\n"
            "        keep = self.mask[:T, :T]\n"
            "        scores = torch.einsum('btd,bsd->bts', q, k) / (k.shape[-1] ** "
            "0.5)\n"
            "        scores = torch.where(keep, scores, torch.full_like(scores, "
            "torch.finfo(scores.dtype).min))\n"
            "        weights = torch.softmax(scores, dim=-1)\n"
            "        weights = torch.where(keep, weights, "
            "torch.zeros_like(weights))\n"
            "        weights = self.dropout(weights)\n"
            "        return torch.einsum('bts,bsd->btd', weights, v)\n"
        ),
        "why": (
            "One F.linear with the three weight matrices stacked equals the three projections; "
            "scores, causal fill with finfo.min, softmax, a single self.dropout on the (B, T, T) "
            "weights, then weights @ v."
        ),
    },
]
