"""Plausible student mistakes for assignment ``multihead`` (graded by tests/test_mistakes.py)."""

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
        "fails": [
            "test_split_heads",
            "test_multihead_attention",
            "test_mha_mask_cross",
            "test_torch_mha",
        ],
        "says": "값이 다릅니다",
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
        "fails": [
            "test_split_heads",
            "test_multihead_attention",
            "test_mha_mask_cross",
            "test_torch_mha",
        ],
        "says": "값이 다릅니다",
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
        "fails": [
            "test_split_heads",
            "test_multihead_attention",
            "test_mha_mask_cross",
            "test_torch_mha",
        ],
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
        "says": "state_dict에 heads.0.W_query.weight",
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
        "says": "shape",
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
        "says": "bias",
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
        "fails": ["test_multihead_attention", "test_mha_mask_cross", "test_torch_mha"],
        "says": "값이 다릅니다",
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
        "fails": ["test_multihead_attention", "test_mha_mask_cross", "test_torch_mha"],
        "says": "값이 다릅니다",
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
        "fails": ["test_mha_mask_cross", "test_torch_mha"],
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
        "says": "cross-attention",
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
        "fails": ["test_mha_mask_cross", "test_torch_mha"],
        "says": "값이 다릅니다",
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
        "fails": ["test_mha_mask_cross", "test_torch_mha"],
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
        "fails": ["test_multihead_attention", "test_mha_mask_cross", "test_torch_mha"],
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
        "says": "값이 다릅니다",
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
        "says": "nan",
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
        "fails": ["test_multihead_attention", "test_mha_mask_cross", "test_torch_mha"],
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
        "says": "mha_parameter_count",
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
        "says": "from_torch_mha_state",
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
        "says": "keep_mask_from_torch",
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
