"""Blind mistakes and correct variants for the `multihead` assignment."""

MISTAKES = [
    {
        "name": 'split_direct_view_mixes_tokens',
        "cell": 'split_heads',
        "clause": 'view(B, T, h, d_head) then transpose(1, 2); x.view(B, h, T, d_head) directly mixes tokens and heads.',
        "class": 'input-layout',
        "source": r'''
def split_heads(x, num_heads):
    """(B, T, d) -> (B, h, T, d_head): head i gets features i*d_head ... (i+1)*d_head - 1."""
    B, T, d = x.shape
    return x.reshape(B, num_heads, T, d // num_heads)


def merge_heads(x):
    """(B, h, T, d_head) -> (B, T, h * d_head); the inverse of split_heads."""
    B, h, T, dh = x.shape
    return x.transpose(1, 2).contiguous().view(B, T, h * dh)
''',
    },
    {
        "name": 'split_view_inferred_dim_fails_on_empty',
        "cell": 'split_heads',
        "clause": 'split_heads works for any (B, T, d) input, including length-0 sequences (hidden tests use T = 0).',
        "class": 'edge-values',
        "source": r'''
def split_heads(x, num_heads):
    """(B, T, d) -> (B, h, T, d_head): head i gets features i*d_head ... (i+1)*d_head - 1."""
    B, T, d = x.shape
    return x.reshape(B, T, num_heads, -1).transpose(1, 2)


def merge_heads(x):
    """(B, h, T, d_head) -> (B, T, h * d_head); the inverse of split_heads."""
    B, h, T, dh = x.shape
    return x.transpose(1, 2).contiguous().view(B, T, h * dh)
''',
    },
    {
        "name": 'merge_permute_feature_major',
        "cell": 'split_heads',
        "clause": 'merge_heads concatenates the heads along the last axis: out[..., i*d_head:(i+1)*d_head] is head i (inverse of split_heads).',
        "class": 'input-layout',
        "source": r'''
def split_heads(x, num_heads):
    """(B, T, d) -> (B, h, T, d_head): head i gets features i*d_head ... (i+1)*d_head - 1."""
    B, T, d = x.shape
    return x.reshape(B, T, num_heads, d // num_heads).transpose(1, 2)


def merge_heads(x):
    """(B, h, T, d_head) -> (B, T, h * d_head); the inverse of split_heads."""
    B, h, T, dh = x.shape
    return x.permute(0, 2, 3, 1).reshape(B, T, h * dh)
''',
    },
    {
        "name": 'merge_float32_buffer',
        "cell": 'split_heads',
        "clause": 'Any dtype (integers included) keeps its values and dtype: merge only moves entries.',
        "class": 'dtype',
        "source": r'''
def split_heads(x, num_heads):
    """(B, T, d) -> (B, h, T, d_head): head i gets features i*d_head ... (i+1)*d_head - 1."""
    B, T, d = x.shape
    return x.view(B, T, num_heads, d // num_heads).transpose(1, 2)


def merge_heads(x):
    """(B, h, T, d_head) -> (B, T, h * d_head); the inverse of split_heads."""
    B, h, T, dh = x.shape
    out = torch.zeros(B, T, h * dh, device=x.device)
    for i in range(h):
        out[:, :, i * dh : (i + 1) * dh] = x[:, i]
    return out
''',
    },
    {
        "name": 'merge_contiguous_before_transpose',
        "cell": 'split_heads',
        "clause": 'transpose makes the tensor non-contiguous, so contiguous() is needed BEFORE view (after the transpose); the input itself may be non-contiguous.',
        "class": 'input-layout',
        "source": r'''
def split_heads(x, num_heads):
    """(B, T, d) -> (B, h, T, d_head): head i gets features i*d_head ... (i+1)*d_head - 1."""
    B, T, d = x.shape
    return x.reshape(B, T, num_heads, d // num_heads).transpose(1, 2)


def merge_heads(x):
    """(B, h, T, d_head) -> (B, T, h * d_head); the inverse of split_heads."""
    B, h, T, dh = x.shape
    return x.contiguous().transpose(1, 2).view(B, T, h * dh)
''',
    },
    {
        "name": 'wrapper_plain_python_list',
        "cell": 'wrapper',
        "clause": 'Heads go into self.heads = nn.ModuleList([...]); a Python list does not register the parameters (missing from state_dict and .to(device)).',
        "class": 'logic',
        "source": r'''
class MultiHeadAttentionWrapper(nn.Module):
    """num_heads CausalAttention heads side by side. forward: (B, T, d_in) -> (B, T, h * d_out)."""

    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__()
        self.heads = [CausalAttention(d_in, d_out, context_length, dropout, qkv_bias) for _ in range(num_heads)]

    def forward(self, x):
        return torch.cat([head(x) for head in self.heads], dim=-1)
''',
    },
    {
        "name": 'wrapper_qkv_bias_not_forwarded',
        "cell": 'wrapper',
        "clause": 'Each head is CausalAttention(d_in, d_out, context_length, dropout, qkv_bias); qkv_bias=True adds heads.{i}.W_*.bias.',
        "class": 'defaults',
        "source": r'''
class MultiHeadAttentionWrapper(nn.Module):
    """num_heads CausalAttention heads side by side. forward: (B, T, d_in) -> (B, T, h * d_out)."""

    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__()
        self.heads = nn.ModuleList(
            [CausalAttention(d_in, d_out, context_length, dropout) for _ in range(num_heads)]
        )

    def forward(self, x):
        return torch.cat([head(x) for head in self.heads], dim=-1)
''',
    },
    {
        "name": 'wrapper_heads_called_in_reverse',
        "cell": 'wrapper',
        "clause": 'forward calls the heads once each in the order 0, 1, ..., h-1 (the dropout random-number order).',
        "class": 'randomness',
        "source": r'''
class MultiHeadAttentionWrapper(nn.Module):
    """num_heads CausalAttention heads side by side. forward: (B, T, d_in) -> (B, T, h * d_out)."""

    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__()
        self.heads = nn.ModuleList(
            [CausalAttention(d_in, d_out, context_length, dropout, qkv_bias) for _ in range(num_heads)]
        )

    def forward(self, x):
        outs = [head(x) for head in reversed(self.heads)]
        return torch.cat(outs[::-1], dim=-1)
''',
    },
    {
        "name": 'wrapper_stack_interleaves_features',
        "cell": 'wrapper',
        "clause": "Output [..., i*d_out:(i+1)*d_out] is head i's result (concatenation along the last axis).",
        "class": 'input-layout',
        "source": r'''
class MultiHeadAttentionWrapper(nn.Module):
    """num_heads CausalAttention heads side by side. forward: (B, T, d_in) -> (B, T, h * d_out)."""

    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__()
        self.heads = nn.ModuleList(
            [CausalAttention(d_in, d_out, context_length, dropout, qkv_bias) for _ in range(num_heads)]
        )

    def forward(self, x):
        return torch.stack([head(x) for head in self.heads], dim=-1).flatten(-2)
''',
    },
    {
        "name": 'mha_scale_by_d_out',
        "cell": 'multihead_attention',
        "clause": "Scores are QK^T / sqrt(d_head): each head's dot product has d_head dimensions.",
        "class": 'logic',
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
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.num_heads * self.d_head)
        if self.causal and context is None:
            cm = self.mask[:T, :T]
            mask = cm if mask is None else mask & cm
        weights = self.dropout(masked_softmax(scores, mask))
        return self.out_proj(merge_heads(weights @ v))
''',
    },
    {
        "name": 'mha_causal_when_lengths_match',
        "cell": 'multihead_attention',
        "clause": 'The causal mask is ANDed only for SELF-attention (context is None) with causal=True; cross-attention never uses the causal rule, even when S == T.',
        "class": 'logic',
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
    },
    {
        "name": 'mha_mask_and_inplace',
        "cell": 'multihead_attention',
        "clause": 'Do not modify the input mask; build a new tensor (mask &= ... is in-place).',
        "class": 'in-place',
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
        if self.causal and context is None:
            cm = self.mask[:T, :T]
            if mask is None:
                mask = cm
            else:
                mask &= cm
        weights = self.dropout(masked_softmax(scores, mask))
        return self.out_proj(merge_heads(weights @ v))
''',
    },
    {
        "name": 'mha_fill_minus_1e9',
        "cell": 'multihead_attention',
        "clause": "Blocked positions are handled with masked_softmax's finfo.min, not a constant like -1e9 (hidden tests have scores above 1e12).",
        "class": 'edge-values',
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
        if self.causal and context is None:
            cm = self.mask[:T, :T]
            mask = cm if mask is None else mask & cm
        if mask is not None:
            scores = scores.masked_fill(~mask, -1e9)
        weights = torch.softmax(scores, dim=-1)
        if mask is not None:
            weights = weights.masked_fill(~mask, 0.0)
        weights = self.dropout(weights)
        return self.out_proj(merge_heads(weights @ v))
''',
    },
    {
        "name": 'mha_causal_mask_rebuilt_on_cpu',
        "cell": 'multihead_attention',
        "clause": "New tensors go on the input's device (e.g. use the registered mask buffer, which follows .to(device)).",
        "class": 'device',
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
        if self.causal and context is None:
            cm = causal_mask(T)
            mask = cm if mask is None else mask & cm
        weights = self.dropout(masked_softmax(scores, mask))
        return self.out_proj(merge_heads(weights @ v))
''',
    },
    {
        "name": 'mha_mask_buffer_persistent',
        "cell": 'multihead_attention',
        "clause": "self.register_buffer('mask', causal_mask(context_length), persistent=False): no extra persistent buffer in state_dict (strict load).",
        "class": 'defaults',
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
            self.register_buffer("mask", causal_mask(context_length))

    def forward(self, x, context=None, mask=None):
        src = x if context is None else context
        T = x.shape[1]
        q = split_heads(self.W_query(x), self.num_heads)
        k = split_heads(self.W_key(src), self.num_heads)
        v = split_heads(self.W_value(src), self.num_heads)
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.d_head)
        if self.causal and context is None:
            cm = self.mask[:T, :T]
            mask = cm if mask is None else mask & cm
        weights = self.dropout(masked_softmax(scores, mask))
        return self.out_proj(merge_heads(weights @ v))
''',
    },
    {
        "name": 'mha_merge_reshape_inferred_dim',
        "cell": 'multihead_attention',
        "clause": 'Hidden tests include length-0 sequences; (B, T, d_out) must be produced for T = 0 too.',
        "class": 'edge-values',
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
        if self.causal and context is None:
            cm = self.mask[:T, :T]
            mask = cm if mask is None else mask & cm
        weights = self.dropout(masked_softmax(scores, mask))
        ctx = (weights @ v).transpose(1, 2).reshape(x.shape[0], T, -1)
        return self.out_proj(ctx)
''',
    },
    {
        "name": 'mha_functional_dropout_always_on',
        "cell": 'multihead_attention',
        "clause": 'self.dropout = nn.Dropout(dropout) is applied to the attention weights; dropout is active only in train() mode.',
        "class": 'randomness',
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
        if self.causal and context is None:
            cm = self.mask[:T, :T]
            mask = cm if mask is None else mask & cm
        weights = F.dropout(masked_softmax(scores, mask), p=self.dropout.p)
        return self.out_proj(merge_heads(weights @ v))
''',
    },
    {
        "name": 'mha_scale_float32_tensor',
        "cell": 'multihead_attention',
        "clause": 'Do not create tensors or constants fixed to float32: the module is also graded in float64 and bfloat16.',
        "class": 'dtype',
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
        scale = torch.tensor([1.0 / math.sqrt(self.d_head)], device=x.device)
        scores = (q @ k.transpose(-2, -1)) * scale
        if self.causal and context is None:
            cm = self.mask[:T, :T]
            mask = cm if mask is None else mask & cm
        weights = self.dropout(masked_softmax(scores, mask))
        return self.out_proj(merge_heads(weights @ v))
''',
    },
    {
        "name": 'mha_2d_mask_treated_as_padding',
        "cell": 'multihead_attention',
        "clause": 'mask is any bool keep-mask broadcastable to (B, h, T, S): (B, 1, 1, S), (T, S), (B, 1, T, S), (B, h, T, S).',
        "class": 'batch-axis',
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
        if mask is not None and mask.dim() == 2:  # (B, S) padding -> (B, 1, 1, S)
            mask = mask[:, None, None, :]
        if self.causal and context is None:
            cm = self.mask[:T, :T]
            mask = cm if mask is None else mask & cm
        weights = self.dropout(masked_softmax(scores, mask))
        return self.out_proj(merge_heads(weights @ v))
''',
    },
    {
        "name": 'count_float_factorisation',
        "cell": 'parameter_count',
        "clause": 'Return an exact Python int, also for very large d_model.',
        "class": 'integer-arithmetic',
        "source": r'''
def mha_parameter_count(d_model, bias=True):
    """Number of parameters of multi-head attention with d_in = d_out = d_model (a Python int)."""
    d = int(d_model)
    return int(4 * d * d * (1 + 1 / d)) if bias else 4 * d * d
''',
    },
    {
        "name": 'count_builds_torch_module',
        "cell": 'parameter_count',
        "clause": 'Must be exact (and computed) for very large d_model - count with a formula, the number of heads is irrelevant.',
        "class": 'edge-values',
        "source": r'''
def mha_parameter_count(d_model, bias=True):
    """Number of parameters of multi-head attention with d_in = d_out = d_model (a Python int)."""
    layer = nn.MultiheadAttention(d_model, num_heads=1, bias=bias)
    return int(sum(p.numel() for p in layer.parameters()))
''',
    },
    {
        "name": 'count_math_pow_float',
        "cell": 'parameter_count',
        "clause": 'Return a Python int (not a tensor, float or NumPy integer).',
        "class": 'dtype',
        "source": r'''
def mha_parameter_count(d_model, bias=True):
    """Number of parameters of multi-head attention with d_in = d_out = d_model (a Python int)."""
    d = int(d_model)
    return 4 * math.pow(d, 2) + (4 * d if bias else 0)
''',
    },
    {
        "name": 'torch_state_transposes_projections',
        "cell": 'torch_mha',
        "clause": "in_proj_weight stacks [W_q; W_k; W_v] row-wise in nn.Linear's (out, in) layout, so no transpose is needed.",
        "class": 'input-layout',
        "source": r'''
def from_torch_mha_state(state):
    """nn.MultiheadAttention state_dict -> state_dict for our MultiHeadAttention."""
    w = state["in_proj_weight"]
    d = w.shape[1]
    out = {}
    for i, role in enumerate(("W_query", "W_key", "W_value")):
        out[f"{role}.weight"] = w[i * d : (i + 1) * d].T
        if "in_proj_bias" in state:
            out[f"{role}.bias"] = state["in_proj_bias"][i * d : (i + 1) * d]
    out["out_proj.weight"] = state["out_proj.weight"]
    if "out_proj.bias" in state:
        out["out_proj.bias"] = state["out_proj.bias"]
    else:
        out["out_proj.bias"] = torch.zeros(d, dtype=w.dtype, device=w.device)
    return out


def keep_mask_from_torch(attn_mask=None, key_padding_mask=None):
    """nn.MultiheadAttention bool masks (True = blocked) -> our keep-mask (True = may attend)."""
    if attn_mask is None and key_padding_mask is None:
        return None
    if key_padding_mask is None:
        return ~attn_mask
    pad = ~key_padding_mask[:, None, None, :]
    if attn_mask is None:
        return pad
    return pad & ~attn_mask
''',
    },
    {
        "name": 'torch_zero_out_bias_float32',
        "cell": 'torch_mha',
        "clause": 'A missing out_proj.bias becomes a zero (d,) tensor with the SAME device and dtype as the input state.',
        "class": 'dtype',
        "source": r'''
def from_torch_mha_state(state):
    """nn.MultiheadAttention state_dict -> state_dict for our MultiHeadAttention."""
    w = state["in_proj_weight"]
    d = w.shape[1]
    out = {}
    for i, role in enumerate(("W_query", "W_key", "W_value")):
        out[f"{role}.weight"] = w[i * d : (i + 1) * d]
        if "in_proj_bias" in state:
            out[f"{role}.bias"] = state["in_proj_bias"][i * d : (i + 1) * d]
    out["out_proj.weight"] = state["out_proj.weight"]
    if "out_proj.bias" in state:
        out["out_proj.bias"] = state["out_proj.bias"]
    else:
        out["out_proj.bias"] = torch.zeros(d, device=w.device)
    return out


def keep_mask_from_torch(attn_mask=None, key_padding_mask=None):
    """nn.MultiheadAttention bool masks (True = blocked) -> our keep-mask (True = may attend)."""
    if attn_mask is None and key_padding_mask is None:
        return None
    if key_padding_mask is None:
        return ~attn_mask
    pad = ~key_padding_mask[:, None, None, :]
    if attn_mask is None:
        return pad
    return pad & ~attn_mask
''',
    },
    {
        "name": 'torch_zero_out_bias_cpu',
        "cell": 'torch_mha',
        "clause": 'A missing out_proj.bias becomes a zero (d,) tensor on the same device and dtype as the input.',
        "class": 'device',
        "source": r'''
def from_torch_mha_state(state):
    """nn.MultiheadAttention state_dict -> state_dict for our MultiHeadAttention."""
    w = state["in_proj_weight"]
    d = w.shape[1]
    out = {}
    for i, role in enumerate(("W_query", "W_key", "W_value")):
        out[f"{role}.weight"] = w[i * d : (i + 1) * d]
        if "in_proj_bias" in state:
            out[f"{role}.bias"] = state["in_proj_bias"][i * d : (i + 1) * d]
    out["out_proj.weight"] = state["out_proj.weight"]
    if "out_proj.bias" in state:
        out["out_proj.bias"] = state["out_proj.bias"]
    else:
        out["out_proj.bias"] = torch.zeros(d, dtype=w.dtype)
    return out


def keep_mask_from_torch(attn_mask=None, key_padding_mask=None):
    """nn.MultiheadAttention bool masks (True = blocked) -> our keep-mask (True = may attend)."""
    if attn_mask is None and key_padding_mask is None:
        return None
    if key_padding_mask is None:
        return ~attn_mask
    pad = ~key_padding_mask[:, None, None, :]
    if attn_mask is None:
        return pad
    return pad & ~attn_mask
''',
    },
    {
        "name": 'torch_invents_zero_qkv_bias',
        "cell": 'torch_mha',
        "clause": 'If in_proj_bias is absent, do NOT create W_*.bias keys (the target module has qkv_bias=False).',
        "class": 'logic',
        "source": r'''
def from_torch_mha_state(state):
    """nn.MultiheadAttention state_dict -> state_dict for our MultiHeadAttention."""
    w = state["in_proj_weight"]
    d = w.shape[1]
    out = {}
    for i, role in enumerate(("W_query", "W_key", "W_value")):
        out[f"{role}.weight"] = w[i * d : (i + 1) * d]
        b = state.get("in_proj_bias", torch.zeros(3 * d, dtype=w.dtype, device=w.device))
        out[f"{role}.bias"] = b[i * d : (i + 1) * d]
    out["out_proj.weight"] = state["out_proj.weight"]
    if "out_proj.bias" in state:
        out["out_proj.bias"] = state["out_proj.bias"]
    else:
        out["out_proj.bias"] = torch.zeros(d, dtype=w.dtype, device=w.device)
    return out


def keep_mask_from_torch(attn_mask=None, key_padding_mask=None):
    """nn.MultiheadAttention bool masks (True = blocked) -> our keep-mask (True = may attend)."""
    if attn_mask is None and key_padding_mask is None:
        return None
    if key_padding_mask is None:
        return ~attn_mask
    pad = ~key_padding_mask[:, None, None, :]
    if attn_mask is None:
        return pad
    return pad & ~attn_mask
''',
    },
    {
        "name": 'keep_pad_missing_head_axis',
        "cell": 'torch_mha',
        "clause": 'key_padding_mask alone -> keep-mask of shape (B, 1, 1, S) (batch first, then head and query axes).',
        "class": 'batch-axis',
        "source": r'''
def from_torch_mha_state(state):
    """nn.MultiheadAttention state_dict -> state_dict for our MultiHeadAttention."""
    w = state["in_proj_weight"]
    d = w.shape[1]
    out = {}
    for i, role in enumerate(("W_query", "W_key", "W_value")):
        out[f"{role}.weight"] = w[i * d : (i + 1) * d]
        if "in_proj_bias" in state:
            out[f"{role}.bias"] = state["in_proj_bias"][i * d : (i + 1) * d]
    out["out_proj.weight"] = state["out_proj.weight"]
    if "out_proj.bias" in state:
        out["out_proj.bias"] = state["out_proj.bias"]
    else:
        out["out_proj.bias"] = torch.zeros(d, dtype=w.dtype, device=w.device)
    return out


def keep_mask_from_torch(attn_mask=None, key_padding_mask=None):
    """nn.MultiheadAttention bool masks (True = blocked) -> our keep-mask (True = may attend)."""
    if attn_mask is None and key_padding_mask is None:
        return None
    if key_padding_mask is None:
        return ~attn_mask
    pad = ~key_padding_mask[:, None, :]
    if attn_mask is None:
        return pad
    return pad & ~attn_mask
''',
    },
    {
        "name": 'keep_or_instead_of_and',
        "cell": 'torch_mha',
        "clause": 'With both masks the keep-mask is (B, 1, T, S) and a key is visible only if BOTH conditions allow it (AND).',
        "class": 'logic',
        "source": r'''
def from_torch_mha_state(state):
    """nn.MultiheadAttention state_dict -> state_dict for our MultiHeadAttention."""
    w = state["in_proj_weight"]
    d = w.shape[1]
    out = {}
    for i, role in enumerate(("W_query", "W_key", "W_value")):
        out[f"{role}.weight"] = w[i * d : (i + 1) * d]
        if "in_proj_bias" in state:
            out[f"{role}.bias"] = state["in_proj_bias"][i * d : (i + 1) * d]
    out["out_proj.weight"] = state["out_proj.weight"]
    if "out_proj.bias" in state:
        out["out_proj.bias"] = state["out_proj.bias"]
    else:
        out["out_proj.bias"] = torch.zeros(d, dtype=w.dtype, device=w.device)
    return out


def keep_mask_from_torch(attn_mask=None, key_padding_mask=None):
    """nn.MultiheadAttention bool masks (True = blocked) -> our keep-mask (True = may attend)."""
    if attn_mask is None and key_padding_mask is None:
        return None
    if key_padding_mask is None:
        return ~attn_mask
    pad = ~key_padding_mask[:, None, None, :]
    if attn_mask is None:
        return pad
    return pad | ~attn_mask
''',
    },
    {
        "name": 'keep_logical_not_inplace',
        "cell": 'torch_mha',
        "clause": 'Do not modify input tensors in place.',
        "class": 'in-place',
        "source": r'''
def from_torch_mha_state(state):
    """nn.MultiheadAttention state_dict -> state_dict for our MultiHeadAttention."""
    w = state["in_proj_weight"]
    d = w.shape[1]
    out = {}
    for i, role in enumerate(("W_query", "W_key", "W_value")):
        out[f"{role}.weight"] = w[i * d : (i + 1) * d]
        if "in_proj_bias" in state:
            out[f"{role}.bias"] = state["in_proj_bias"][i * d : (i + 1) * d]
    out["out_proj.weight"] = state["out_proj.weight"]
    if "out_proj.bias" in state:
        out["out_proj.bias"] = state["out_proj.bias"]
    else:
        out["out_proj.bias"] = torch.zeros(d, dtype=w.dtype, device=w.device)
    return out


def keep_mask_from_torch(attn_mask=None, key_padding_mask=None):
    """nn.MultiheadAttention bool masks (True = blocked) -> our keep-mask (True = may attend)."""
    if attn_mask is None and key_padding_mask is None:
        return None
    if key_padding_mask is None:
        return attn_mask.logical_not_()
    pad = ~key_padding_mask[:, None, None, :]
    if attn_mask is None:
        return pad
    return pad & ~attn_mask
''',
    },
]

CORRECT = [
    {
        "name": 'split_chunk_stack_merge_unbind_cat',
        "cell": 'split_heads',
        "why": 'split_heads stacks the h contiguous feature chunks along a new head axis; merge_heads concatenates the heads back with unbind + cat. Pure data movement, works for any dtype, non-contiguous inputs and T = 0.',
        "source": r'''
def split_heads(x, num_heads):
    """(B, T, d) -> (B, h, T, d_head): head i gets features i*d_head ... (i+1)*d_head - 1."""
    return torch.stack(x.chunk(num_heads, dim=-1), dim=1)


def merge_heads(x):
    """(B, h, T, d_head) -> (B, T, h * d_head); the inverse of split_heads."""
    return torch.cat(x.unbind(dim=1), dim=-1)
''',
    },
    {
        "name": 'wrapper_slices_into_new_empty',
        "cell": 'wrapper',
        "why": 'Same ModuleList of CausalAttention heads, called in order 0..h-1; results are written into slices of x.new_empty (input dtype/device) instead of torch.cat.',
        "source": r'''
class MultiHeadAttentionWrapper(nn.Module):
    """num_heads CausalAttention heads side by side. forward: (B, T, d_in) -> (B, T, h * d_out)."""

    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__()
        self.heads = nn.ModuleList(
            [CausalAttention(d_in, d_out, context_length, dropout, qkv_bias) for _ in range(num_heads)]
        )

    def forward(self, x):
        outs = []
        for head in self.heads:
            outs.append(head(x))
        d_out = outs[0].shape[-1]
        result = outs[0].new_empty(*outs[0].shape[:-1], d_out * len(outs))
        for i, o in enumerate(outs):
            result[..., i * d_out : (i + 1) * d_out] = o
        return result
''',
    },
    {
        "name": 'mha_einsum_functional_dropout_training',
        "cell": 'multihead_attention',
        "why": 'Einsum for scores and context, F.dropout(..., self.dropout.p, self.training) consumes the RNG exactly like nn.Dropout, the causal mask comes from the non-persistent buffer only for self-attention, and masked_softmax handles blocked rows.',
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
        scores = torch.einsum("bhtd,bhsd->bhts", q, k) * (1.0 / math.sqrt(q.shape[-1]))
        keep = mask
        if self.causal and context is None:
            tri = self.mask[:T, :T]
            keep = tri if keep is None else torch.logical_and(keep, tri)
        weights = F.dropout(masked_softmax(scores, keep), self.dropout.p, self.training)
        ctx = torch.einsum("bhts,bhsd->bhtd", weights, v)
        return self.out_proj(merge_heads(ctx))
''',
    },
    {
        "name": 'count_sum_of_layers',
        "cell": 'parameter_count',
        "why": 'Adds the four d x d weight matrices and, with bias, the four d-vectors using integer arithmetic only.',
        "source": r'''
def mha_parameter_count(d_model, bias=True):
    """Number of parameters of multi-head attention with d_in = d_out = d_model (a Python int)."""
    d = int(d_model)
    per_projection = d * d + (d if bias else 0)
    return sum(per_projection for _ in ("query", "key", "value", "out"))
''',
    },
    {
        "name": 'torch_chunk_and_logical_not',
        "cell": 'torch_mha',
        "why": 'Splits in_proj_weight/in_proj_bias with chunk(3) (row blocks q, k, v), fills a missing out_proj.bias with zeros_like of a weight row (same dtype/device), and builds keep-masks with logical_not + unsqueeze; AND when both are given.',
        "source": r'''
def from_torch_mha_state(state):
    """nn.MultiheadAttention state_dict -> state_dict for our MultiHeadAttention."""
    roles = ("W_query", "W_key", "W_value")
    result = {f"{r}.weight": w for r, w in zip(roles, state["in_proj_weight"].chunk(3, dim=0))}
    if state.get("in_proj_bias") is not None:
        result.update({f"{r}.bias": b for r, b in zip(roles, state["in_proj_bias"].chunk(3))})
    result["out_proj.weight"] = state["out_proj.weight"]
    bias = state.get("out_proj.bias")
    result["out_proj.bias"] = torch.zeros_like(state["out_proj.weight"][0]) if bias is None else bias
    return result


def keep_mask_from_torch(attn_mask=None, key_padding_mask=None):
    """nn.MultiheadAttention bool masks (True = blocked) -> our keep-mask (True = may attend)."""
    keep = None
    if attn_mask is not None:
        keep = torch.logical_not(attn_mask)
    if key_padding_mask is not None:
        pad = torch.logical_not(key_padding_mask).unsqueeze(1).unsqueeze(2)
        keep = pad if keep is None else torch.logical_and(pad, keep)
    return keep
''',
    },
]

if __name__ == "__main__":
    import ast

    for entry in MISTAKES + CORRECT:
        ast.parse(entry["source"])
    assert len({e["name"] for e in MISTAKES + CORRECT}) == len(MISTAKES + CORRECT)
    print(f"multihead: {len(MISTAKES)} mistakes, {len(CORRECT)} correct variants")
