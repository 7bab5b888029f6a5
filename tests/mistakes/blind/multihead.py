"""Blind wrong solutions for multihead, written from the release notebook and the book only."""
ASSIGNMENT = "multihead"

_SPLIT_OK = '''def split_heads(x, num_heads):
    """(B, T, d) -> (B, h, T, d_head): head i gets features i*d_head ... (i+1)*d_head - 1."""
    B, T, d = x.shape
    return x.view(B, T, num_heads, d // num_heads).transpose(1, 2)
'''

_MERGE_OK = '''def merge_heads(x):
    """(B, h, T, d_head) -> (B, T, h * d_head); the inverse of split_heads."""
    B, h, T, d_head = x.shape
    return x.transpose(1, 2).contiguous().view(B, T, h * d_head)
'''

_MHA_HEAD = '''class MultiHeadAttention(nn.Module):
    """Multi-head attention with one projection per role, split into heads.

    forward(x (B, T, d_in), context (B, S, d_in) or None, mask bool keep-mask or None)
    -> (B, T, d_out).
    """
'''

_MHA_INIT = _MHA_HEAD + '''
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
'''

_WRAP_HEAD = '''class MultiHeadAttentionWrapper(nn.Module):
    """num_heads CausalAttention heads side by side. forward: (B, T, d_in) -> (B, T, h * d_out)."""
'''

_KEEP_OK = '''

def keep_mask_from_torch(attn_mask=None, key_padding_mask=None):
    """nn.MultiheadAttention bool masks (True = blocked) -> our keep-mask (True = may attend)."""
    keep = None
    if attn_mask is not None:
        keep = ~attn_mask                                       # (T, S)
    if key_padding_mask is not None:
        pad_keep = ~key_padding_mask[:, None, None, :]          # (B, 1, 1, S)
        keep = pad_keep if keep is None else keep & pad_keep    # (B, 1, T, S)
    return keep
'''

_FROM_OK = '''def from_torch_mha_state(state):
    """nn.MultiheadAttention state_dict -> state_dict for our MultiHeadAttention."""
    in_w = state["in_proj_weight"]
    d = in_w.shape[1]
    w_q, w_k, w_v = in_w.split(d, dim=0)
    out = {"W_query.weight": w_q, "W_key.weight": w_k, "W_value.weight": w_v}
    if "in_proj_bias" in state:
        b_q, b_k, b_v = state["in_proj_bias"].split(d)
        out.update({"W_query.bias": b_q, "W_key.bias": b_k, "W_value.bias": b_v})
    out["out_proj.weight"] = state["out_proj.weight"]
    if "out_proj.bias" in state:
        out["out_proj.bias"] = state["out_proj.bias"]
    else:
        out["out_proj.bias"] = torch.zeros(d, dtype=in_w.dtype, device=in_w.device)
    return out
'''

MISTAKES = [
    # ------------------------------------------------------------------ split_heads / merge_heads
    {
        "name": "merge_heads_view_minus_one_fails_on_empty",
        "cell": "split_heads",
        "clause": "merge_heads must work for every shape, including a length-0 sequence (T = 0)",
        "class": "edge-values",
        "source": _SPLIT_OK + '''

def merge_heads(x):
    """(B, h, T, d_head) -> (B, T, h * d_head); the inverse of split_heads."""
    B, h, T, d_head = x.shape
    return x.transpose(1, 2).contiguous().view(B, T, -1)
''',
    },
    {
        "name": "split_heads_view_b_h_t_directly",
        "cell": "split_heads",
        "clause": "split the LAST axis into heads: view(B, T, h, d_head) then transpose, not view(B, h, T, d_head)",
        "class": "input-layout",
        "source": '''def split_heads(x, num_heads):
    """(B, T, d) -> (B, h, T, d_head): head i gets features i*d_head ... (i+1)*d_head - 1."""
    B, T, d = x.shape
    return x.reshape(B, num_heads, T, d // num_heads)


def merge_heads(x):
    """(B, h, T, d_head) -> (B, T, h * d_head); the inverse of split_heads."""
    B, h, T, d_head = x.shape
    return x.transpose(1, 2).contiguous().view(B, T, h * d_head)
''',
    },
    {
        "name": "merge_heads_buffer_on_default_device",
        "cell": "split_heads",
        "clause": "new tensors are created on the input's device",
        "class": "device",
        "source": _SPLIT_OK + '''

def merge_heads(x):
    """(B, h, T, d_head) -> (B, T, h * d_head); the inverse of split_heads."""
    B, h, T, d_head = x.shape
    out = torch.empty(B, T, h * d_head, dtype=x.dtype)
    for i in range(h):                                  # head i -> feature block i
        out[:, :, i * d_head : (i + 1) * d_head] = x[:, i]
    return out
''',
    },
    # ------------------------------------------------------------------ wrapper
    {
        "name": "wrapper_qkv_bias_not_forwarded",
        "cell": "wrapper",
        "clause": "each head is CausalAttention(d_in, d_out, context_length, dropout, qkv_bias)",
        "class": "defaults",
        "source": _WRAP_HEAD + '''
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
        "name": "wrapper_dropout_not_forwarded",
        "cell": "wrapper",
        "clause": "the heads get the dropout rate, so train() output matches the reference draw for draw",
        "class": "randomness",
        "source": _WRAP_HEAD + '''
    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__()
        self.heads = nn.ModuleList(
            [CausalAttention(d_in, d_out, context_length, 0.0, qkv_bias) for _ in range(num_heads)]
        )
        self.dropout = nn.Dropout(dropout)

    def forward(self, x):
        return self.dropout(torch.cat([head(x) for head in self.heads], dim=-1))
''',
    },
    # ------------------------------------------------------------------ multihead_attention
    {
        "name": "mha_causal_also_in_cross_attention",
        "cell": "multihead_attention",
        "clause": "the causal mask is combined only for self-attention (context is None), never for cross-attention",
        "class": "logic",
        "source": _MHA_INIT + '''
    def forward(self, x, context=None, mask=None):
        src = x if context is None else context
        q = split_heads(self.W_query(x), self.num_heads)          # (B, h, T, d_head)
        k = split_heads(self.W_key(src), self.num_heads)          # (B, h, S, d_head)
        v = split_heads(self.W_value(src), self.num_heads)
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.d_head)
        T, S = q.shape[-2], k.shape[-2]
        keep = mask
        if self.causal:
            causal = self.mask[:T, :S]
            keep = causal if keep is None else keep & causal
        weights = self.dropout(masked_softmax(scores, keep))
        return self.out_proj(merge_heads(weights @ v))
''',
    },
    {
        "name": "mha_own_softmax_fills_minus_1e9",
        "cell": "multihead_attention",
        "clause": "blocked scores use masked_softmax (finfo.min); a constant like -1e9 fails for scores above 1e12",
        "class": "edge-values",
        "source": _MHA_INIT + '''
    def forward(self, x, context=None, mask=None):
        src = x if context is None else context
        q = split_heads(self.W_query(x), self.num_heads)
        k = split_heads(self.W_key(src), self.num_heads)
        v = split_heads(self.W_value(src), self.num_heads)
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.d_head)
        keep = mask
        if self.causal and context is None:
            T = x.shape[1]
            keep = self.mask[:T, :T] if keep is None else keep & self.mask[:T, :T]
        if keep is not None:
            scores = scores.masked_fill(~keep, -1e9)
            weights = torch.softmax(scores, dim=-1).masked_fill(~keep, 0.0)
        else:
            weights = torch.softmax(scores, dim=-1)
        weights = self.dropout(weights)
        return self.out_proj(merge_heads(weights @ v))
''',
    },
    {
        "name": "mha_dropout_on_context_vectors",
        "cell": "multihead_attention",
        "clause": "dropout is applied once, to the attention weights right after the softmax",
        "class": "randomness",
        "source": _MHA_INIT + '''
    def forward(self, x, context=None, mask=None):
        src = x if context is None else context
        q = split_heads(self.W_query(x), self.num_heads)
        k = split_heads(self.W_key(src), self.num_heads)
        v = split_heads(self.W_value(src), self.num_heads)
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.d_head)
        keep = mask
        if self.causal and context is None:
            T = x.shape[1]
            keep = self.mask[:T, :T] if keep is None else keep & self.mask[:T, :T]
        weights = masked_softmax(scores, keep)
        context_vectors = self.dropout(weights @ v)              # (B, h, T, d_head)
        return self.out_proj(merge_heads(context_vectors))
''',
    },
    {
        "name": "mha_causal_mask_made_on_cpu",
        "cell": "multihead_attention",
        "clause": "new tensors (the causal mask) are created on the input's device",
        "class": "device",
        "source": _MHA_HEAD + '''
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
        q = split_heads(self.W_query(x), self.num_heads)
        k = split_heads(self.W_key(src), self.num_heads)
        v = split_heads(self.W_value(src), self.num_heads)
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.d_head)
        keep = mask
        if self.causal and context is None:
            T = x.shape[1]
            causal = causal_mask(T)                    # fresh (T, T) keep-mask for this length
            keep = causal if keep is None else keep & causal
        weights = self.dropout(masked_softmax(scores, keep))
        return self.out_proj(merge_heads(weights @ v))
''',
    },
    {
        "name": "mha_additive_float32_causal_mask",
        "cell": "multihead_attention",
        "clause": "no tensors fixed to float32: bfloat16 / float64 modules must keep their dtype end to end",
        "class": "dtype",
        "source": _MHA_INIT + '''
    def forward(self, x, context=None, mask=None):
        src = x if context is None else context
        q = split_heads(self.W_query(x), self.num_heads)
        k = split_heads(self.W_key(src), self.num_heads)
        v = split_heads(self.W_value(src), self.num_heads)
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.d_head)
        if self.causal and context is None:
            T = x.shape[1]
            future = torch.zeros(T, T, device=x.device).masked_fill(~self.mask[:T, :T], float("-inf"))
            scores = scores + future                             # additive causal mask
        weights = self.dropout(masked_softmax(scores, mask))
        return self.out_proj(merge_heads(weights @ v))
''',
    },
    {
        "name": "mha_mask_buffer_persistent",
        "cell": "multihead_attention",
        "clause": "the causal-mask buffer is registered with persistent=False (no extra state_dict key)",
        "class": "defaults",
        "source": _MHA_HEAD + '''
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
        q = split_heads(self.W_query(x), self.num_heads)
        k = split_heads(self.W_key(src), self.num_heads)
        v = split_heads(self.W_value(src), self.num_heads)
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.d_head)
        keep = mask
        if self.causal and context is None:
            T = x.shape[1]
            keep = self.mask[:T, :T] if keep is None else keep & self.mask[:T, :T]
        weights = self.dropout(masked_softmax(scores, keep))
        return self.out_proj(merge_heads(weights @ v))
''',
    },
    {
        "name": "mha_inline_view_minus_one_empty_sequence",
        "cell": "multihead_attention",
        "clause": "a length-0 query sequence (T = 0) returns an empty (B, 0, d_out) output",
        "class": "edge-values",
        "source": _MHA_INIT + '''
    def forward(self, x, context=None, mask=None):
        src = x if context is None else context
        B, T, _ = x.shape
        S = src.shape[1]
        q = self.W_query(x).view(B, T, self.num_heads, -1).transpose(1, 2)
        k = self.W_key(src).view(B, S, self.num_heads, -1).transpose(1, 2)
        v = self.W_value(src).view(B, S, self.num_heads, -1).transpose(1, 2)
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.d_head)
        keep = mask
        if self.causal and context is None:
            keep = self.mask[:T, :T] if keep is None else keep & self.mask[:T, :T]
        weights = self.dropout(masked_softmax(scores, keep))
        out = (weights @ v).transpose(1, 2).reshape(B, T, -1)
        return self.out_proj(out)
''',
    },
    {
        "name": "mha_unsqueezes_2d_mask_in_place",
        "cell": "multihead_attention",
        "clause": "the caller's mask must not be modified in place (not even its shape)",
        "class": "in-place",
        "source": _MHA_INIT + '''
    def forward(self, x, context=None, mask=None):
        src = x if context is None else context
        q = split_heads(self.W_query(x), self.num_heads)
        k = split_heads(self.W_key(src), self.num_heads)
        v = split_heads(self.W_value(src), self.num_heads)
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.d_head)
        if mask is not None:
            while mask.dim() < 4:
                mask.unsqueeze_(0)                         # (T, S) -> (1, 1, T, S)
        keep = mask
        if self.causal and context is None:
            T = x.shape[1]
            keep = self.mask[:T, :T] if keep is None else keep & self.mask[:T, :T]
        weights = self.dropout(masked_softmax(scores, keep))
        return self.out_proj(merge_heads(weights @ v))
''',
    },
    # ------------------------------------------------------------------ parameter_count
    {
        "name": "param_count_float_arithmetic",
        "cell": "parameter_count",
        "clause": "exact Python int even for d_model beyond int32 (no float rounding)",
        "class": "integer-arithmetic",
        "source": '''def mha_parameter_count(d_model, bias=True):
    """Number of parameters of multi-head attention with d_in = d_out = d_model (a Python int)."""
    weights = 4 * d_model ** 2
    biases = 4.0 * d_model if bias else 0.0
    return int(weights + biases)
''',
    },
    {
        "name": "param_count_int64_tensor_overflow",
        "cell": "parameter_count",
        "clause": "exact Python int even for d_model beyond int32 (int64 tensors overflow for 4 * d^2 > 2^63)",
        "class": "integer-arithmetic",
        "source": '''def mha_parameter_count(d_model, bias=True):
    """Number of parameters of multi-head attention with d_in = d_out = d_model (a Python int)."""
    shape = torch.tensor([d_model, d_model])
    per_projection = shape.prod()                       # d x d weights, whatever the head count
    total = 4 * per_projection
    if bias:
        total = total + 4 * d_model
    return int(total)
''',
    },
    # ------------------------------------------------------------------ torch_mha
    {
        "name": "torch_state_no_out_bias_when_bias_false",
        "cell": "torch_mha",
        "clause": "without out_proj.bias in the torch state, out_proj.bias is a zero (d,) tensor",
        "class": "edge-values",
        "source": '''def from_torch_mha_state(state):
    """nn.MultiheadAttention state_dict -> state_dict for our MultiHeadAttention."""
    in_w = state["in_proj_weight"]
    d = in_w.shape[1]
    w_q, w_k, w_v = in_w.split(d, dim=0)
    out = {"W_query.weight": w_q, "W_key.weight": w_k, "W_value.weight": w_v}
    if "in_proj_bias" in state:
        b_q, b_k, b_v = state["in_proj_bias"].split(d)
        out.update({"W_query.bias": b_q, "W_key.bias": b_k, "W_value.bias": b_v})
    for key in ("out_proj.weight", "out_proj.bias"):
        if key in state:
            out[key] = state[key]
    return out
''' + _KEEP_OK,
    },
    {
        "name": "torch_state_zero_bias_float32_cpu",
        "cell": "torch_mha",
        "clause": "the zero out_proj.bias has the input's dtype and device",
        "class": "dtype",
        "source": '''def from_torch_mha_state(state):
    """nn.MultiheadAttention state_dict -> state_dict for our MultiHeadAttention."""
    in_w = state["in_proj_weight"]
    d = in_w.shape[1]
    w_q, w_k, w_v = in_w.split(d, dim=0)
    out = {"W_query.weight": w_q, "W_key.weight": w_k, "W_value.weight": w_v}
    if "in_proj_bias" in state:
        b_q, b_k, b_v = state["in_proj_bias"].split(d)
        out.update({"W_query.bias": b_q, "W_key.bias": b_k, "W_value.bias": b_v})
    out["out_proj.weight"] = state["out_proj.weight"]
    out["out_proj.bias"] = state["out_proj.bias"] if "out_proj.bias" in state else torch.zeros(d)
    return out
''' + _KEEP_OK,
    },
    {
        "name": "torch_state_zero_qkv_biases_invented",
        "cell": "torch_mha",
        "clause": "without in_proj_bias no W_*.bias keys are created (module built with qkv_bias=False)",
        "class": "logic",
        "source": '''def from_torch_mha_state(state):
    """nn.MultiheadAttention state_dict -> state_dict for our MultiHeadAttention."""
    in_w = state["in_proj_weight"]
    d = in_w.shape[1]
    in_b = state.get("in_proj_bias")
    if in_b is None:
        in_b = torch.zeros(3 * d, dtype=in_w.dtype, device=in_w.device)
    out = {}
    for i, name in enumerate(("W_query", "W_key", "W_value")):
        out[f"{name}.weight"] = in_w[i * d : (i + 1) * d]
        out[f"{name}.bias"] = in_b[i * d : (i + 1) * d]
    out["out_proj.weight"] = state["out_proj.weight"]
    if "out_proj.bias" in state:
        out["out_proj.bias"] = state["out_proj.bias"]
    else:
        out["out_proj.bias"] = torch.zeros(d, dtype=in_w.dtype, device=in_w.device)
    return out
''' + _KEEP_OK,
    },
    {
        "name": "keep_mask_padding_only_stays_2d",
        "cell": "torch_mha",
        "clause": "key_padding_mask alone -> keep-mask of shape (B, 1, 1, S), not (B, S)",
        "class": "batch-axis",
        "source": _FROM_OK + '''

def keep_mask_from_torch(attn_mask=None, key_padding_mask=None):
    """nn.MultiheadAttention bool masks (True = blocked) -> our keep-mask (True = may attend)."""
    if attn_mask is None and key_padding_mask is None:
        return None
    if key_padding_mask is None:
        return ~attn_mask                                     # (T, S)
    if attn_mask is None:
        return ~key_padding_mask                              # (B, S)
    return ~attn_mask & ~key_padding_mask[:, None, None, :]   # (B, 1, T, S)
''',
    },
    {
        "name": "keep_mask_attn_only_made_4d",
        "cell": "torch_mha",
        "clause": "attn_mask alone -> keep-mask of shape (T, S)",
        "class": "input-layout",
        "source": _FROM_OK + '''

def keep_mask_from_torch(attn_mask=None, key_padding_mask=None):
    """nn.MultiheadAttention bool masks (True = blocked) -> our keep-mask (True = may attend)."""
    if attn_mask is None and key_padding_mask is None:
        return None
    keep = None
    if attn_mask is not None:
        keep = ~attn_mask[None, None, :, :]                    # (1, 1, T, S) like the scores
    if key_padding_mask is not None:
        pad_keep = ~key_padding_mask[:, None, None, :]         # (B, 1, 1, S)
        keep = pad_keep if keep is None else keep & pad_keep
    return keep
''',
    },
]

CORRECT = [
    {
        "name": "split_merge_unflatten_flatten",
        "cell": "split_heads",
        "source": '''def split_heads(x, num_heads):
    """(B, T, d) -> (B, h, T, d_head): head i gets features i*d_head ... (i+1)*d_head - 1."""
    d_head = x.shape[-1] // num_heads
    return x.unflatten(-1, (num_heads, d_head)).permute(0, 2, 1, 3)


def merge_heads(x):
    """(B, h, T, d_head) -> (B, T, h * d_head); the inverse of split_heads."""
    return x.permute(0, 2, 1, 3).flatten(2)
''',
    },
    {
        "name": "wrapper_loop_append",
        "cell": "wrapper",
        "source": _WRAP_HEAD + '''
    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__()
        self.heads = nn.ModuleList()
        for _ in range(num_heads):
            self.heads.append(
                CausalAttention(d_in, d_out, context_length, dropout, qkv_bias=qkv_bias)
            )

    def forward(self, x):
        outputs = []
        for i in range(len(self.heads)):
            outputs.append(self.heads[i](x))
        return torch.cat(outputs, dim=2)
''',
    },
    {
        "name": "mha_einsum_expanded_mask",
        "cell": "multihead_attention",
        "source": _MHA_HEAD + '''
    def __init__(
        self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False, causal=True
    ):
        super().__init__()
        self.num_heads = num_heads
        self.causal = causal
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)
        self.dropout = nn.Dropout(dropout)
        if causal:
            self.register_buffer("mask", causal_mask(context_length), persistent=False)

    def forward(self, x, context=None, mask=None):
        self_attention = context is None
        src = x if self_attention else context
        q = split_heads(self.W_query(x), self.num_heads)
        k = split_heads(self.W_key(src), self.num_heads)
        v = split_heads(self.W_value(src), self.num_heads)
        d_head = q.shape[-1]
        scores = torch.einsum("bhtd,bhsd->bhts", q, k) * (1.0 / math.sqrt(d_head))
        keep = None if mask is None else mask.expand(scores.shape)
        if self.causal and self_attention:
            T = q.shape[-2]
            causal = self.mask[:T, :T].expand(scores.shape)
            keep = causal if keep is None else torch.logical_and(keep, causal)
        weights = self.dropout(masked_softmax(scores, keep))
        return self.out_proj(merge_heads(torch.einsum("bhts,bhsd->bhtd", weights, v)))
''',
    },
    {
        "name": "param_count_closed_form",
        "cell": "parameter_count",
        "source": '''def mha_parameter_count(d_model, bias=True):
    """Number of parameters of multi-head attention with d_in = d_out = d_model (a Python int)."""
    d = int(d_model)
    return 4 * d * (d + (1 if bias else 0))
''',
    },
    {
        "name": "torch_mha_chunk_and_demorgan",
        "cell": "torch_mha",
        "source": '''def from_torch_mha_state(state):
    """nn.MultiheadAttention state_dict -> state_dict for our MultiHeadAttention."""
    names = ("W_query", "W_key", "W_value")
    out = {f"{n}.weight": w for n, w in zip(names, state["in_proj_weight"].chunk(3, dim=0))}
    if state.get("in_proj_bias") is not None:
        out.update({f"{n}.bias": b for n, b in zip(names, state["in_proj_bias"].chunk(3))})
    out_w = state["out_proj.weight"]
    out["out_proj.weight"] = out_w
    bias = state.get("out_proj.bias")
    out["out_proj.bias"] = out_w.new_zeros(out_w.shape[0]) if bias is None else bias
    return out


def keep_mask_from_torch(attn_mask=None, key_padding_mask=None):
    """nn.MultiheadAttention bool masks (True = blocked) -> our keep-mask (True = may attend)."""
    if attn_mask is None and key_padding_mask is None:
        return None
    if key_padding_mask is None:
        return attn_mask.logical_not()
    pad = key_padding_mask[:, None, None, :]
    if attn_mask is None:
        return pad.logical_not()
    return torch.logical_not(attn_mask | pad)              # blocked by either -> blocked
''',
    },
]
