"""Plausible student mistakes for assignment ``multihead``
(graded by tests/grader/test_mistakes.py)."""

ASSIGNMENT = "multihead"
MISTAKES = [
    {
        "name": "split_view_heads_first",
        "kind": "logic",
        "cell": "split_heads",
        "source": '''def split_heads(x, num_heads):
    """(B, T, d) -> (B, h, T, d_head)."""
    B, T, d = x.shape
    return x.view(B, num_heads, T, d // num_heads)


def merge_heads(x):
    """(B, h, T, d_head) -> (B, T, h * d_head)."""
    B, h, T, d_head = x.shape
    return x.transpose(1, 2).contiguous().view(B, T, h * d_head)
''',
        "fails": ["test_split_heads"],  # the attention checks take the helpers as given
        "says": "x.view(B, num_heads, T, d_head) 로 바로",
    },
    {
        "name": "merge_without_transpose",
        "kind": "logic",
        "cell": "split_heads",
        "source": '''def split_heads(x, num_heads):
    """(B, T, d) -> (B, h, T, d_head)."""
    B, T, d = x.shape
    return x.view(B, T, num_heads, d // num_heads).transpose(1, 2)


def merge_heads(x):
    """(B, h, T, d_head) -> (B, T, h * d_head)."""
    B, h, T, d_head = x.shape
    return x.reshape(B, T, h * d_head)
''',
        "fails": ["test_split_heads"],  # the attention checks take the helpers as given
        "says": "transpose 없이 (B, h, T, d_head) 를 바로",
    },
    {
        "name": "merge_view_without_contiguous",
        "kind": "logic",
        "cell": "split_heads",
        "source": '''def split_heads(x, num_heads):
    """(B, T, d) -> (B, h, T, d_head)."""
    B, T, d = x.shape
    return x.view(B, T, num_heads, d // num_heads).transpose(1, 2)


def merge_heads(x):
    """(B, h, T, d_head) -> (B, T, h * d_head)."""
    B, h, T, d_head = x.shape
    return x.transpose(1, 2).view(B, T, h * d_head)
''',
        "fails": ["test_split_heads"],  # the attention checks take the helpers as given
        "says": "view",
    },
    {
        "name": "wrapper_plain_list",
        "kind": "logic",
        "cell": "wrapper",
        "source": '''class MultiHeadAttentionWrapper(nn.Module):
    """num_heads CausalAttention heads side by side."""

    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__()
        self.heads = list(
            [
                CausalAttention(d_in, d_out, context_length, dropout, qkv_bias)
                for _ in range(num_heads)
            ]
        )

    def forward(self, x):
        return torch.cat([head(x) for head in self.heads], dim=-1)
''',
        "fails": ["test_wrapper"],
        "says": "nn.ModuleList",
    },
    {
        "name": "wrapper_sums_heads",
        "kind": "logic",
        "cell": "wrapper",
        "source": '''class MultiHeadAttentionWrapper(nn.Module):
    """num_heads CausalAttention heads side by side."""

    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__()
        self.heads = nn.ModuleList(
            [
                CausalAttention(d_in, d_out, context_length, dropout, qkv_bias)
                for _ in range(num_heads)
            ]
        )

    def forward(self, x):
        return torch.stack([head(x) for head in self.heads]).sum(dim=0)
''',
        "fails": ["test_wrapper"],
        "says": "헤드의 출력을 더했습니다",
    },
    {
        "name": "wrapper_ignores_qkv_bias",
        "kind": "logic",
        "cell": "wrapper",
        "source": '''class MultiHeadAttentionWrapper(nn.Module):
    """num_heads CausalAttention heads side by side."""

    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__()
        self.heads = nn.ModuleList(
            [
                CausalAttention(d_in, d_out, context_length, dropout)
                for _ in range(num_heads)
            ]
        )

    def forward(self, x):
        return torch.cat([head(x) for head in self.heads], dim=-1)
''',
        "fails": ["test_wrapper"],
        "says": "qkv_bias 인자를 쓰지 않았습니다",
    },
    {
        "name": "mha_scale_by_d_out",
        "kind": "logic",
        "cell": "multihead_attention",
        "source": '''class MultiHeadAttention(nn.Module):
    """Multi-head attention with one projection per role, split into heads."""

    def __init__(
        self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False, causal=True
    ):
        super().__init__()
        self.num_heads = num_heads
        self.head_dim = d_out // num_heads
        self.causal = causal
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)
        self.dropout = nn.Dropout(dropout)
        if causal:
            self.register_buffer("mask", causal_mask(context_length), persistent=False)

    def forward(self, x, context=None, mask=None):
        source = x if context is None else context
        q = split_heads(self.W_query(x), self.num_heads)
        k = split_heads(self.W_key(source), self.num_heads)
        v = split_heads(self.W_value(source), self.num_heads)
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.num_heads * self.head_dim)
        if self.causal and context is None:
            T = x.shape[1]
            causal = self.mask[:T, :T]
            mask = causal if mask is None else mask & causal
        weights = self.dropout(masked_softmax(scores, mask))
        return self.out_proj(merge_heads(weights @ v))
''',
        "fails": ["test_multihead_attention", "test_mha_mask_cross"],
        "says": "점수를 √d_out 으로 나누었습니다",
    },
    {
        "name": "mha_forgets_out_proj",
        "kind": "logic",
        "cell": "multihead_attention",
        "source": '''class MultiHeadAttention(nn.Module):
    """Multi-head attention with one projection per role, split into heads."""

    def __init__(
        self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False, causal=True
    ):
        super().__init__()
        self.num_heads = num_heads
        self.head_dim = d_out // num_heads
        self.causal = causal
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)
        self.dropout = nn.Dropout(dropout)
        if causal:
            self.register_buffer("mask", causal_mask(context_length), persistent=False)

    def forward(self, x, context=None, mask=None):
        source = x if context is None else context
        q = split_heads(self.W_query(x), self.num_heads)
        k = split_heads(self.W_key(source), self.num_heads)
        v = split_heads(self.W_value(source), self.num_heads)
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.head_dim)
        if self.causal and context is None:
            T = x.shape[1]
            causal = self.mask[:T, :T]
            mask = causal if mask is None else mask & causal
        weights = self.dropout(masked_softmax(scores, mask))
        return merge_heads(weights @ v)
''',
        "fails": ["test_multihead_attention", "test_mha_mask_cross"],
        "says": "출력 투영(out_proj)을 적용하지 않았습니다",
    },
    {
        "name": "mha_cross_keys_from_x",
        "kind": "logic",
        "cell": "multihead_attention",
        "source": '''class MultiHeadAttention(nn.Module):
    """Multi-head attention with one projection per role, split into heads."""

    def __init__(
        self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False, causal=True
    ):
        super().__init__()
        self.num_heads = num_heads
        self.head_dim = d_out // num_heads
        self.causal = causal
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)
        self.dropout = nn.Dropout(dropout)
        if causal:
            self.register_buffer("mask", causal_mask(context_length), persistent=False)

    def forward(self, x, context=None, mask=None):
        source = x if context is None else context
        q = split_heads(self.W_query(x), self.num_heads)
        k = split_heads(self.W_key(x), self.num_heads)
        v = split_heads(self.W_value(source), self.num_heads)
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.head_dim)
        if self.causal and context is None:
            T = x.shape[1]
            causal = self.mask[:T, :T]
            mask = causal if mask is None else mask & causal
        weights = self.dropout(masked_softmax(scores, mask))
        return self.out_proj(merge_heads(weights @ v))
''',
        "fails": ["test_mha_mask_cross"],
        "says": "context=",
    },
    {
        "name": "mha_causal_also_in_cross_attention",
        "kind": "logic",
        "cell": "multihead_attention",
        "source": '''class MultiHeadAttention(nn.Module):
    """Multi-head attention with one projection per role, split into heads."""

    def __init__(
        self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False, causal=True
    ):
        super().__init__()
        self.num_heads = num_heads
        self.head_dim = d_out // num_heads
        self.causal = causal
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)
        self.dropout = nn.Dropout(dropout)
        if causal:
            self.register_buffer("mask", causal_mask(context_length), persistent=False)

    def forward(self, x, context=None, mask=None):
        source = x if context is None else context
        q = split_heads(self.W_query(x), self.num_heads)
        k = split_heads(self.W_key(source), self.num_heads)
        v = split_heads(self.W_value(source), self.num_heads)
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.head_dim)
        if self.causal:
            T, S = x.shape[1], source.shape[1]
            causal = causal_mask(T, S, device=x.device)
            mask = causal if mask is None else mask & causal
        weights = self.dropout(masked_softmax(scores, mask))
        return self.out_proj(merge_heads(weights @ v))
''',
        "fails": ["test_mha_mask_cross"],
        "says": "크로스 어텐션(context 가 주어짐)에도 인과 마스크를",
    },
    {
        "name": "mha_ignores_mask_argument",
        "kind": "logic",
        "cell": "multihead_attention",
        "source": '''class MultiHeadAttention(nn.Module):
    """Multi-head attention with one projection per role, split into heads."""

    def __init__(
        self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False, causal=True
    ):
        super().__init__()
        self.num_heads = num_heads
        self.head_dim = d_out // num_heads
        self.causal = causal
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)
        self.dropout = nn.Dropout(dropout)
        if causal:
            self.register_buffer("mask", causal_mask(context_length), persistent=False)

    def forward(self, x, context=None, mask=None):
        source = x if context is None else context
        q = split_heads(self.W_query(x), self.num_heads)
        k = split_heads(self.W_key(source), self.num_heads)
        v = split_heads(self.W_value(source), self.num_heads)
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.head_dim)
        if self.causal and context is None:
            T = x.shape[1]
            causal = self.mask[:T, :T]
            mask = causal
        weights = self.dropout(masked_softmax(scores, mask if self.causal else None))
        return self.out_proj(merge_heads(weights @ v))
''',
        "fails": ["test_mha_mask_cross"],
        "says": "mask 인자를 쓰지 않았습니다",
    },
    {
        "name": "mha_mask_and_in_place",
        "kind": "in-place",
        "cell": "multihead_attention",
        "source": '''class MultiHeadAttention(nn.Module):
    """Multi-head attention with one projection per role, split into heads."""

    def __init__(
        self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False, causal=True
    ):
        super().__init__()
        self.num_heads = num_heads
        self.head_dim = d_out // num_heads
        self.causal = causal
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)
        self.dropout = nn.Dropout(dropout)
        if causal:
            self.register_buffer("mask", causal_mask(context_length), persistent=False)

    def forward(self, x, context=None, mask=None):
        source = x if context is None else context
        q = split_heads(self.W_query(x), self.num_heads)
        k = split_heads(self.W_key(source), self.num_heads)
        v = split_heads(self.W_value(source), self.num_heads)
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.head_dim)
        if self.causal and context is None:
            T = x.shape[1]
            causal = self.mask[:T, :T]
            if mask is None:
                mask = causal
            else:
                mask &= causal
        weights = self.dropout(masked_softmax(scores, mask))
        return self.out_proj(merge_heads(weights @ v))
''',
        "fails": ["test_mha_mask_cross"],
        "says": "in-place",
    },
    {
        "name": "mha_causal_mask_on_default_device",
        "kind": "device",
        "cell": "multihead_attention",
        "source": '''class MultiHeadAttention(nn.Module):
    """Multi-head attention with one projection per role, split into heads."""

    def __init__(
        self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False, causal=True
    ):
        super().__init__()
        self.num_heads = num_heads
        self.head_dim = d_out // num_heads
        self.causal = causal
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)
        self.dropout = nn.Dropout(dropout)
        if causal:
            self.register_buffer("mask", causal_mask(context_length), persistent=False)

    def forward(self, x, context=None, mask=None):
        source = x if context is None else context
        q = split_heads(self.W_query(x), self.num_heads)
        k = split_heads(self.W_key(source), self.num_heads)
        v = split_heads(self.W_value(source), self.num_heads)
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.head_dim)
        if self.causal and context is None:
            T = x.shape[1]
            causal = torch.tril(torch.ones(T, T, dtype=torch.bool))
            mask = causal if mask is None else mask & causal
        weights = self.dropout(masked_softmax(scores, mask))
        return self.out_proj(merge_heads(weights @ v))
''',
        "fails": ["test_multihead_attention", "test_mha_mask_cross"],
        "says": "장치",
    },
    {
        "name": "mha_dropout_on_output",
        "kind": "randomness",
        "cell": "multihead_attention",
        "source": '''class MultiHeadAttention(nn.Module):
    """Multi-head attention with one projection per role, split into heads."""

    def __init__(
        self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False, causal=True
    ):
        super().__init__()
        self.num_heads = num_heads
        self.head_dim = d_out // num_heads
        self.causal = causal
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)
        self.dropout = nn.Dropout(dropout)
        if causal:
            self.register_buffer("mask", causal_mask(context_length), persistent=False)

    def forward(self, x, context=None, mask=None):
        source = x if context is None else context
        q = split_heads(self.W_query(x), self.num_heads)
        k = split_heads(self.W_key(source), self.num_heads)
        v = split_heads(self.W_value(source), self.num_heads)
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.head_dim)
        if self.causal and context is None:
            T = x.shape[1]
            causal = self.mask[:T, :T]
            mask = causal if mask is None else mask & causal
        weights = masked_softmax(scores, mask)
        return self.dropout(self.out_proj(merge_heads(weights @ v)))
''',
        "fails": ["test_multihead_attention", "test_mha_mask_cross"],
        "says": "train",
    },
    {
        "name": "mha_dropout_on_scores",
        "kind": "randomness",
        "cell": "multihead_attention",
        "source": '''class MultiHeadAttention(nn.Module):
    """Multi-head attention with one projection per role, split into heads."""

    def __init__(
        self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False, causal=True
    ):
        super().__init__()
        self.num_heads = num_heads
        self.head_dim = d_out // num_heads
        self.causal = causal
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)
        self.dropout = nn.Dropout(dropout)
        if causal:
            self.register_buffer("mask", causal_mask(context_length), persistent=False)

    def forward(self, x, context=None, mask=None):
        source = x if context is None else context
        q = split_heads(self.W_query(x), self.num_heads)
        k = split_heads(self.W_key(source), self.num_heads)
        v = split_heads(self.W_value(source), self.num_heads)
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.head_dim)
        if self.causal and context is None:
            T = x.shape[1]
            causal = self.mask[:T, :T]
            mask = causal if mask is None else mask & causal
        weights = masked_softmax(self.dropout(scores), mask)
        return self.out_proj(merge_heads(weights @ v))
''',
        "fails": ["test_multihead_attention", "test_mha_mask_cross"],
        "says": "train",
    },
    {
        "name": "mha_fill_minus_1e9",
        "kind": "constant",
        "cell": "multihead_attention",
        "source": '''class MultiHeadAttention(nn.Module):
    """Multi-head attention with one projection per role, split into heads."""

    def __init__(
        self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False, causal=True
    ):
        super().__init__()
        self.num_heads = num_heads
        self.head_dim = d_out // num_heads
        self.causal = causal
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)
        self.dropout = nn.Dropout(dropout)
        if causal:
            self.register_buffer("mask", causal_mask(context_length), persistent=False)

    def forward(self, x, context=None, mask=None):
        source = x if context is None else context
        q = split_heads(self.W_query(x), self.num_heads)
        k = split_heads(self.W_key(source), self.num_heads)
        v = split_heads(self.W_value(source), self.num_heads)
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.head_dim)
        if self.causal and context is None:
            T = x.shape[1]
            causal = self.mask[:T, :T]
            mask = causal if mask is None else mask & causal
        if mask is not None:
            scores = scores.masked_fill(~mask, -1e9)
        weights = self.dropout(torch.softmax(scores, dim=-1))
        return self.out_proj(merge_heads(weights @ v))
''',
        "fails": ["test_mha_mask_cross"],
        "says": "균등 분포(1/S)",
    },
    {
        "name": "mha_fill_minus_inf",
        "kind": "constant",
        "cell": "multihead_attention",
        "source": '''class MultiHeadAttention(nn.Module):
    """Multi-head attention with one projection per role, split into heads."""

    def __init__(
        self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False, causal=True
    ):
        super().__init__()
        self.num_heads = num_heads
        self.head_dim = d_out // num_heads
        self.causal = causal
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)
        self.dropout = nn.Dropout(dropout)
        if causal:
            self.register_buffer("mask", causal_mask(context_length), persistent=False)

    def forward(self, x, context=None, mask=None):
        source = x if context is None else context
        q = split_heads(self.W_query(x), self.num_heads)
        k = split_heads(self.W_key(source), self.num_heads)
        v = split_heads(self.W_value(source), self.num_heads)
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.head_dim)
        if self.causal and context is None:
            T = x.shape[1]
            causal = self.mask[:T, :T]
            mask = causal if mask is None else mask & causal
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
        weights = self.dropout(torch.softmax(scores, dim=-1))
        return self.out_proj(merge_heads(weights @ v))
''',
        "fails": ["test_mha_mask_cross"],
        "says": "NaN 이 되었습니다",
    },
    {
        "name": "mha_uses_torch_sdpa",
        "kind": "forbidden",
        "cell": "multihead_attention",
        "source": '''class MultiHeadAttention(nn.Module):
    """Multi-head attention with one projection per role, split into heads."""

    def __init__(
        self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False, causal=True
    ):
        super().__init__()
        self.num_heads = num_heads
        self.head_dim = d_out // num_heads
        self.causal = causal
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)
        self.dropout = nn.Dropout(dropout)
        if causal:
            self.register_buffer("mask", causal_mask(context_length), persistent=False)

    def forward(self, x, context=None, mask=None):
        source = x if context is None else context
        q = split_heads(self.W_query(x), self.num_heads)
        k = split_heads(self.W_key(source), self.num_heads)
        v = split_heads(self.W_value(source), self.num_heads)
        if self.causal and context is None:
            T = x.shape[1]
            causal = self.mask[:T, :T]
            mask = causal if mask is None else mask & causal
        p = self.dropout.p if self.training else 0.0
        out = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, dropout_p=p)
        return self.out_proj(merge_heads(out))
''',
        "fails": ["test_multihead_attention", "test_mha_mask_cross"],
        "says": "scaled_dot_product_attention",
    },
    {
        "name": "count_three_matrices",
        "kind": "logic",
        "cell": "parameter_count",
        "source": '''def mha_parameter_count(d_model, bias=True):
    """Number of parameters of multi-head attention with d_in = d_out = d_model (a Python int)."""
    return 3 * d_model * d_model + (3 * d_model if bias else 0)
''',
        "fails": ["test_parameter_count"],
        "says": "출력 투영(out_proj)을 빼고 세었습니다",
    },
    {
        "name": "count_returns_float",
        "kind": "logic",
        "cell": "parameter_count",
        "source": '''def mha_parameter_count(d_model, bias=True):
    """Number of parameters of multi-head attention with d_in = d_out = d_model (a Python int)."""
    return 4 * d_model**2 + 4 * d_model * float(bias)
''',
        "fails": ["test_parameter_count"],
        "says": "mha_parameter_count",
    },
    {
        "name": "torch_state_transposed",
        "kind": "logic",
        "cell": "torch_mha",
        "source": '''def from_torch_mha_state(state):
    """nn.MultiheadAttention state_dict -> state_dict for our MultiHeadAttention."""
    w_q, w_k, w_v = (w.T for w in state["in_proj_weight"].chunk(3))
    out = {"W_query.weight": w_q, "W_key.weight": w_k, "W_value.weight": w_v}
    if "in_proj_bias" in state:
        b_q, b_k, b_v = state["in_proj_bias"].chunk(3)
        out.update({"W_query.bias": b_q, "W_key.bias": b_k, "W_value.bias": b_v})
    out["out_proj.weight"] = state["out_proj.weight"]
    if "out_proj.bias" in state:
        out["out_proj.bias"] = state["out_proj.bias"]
    else:
        out["out_proj.bias"] = torch.zeros_like(state["out_proj.weight"][0])
    return out


def keep_mask_from_torch(attn_mask=None, key_padding_mask=None):
    """nn.MultiheadAttention bool masks (True = blocked) -> our keep-mask (True = may attend)."""
    keep = None
    if attn_mask is not None:
        keep = ~attn_mask
    if key_padding_mask is not None:
        pad = ~key_padding_mask.view(key_padding_mask.shape[0], 1, 1, -1)
        keep = pad if keep is None else keep & pad
    return keep
''',
        "fails": ["test_torch_mha"],
        "says": "가중치를 전치(.T)했습니다",
    },
    {
        "name": "torch_mask_not_inverted",
        "kind": "logic",
        "cell": "torch_mha",
        "source": '''def from_torch_mha_state(state):
    """nn.MultiheadAttention state_dict -> state_dict for our MultiHeadAttention."""
    w_q, w_k, w_v = state["in_proj_weight"].chunk(3)
    out = {"W_query.weight": w_q, "W_key.weight": w_k, "W_value.weight": w_v}
    if "in_proj_bias" in state:
        b_q, b_k, b_v = state["in_proj_bias"].chunk(3)
        out.update({"W_query.bias": b_q, "W_key.bias": b_k, "W_value.bias": b_v})
    out["out_proj.weight"] = state["out_proj.weight"]
    if "out_proj.bias" in state:
        out["out_proj.bias"] = state["out_proj.bias"]
    else:
        out["out_proj.bias"] = torch.zeros_like(state["out_proj.weight"][0])
    return out


def keep_mask_from_torch(attn_mask=None, key_padding_mask=None):
    """nn.MultiheadAttention bool masks (True = blocked) -> our keep-mask (True = may attend)."""
    keep = None
    if attn_mask is not None:
        keep = attn_mask
    if key_padding_mask is not None:
        pad = ~key_padding_mask.view(key_padding_mask.shape[0], 1, 1, -1)
        keep = pad if keep is None else keep & pad
    return keep
''',
        "fails": ["test_torch_mha"],
        "says": "attn_mask 를 뒤집지 않았습니다",
    },
    {
        "name": "torch_zero_bias_on_default_device",
        "kind": "device",
        "cell": "torch_mha",
        "source": '''def from_torch_mha_state(state):
    """nn.MultiheadAttention state_dict -> state_dict for our MultiHeadAttention."""
    w_q, w_k, w_v = state["in_proj_weight"].chunk(3)
    out = {"W_query.weight": w_q, "W_key.weight": w_k, "W_value.weight": w_v}
    if "in_proj_bias" in state:
        b_q, b_k, b_v = state["in_proj_bias"].chunk(3)
        out.update({"W_query.bias": b_q, "W_key.bias": b_k, "W_value.bias": b_v})
    out["out_proj.weight"] = state["out_proj.weight"]
    if "out_proj.bias" in state:
        out["out_proj.bias"] = state["out_proj.bias"]
    else:
        out["out_proj.bias"] = torch.zeros(state["out_proj.weight"].shape[0])
    return out


def keep_mask_from_torch(attn_mask=None, key_padding_mask=None):
    """nn.MultiheadAttention bool masks (True = blocked) -> our keep-mask (True = may attend)."""
    keep = None
    if attn_mask is not None:
        keep = ~attn_mask
    if key_padding_mask is not None:
        pad = ~key_padding_mask.view(key_padding_mask.shape[0], 1, 1, -1)
        keep = pad if keep is None else keep & pad
    return keep
''',
        "fails": ["test_torch_mha"],
        "says": "장치",
    },
]

# ---------------------------------------------------------------------------------------------
# More mistakes, written as one-snippet edits of reference-like cells (``_fix`` insists that the
# snippet occurs exactly once, so a change of the base cannot silently turn a mistake into the
# answer).


def _fix(source, old, new):
    if source.count(old) != 1:
        raise ValueError(f"snippet not found exactly once: {old!r}")
    return source.replace(old, new)


def _entry(name, kind, cell, source, fails, says):
    return {
        "name": name,
        "kind": kind,
        "cell": cell,
        "source": source,
        "fails": fails,
        "says": says,
    }


_SPLIT = '''def split_heads(x, num_heads):
    """(B, T, d) -> (B, h, T, d_head)."""
    B, T, d = x.shape
    return x.view(B, T, num_heads, d // num_heads).transpose(1, 2)


def merge_heads(x):
    """(B, h, T, d_head) -> (B, T, h * d_head)."""
    B, h, T, d_head = x.shape
    return x.transpose(1, 2).contiguous().view(B, T, h * d_head)
'''

_WRAPPER = '''class MultiHeadAttentionWrapper(nn.Module):
    """num_heads CausalAttention heads side by side."""

    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__()
        self.heads = nn.ModuleList(
            [
                CausalAttention(d_in, d_out, context_length, dropout, qkv_bias)
                for _ in range(num_heads)
            ]
        )

    def forward(self, x):
        return torch.cat([head(x) for head in self.heads], dim=-1)
'''

_MHA = '''class MultiHeadAttention(nn.Module):
    """Multi-head attention with one projection per role, split into heads."""

    def __init__(
        self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False, causal=True
    ):
        super().__init__()
        self.num_heads = num_heads
        self.head_dim = d_out // num_heads
        self.causal = causal
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)
        self.dropout = nn.Dropout(dropout)
        if causal:
            self.register_buffer("mask", causal_mask(context_length), persistent=False)

    def forward(self, x, context=None, mask=None):
        source = x if context is None else context
        q = split_heads(self.W_query(x), self.num_heads)
        k = split_heads(self.W_key(source), self.num_heads)
        v = split_heads(self.W_value(source), self.num_heads)
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.head_dim)
        if self.causal and context is None:
            T = x.shape[1]
            causal = self.mask[:T, :T]
            mask = causal if mask is None else mask & causal
        weights = self.dropout(masked_softmax(scores, mask))
        return self.out_proj(merge_heads(weights @ v))
'''

_COUNT = '''def mha_parameter_count(d_model, bias=True):
    """Number of parameters of multi-head attention with d_in = d_out = d_model (a Python int)."""
    return 4 * d_model * d_model + (4 * d_model if bias else 0)
'''

_TORCH = '''def from_torch_mha_state(state):
    """nn.MultiheadAttention state_dict -> state_dict for our MultiHeadAttention."""
    w_q, w_k, w_v = state["in_proj_weight"].chunk(3)
    out = {"W_query.weight": w_q, "W_key.weight": w_k, "W_value.weight": w_v}
    if "in_proj_bias" in state:
        b_q, b_k, b_v = state["in_proj_bias"].chunk(3)
        out.update({"W_query.bias": b_q, "W_key.bias": b_k, "W_value.bias": b_v})
    out["out_proj.weight"] = state["out_proj.weight"]
    if "out_proj.bias" in state:
        out["out_proj.bias"] = state["out_proj.bias"]
    else:
        out["out_proj.bias"] = torch.zeros_like(state["out_proj.weight"][0])
    return out


def keep_mask_from_torch(attn_mask=None, key_padding_mask=None):
    """nn.MultiheadAttention bool masks (True = blocked) -> our keep-mask (True = may attend)."""
    keep = None
    if attn_mask is not None:
        keep = ~attn_mask
    if key_padding_mask is not None:
        pad = ~key_padding_mask[:, None, None, :]
        keep = pad if keep is None else keep & pad
    return keep
'''

SPLIT, WRAPPER, MHA, MASK_CROSS, COUNT, TORCH = (
    "test_split_heads",
    "test_wrapper",
    "test_multihead_attention",
    "test_mha_mask_cross",
    "test_parameter_count",
    "test_torch_mha",
)

MISTAKES += [
    # ------------------------------------------------------------------ split_heads / merge_heads
    _entry(
        "merge_reshape_minus_one",
        "logic",
        "split_heads",
        _fix(
            _SPLIT,
            "return x.transpose(1, 2).contiguous().view(B, T, h * d_head)",
            "return x.transpose(1, 2).reshape(B, T, -1)",
        ),
        [SPLIT],
        "merge_heads",
    ),
    # ------------------------------------------------------------------ wrapper
    _entry(
        "wrapper_heads_called_in_reverse",
        "randomness",
        "wrapper",
        _fix(
            _WRAPPER,
            "        return torch.cat([head(x) for head in self.heads], dim=-1)\n",
            "        outs = [head(x) for head in reversed(self.heads)]\n"
            "        return torch.cat(outs[::-1], dim=-1)\n",
        ),
        [WRAPPER],
        "train",
    ),
    _entry(
        "wrapper_one_head_repeated",
        "logic",
        "wrapper",
        _fix(
            _WRAPPER,
            """            [
                CausalAttention(d_in, d_out, context_length, dropout, qkv_bias)
                for _ in range(num_heads)
            ]""",
            "[CausalAttention(d_in, d_out, context_length, dropout, qkv_bias)] * num_heads",
        ),
        [WRAPPER],
        "모든 헤드가 같은 모듈",
    ),
    # ------------------------------------------------------------------ MultiHeadAttention
    _entry(
        "mha_mask_persistent_buffer",
        "logic",
        "multihead_attention",
        _fix(
            _MHA,
            'self.register_buffer("mask", causal_mask(context_length), persistent=False)',
            'self.register_buffer("mask", causal_mask(context_length))',
        ),
        [MHA],
        "mask",
    ),
    _entry(
        "mha_mask_plain_attribute",
        "device",
        "multihead_attention",
        _fix(
            _MHA,
            'self.register_buffer("mask", causal_mask(context_length), persistent=False)',
            "self.mask = causal_mask(context_length)",
        ),
        [MHA, MASK_CROSS],
        "장치",
    ),
    _entry(
        "mha_causal_mask_not_sliced",
        "logic",
        "multihead_attention",
        _fix(_MHA, "causal = self.mask[:T, :T]", "causal = self.mask"),
        [MHA, MASK_CROSS],
        "MultiHeadAttention",
    ),
    _entry(
        "mha_head_dim_from_d_in",
        "logic",
        "multihead_attention",
        _fix(_MHA, "self.head_dim = d_out // num_heads", "self.head_dim = d_in // num_heads"),
        [MHA, MASK_CROSS],
        "head_dim 을 d_in // num_heads 로",
    ),
    _entry(
        "mha_softmax_in_float32",
        "constant",
        "multihead_attention",
        _fix(
            _MHA,
            "weights = self.dropout(masked_softmax(scores, mask))",
            "weights = self.dropout(masked_softmax(scores.float(), mask).to(v.dtype))",
        ),
        [MHA, MASK_CROSS],
        "float32 로 계산했습니다",
    ),
    _entry(
        "mha_own_softmax_blocked_rows_uniform",
        "logic",
        "multihead_attention",
        _fix(
            _MHA,
            "        weights = self.dropout(masked_softmax(scores, mask))\n",
            "        if mask is not None:\n"
            "            scores = scores.masked_fill(~mask, torch.finfo(scores.dtype).min)\n"
            "        weights = self.dropout(torch.softmax(scores, dim=-1))\n",
        ),
        [MASK_CROSS],
        "균등 분포(1/S)",
    ),
    _entry(
        "mha_mask_or_causal",
        "logic",
        "multihead_attention",
        _fix(
            _MHA,
            "mask = causal if mask is None else mask & causal",
            "mask = causal if mask is None else mask | causal",
        ),
        [MASK_CROSS],
        "mask 와 인과 마스크를 OR(|) 로",
    ),
    # ------------------------------------------------------------------ mha_parameter_count
    _entry(
        "count_float_power_for_huge_d",
        "constant",
        "parameter_count",
        _fix(
            _COUNT,
            "return 4 * d_model * d_model + (4 * d_model if bias else 0)",
            "return int(4 * d_model**2.0 + (4 * d_model if bias else 0))",
        ),
        [COUNT],
        "정밀도를 잃었습니다",
    ),
    # ------------------------------------------------------------------ torch_mha
    _entry(
        "torch_state_pops_from_input",
        "in-place",
        "torch_mha",
        _fix(
            _TORCH,
            """    w_q, w_k, w_v = state["in_proj_weight"].chunk(3)
    out = {"W_query.weight": w_q, "W_key.weight": w_k, "W_value.weight": w_v}
    if "in_proj_bias" in state:
        b_q, b_k, b_v = state["in_proj_bias"].chunk(3)""",
            """    w_q, w_k, w_v = state.pop("in_proj_weight").chunk(3)
    out = {"W_query.weight": w_q, "W_key.weight": w_k, "W_value.weight": w_v}
    if "in_proj_bias" in state:
        b_q, b_k, b_v = state.pop("in_proj_bias").chunk(3)""",
        ),
        [TORCH],
        "from_torch_mha_state",
    ),
    _entry(
        "torch_zero_bias_default_dtype",
        "logic",
        "torch_mha",
        _fix(
            _TORCH,
            'torch.zeros_like(state["out_proj.weight"][0])',
            'torch.zeros(len(state["out_proj.weight"]), device=state["out_proj.weight"].device)',
        ),
        [TORCH],
        "from_torch_mha_state",
    ),
    _entry(
        "torch_padding_mask_not_unsqueezed",
        "logic",
        "torch_mha",
        _fix(_TORCH, "pad = ~key_padding_mask[:, None, None, :]", "pad = ~key_padding_mask"),
        [TORCH],
        "keep_mask_from_torch",
    ),
    _entry(
        "torch_masks_combined_with_or",
        "logic",
        "torch_mha",
        _fix(
            _TORCH,
            "keep = pad if keep is None else keep & pad",
            "keep = pad if keep is None else keep | pad",
        ),
        [TORCH],
        "두 마스크를 OR(|) 로 합쳤습니다",
    ),
]

# Correct solutions written another way: each must keep full marks.
CORRECT = [
    {
        "name": "split_reshape_permute",
        "cell": "split_heads",
        "source": '''def split_heads(x, num_heads):
    """(B, T, d) -> (B, h, T, d_head) with reshape and permute."""
    B, T, d = x.shape
    return x.reshape(B, T, num_heads, d // num_heads).permute(0, 2, 1, 3)


def merge_heads(x):
    """(B, h, T, d_head) -> (B, T, h * d_head) with permute and reshape."""
    B, h, T, d_head = x.shape
    return x.permute(0, 2, 1, 3).reshape(B, T, h * d_head)
''',
        "why": "reshape copies when needed, so no contiguous() is required",
    },
    {
        "name": "merge_by_concatenating_heads",
        "cell": "split_heads",
        "source": '''def split_heads(x, num_heads):
    """(B, T, d) -> (B, h, T, d_head): stack the feature blocks along a new head axis."""
    return torch.stack(x.chunk(num_heads, dim=-1), dim=1)


def merge_heads(x):
    """(B, h, T, d_head) -> (B, T, h * d_head): the heads side by side."""
    return torch.cat(x.unbind(dim=1), dim=-1)
''',
        "why": "chunk/stack and unbind/cat are the split and the concatenation written out",
    },
    {
        "name": "wrapper_explicit_loop",
        "cell": "wrapper",
        "source": '''class MultiHeadAttentionWrapper(nn.Module):
    """num_heads CausalAttention heads side by side."""

    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__()
        self.heads = nn.ModuleList()
        for _ in range(num_heads):
            self.heads.append(CausalAttention(d_in, d_out, context_length, dropout, qkv_bias))

    def forward(self, x):
        outs = []
        for i in range(len(self.heads)):
            outs.append(self.heads[i](x))
        return torch.cat(outs, dim=-1)
''',
        "why": "the same heads, created and called in order 0 ... h-1",
    },
    {
        "name": "mha_einsum",
        "cell": "multihead_attention",
        "source": _fix(
            _fix(
                _MHA,
                "scores = q @ k.transpose(-2, -1) / math.sqrt(self.head_dim)",
                'scores = torch.einsum("bhtd,bhsd->bhts", q, k) / math.sqrt(self.head_dim)',
            ),
            "return self.out_proj(merge_heads(weights @ v))",
            'return self.out_proj(merge_heads(torch.einsum("bhts,bhsd->bhtd", weights, v)))',
        ),
        "why": "einsum computes the same two batched products",
    },
    {
        "name": "mha_causal_mask_built_in_forward",
        "cell": "multihead_attention",
        "source": _fix(
            _MHA,
            """            causal = self.mask[:T, :T]
            mask = causal if mask is None else mask & causal""",
            """            causal = causal_mask(T, device=x.device)
            mask = causal if mask is None else torch.logical_and(mask, causal)""",
        ),
        "why": "builds the (T, T) causal mask on x's device each call (the buffer is still there)",
    },
    {
        "name": "mha_scale_queries_first",
        "cell": "multihead_attention",
        "source": _fix(
            _MHA,
            "scores = q @ k.transpose(-2, -1) / math.sqrt(self.head_dim)",
            "scores = (q / math.sqrt(self.head_dim)) @ k.transpose(-2, -1)",
        ),
        "why": "the scale moves through the matmul (q k^T / c = (q / c) k^T)",
    },
    {
        "name": "count_factored",
        "cell": "parameter_count",
        "source": '''def mha_parameter_count(d_model, bias=True):
    """Four d x d matrices, plus four bias vectors when bias."""
    return 4 * d_model * (d_model + int(bias))
''',
        "why": "4 d (d + 1) with bias, 4 d^2 without, in exact integers",
    },
    {
        "name": "torch_slices_and_logical_not",
        "cell": "torch_mha",
        "source": '''def from_torch_mha_state(state):
    """nn.MultiheadAttention state_dict -> state_dict for our MultiHeadAttention."""
    w = state["in_proj_weight"]
    d = w.shape[0] // 3
    out = {}
    for i, role in enumerate(("W_query", "W_key", "W_value")):
        out[role + ".weight"] = w[i * d : (i + 1) * d]
        if state.get("in_proj_bias") is not None:
            out[role + ".bias"] = state["in_proj_bias"][i * d : (i + 1) * d]
    out["out_proj.weight"] = state["out_proj.weight"]
    b = state.get("out_proj.bias")
    out["out_proj.bias"] = b if b is not None else w.new_zeros(d)
    return out


def keep_mask_from_torch(attn_mask=None, key_padding_mask=None):
    """nn.MultiheadAttention bool masks (True = blocked) -> our keep-mask (True = may attend)."""
    if attn_mask is None and key_padding_mask is None:
        return None
    if key_padding_mask is None:
        return torch.logical_not(attn_mask)
    B, S = key_padding_mask.shape
    pad = torch.logical_not(key_padding_mask).view(B, 1, 1, S)
    if attn_mask is None:
        return pad
    return torch.logical_not(attn_mask) & pad
''',
        "why": "row slices instead of chunk; logical_not instead of ~",
    },
]

MISTAKES += [
    _entry(
        "torch_masks_inverted_in_place",
        "in-place",
        "torch_mha",
        _fix(
            _fix(_TORCH, "keep = ~attn_mask", "keep = attn_mask.logical_not_()"),
            "pad = ~key_padding_mask[:, None, None, :]",
            "pad = key_padding_mask.logical_not_()[:, None, None, :]",
        ),
        [TORCH],
        "keep_mask_from_torch",
    ),
]

# Graded full marks although they break the spec (the grader's gaps, kept out of MISTAKES): the
# why says what the grader did.
# Missed on first contact with the blind sample of 2026-11-28 (tests/mistakes/BLIND.md),
# caught by the cases added for them the same day.
MISTAKES += [
    {
        "name": "mha_causal_when_lengths_match",
        "kind": "logic",
        "cell": "multihead_attention",
        "source": r'''
class MultiHeadAttention(nn.Module):
    """Multi-head attention with one projection per role, split into heads.

    forward(x (B, T, d_in), context (B, S, d_in) or None, mask bool keep-mask or None)
    -> (B, T, d_out).
    """

    def __init__(
        self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False, causal=True
    ):
        super().__init__()
        self.num_heads = num_heads
        self.d_head = d_out // num_heads
        self.causal = causal
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)
        self.dropout = nn.Dropout(dropout)
        if causal:
            self.register_buffer("mask", causal_mask(context_length), persistent=False)

    def forward(self, x, context=None, mask=None):
        src = x if context is None else context
        T = x.shape[1]
        q = split_heads(self.W_query(x), self.num_heads)
        k = split_heads(self.W_key(src), self.num_heads)
        v = split_heads(self.W_value(src), self.num_heads)
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.d_head)
        if self.causal and src.shape[1] == T:
            cm = self.mask[:T, :T]
            mask = cm if mask is None else mask & cm
        weights = self.dropout(masked_softmax(scores, mask))
        return self.out_proj(merge_heads(weights @ v))
''',
        "fails": ["test_mha_mask_cross"],
        "says": "크로스 어텐션(context 가 주어짐)에도 인과",
    },
]

_OPEN_WHY = {}
OPEN = [dict(m, why=_OPEN_WHY[m["name"]]) for m in MISTAKES if m["name"] in _OPEN_WHY]
MISTAKES = [m for m in MISTAKES if m["name"] not in _OPEN_WHY]

# correct variants written on 2026-11-28 by an author who saw only the release notebook and
# the book (loops, library-style code, float64 inside): full marks on first contact
CORRECT += [
    {
        "name": "ok_split_heads_slice_loop",
        "cell": "split_heads",
        "source": (
            "def split_heads(x, num_heads):\n"
            "    '''Python loop over heads slicing the feature axis.'''\n"
            "    B, T, d = x.shape\n"
            "    dh = d // num_heads\n"
            "    parts = [x[:, :, i * dh:(i + 1) * dh] for i in range(num_heads)]\n"
            "    return torch.stack(parts, dim=1)\n"
            "\n"
            "\n"
            "def merge_heads(x):\n"
            "    '''Python loop writing each head into its block of a new (B, T, h "
            "* d_head) tensor.'''\n"
            "    B, h, T, dh = x.shape\n"
            "    out = x.new_empty((B, T, h * dh))\n"
            "    for i in range(h):\n"
            "        out[:, :, i * dh:(i + 1) * dh] = x[:, i]\n"
            "    return out\n"
        ),
        "why": (
            "Explicit slicing per head implements out[b, i, t] = x[b, t, i*d_head:(i+1)*d_head] "
            "and its inverse; new_empty keeps dtype/device (integers included)."
        ),
    },
    {
        "name": "ok_mha_head_loop_single_dropout",
        "cell": "multihead_attention",
        "source": (
            "class MultiHeadAttention(nn.Module):\n"
            "    '''Multi-head attention with one projection per role, split into "
            "heads.'''\n"
            "\n"
            "    def __init__(\n"
            "        self, d_in, d_out, context_length, dropout, num_heads, "
            "qkv_bias=False, causal=True\n"
            "    ):\n"
            "        super().__init__()\n"
            "        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)\n"
            "        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)\n"
            "        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)\n"
            "        self.out_proj = nn.Linear(d_out, d_out)\n"
            "        self.dropout = nn.Dropout(dropout)\n"
            "        self.h = num_heads\n"
            "        self.causal = causal\n"
            "        if self.causal:\n"
            "            self.register_buffer('mask', causal_mask(context_length), "
            "persistent=False)\n"
            "\n"
            "    def forward(self, x, context=None, mask=None):\n"
            "        src = context if context is not None else x\n"
            "        Q, K, V = self.W_query(x), self.W_key(src), self.W_value(src)\n"
            "        dh = Q.shape[-1] // self.h\n"
            "        score_list = []\n"
            "        for i in range(self.h):\n"
            "            qi = Q[..., i * dh:(i + 1) * dh]\n"
            "            ki = K[..., i * dh:(i + 1) * dh]\n"
            "            score_list.append(qi @ ki.transpose(-2, -1) / "
            "math.sqrt(dh))\n"
            "        scores = torch.stack(score_list, dim=1)\n"
            "        keep = mask\n"
            "        if context is None and self.causal:\n"
            "            T = Q.shape[1]\n"
            "            keep = self.mask[:T, :T] if keep is None else keep & "
            "self.mask[:T, :T]\n"
            "        weights = self.dropout(masked_softmax(scores, keep))\n"
            "        outs = [weights[:, i] @ V[..., i * dh:(i + 1) * dh] for i in "
            "range(self.h)]\n"
            "        return self.out_proj(torch.cat(outs, dim=-1))\n"
        ),
        "why": (
            "Per-head slices of the big projections are the heads; the per-head scores are "
            "stacked to (B, h, T, S) so masked_softmax and the single dropout act on the full "
            "tensor exactly once; concatenating head outputs is merge_heads."
        ),
    },
]
