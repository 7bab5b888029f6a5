"""Plausible student mistakes for assignment ``normalization``.

Graded by tests/grader/test_mistakes.py.
"""

ASSIGNMENT = "normalization"

_LN_INIT = '''class LayerNorm(nn.Module):
    """Layer normalization over the trailing dims given by normalized_shape (as nn.LayerNorm).

    x: (..., *normalized_shape) -> same shape, dtype and device.
    Parameters (elementwise_affine=True): weight (ones), bias (zeros), shape normalized_shape.
    """

    def __init__(self, normalized_shape, eps=1e-5, elementwise_affine=True):
        super().__init__()
        if isinstance(normalized_shape, int):
            normalized_shape = (normalized_shape,)
        self.normalized_shape = tuple(normalized_shape)
        self.eps = eps
        if elementwise_affine:
            self.weight = nn.Parameter(torch.ones(self.normalized_shape))
            self.bias = nn.Parameter(torch.zeros(self.normalized_shape))
        else:
            self.weight = None
            self.bias = None

    def forward(self, x):
'''

_RMS_INIT = '''class RMSNorm(nn.Module):
    """Root-mean-square normalization over the trailing dims (as nn.RMSNorm): no mean, no bias."""

    def __init__(self, normalized_shape, eps=None, elementwise_affine=True):
        super().__init__()
        if isinstance(normalized_shape, int):
            normalized_shape = (normalized_shape,)
        self.normalized_shape = tuple(normalized_shape)
        self.eps = eps
        if elementwise_affine:
            self.weight = nn.Parameter(torch.ones(self.normalized_shape))
        else:
            self.weight = None

    def forward(self, x):
'''

_FFN = '''class FeedForward(nn.Module):
    """Position-wise FFN: linear2(dropout(gelu(linear1(x)))), x (..., d_model) -> (..., d_model)."""

    def __init__(self, d_model, d_ff, dropout=0.0):
        super().__init__()
        self.linear1 = nn.Linear(d_model, d_ff)
        self.activation = {activation}
        self.dropout = nn.Dropout(dropout)
        self.linear2 = nn.Linear(d_ff, d_model)

    def forward(self, x):
        {forward}
'''

_BLOCK_INIT = '''class TransformerBlock(nn.Module):
    """Self-attention and FFN sublayers with residual connections and LayerNorm."""

    def __init__(self, d_model, num_heads, d_ff, dropout=0.0, norm_first=True, eps=1e-5):
        super().__init__()
        self.norm_first = norm_first
        self.self_attn = MultiHeadAttention(d_model, num_heads, dropout)
        self.norm1 = LayerNorm(d_model, eps=eps)
        self.norm2 = LayerNorm(d_model, eps=eps)
        self.ffn = FeedForward(d_model, d_ff, dropout)
        self.dropout1 = nn.Dropout(dropout)
        self.dropout2 = nn.Dropout(dropout)

    def forward(self, x, mask=None):
'''

MISTAKES = [
    # ------------------------------------------------------------------ LayerNorm
    {
        "name": "ln_unbiased_variance",
        "kind": "logic",
        "cell": "layer_norm",
        "source": _LN_INIT
        + """        dims = tuple(range(-len(self.normalized_shape), 0))
        h = x.to(torch.promote_types(x.dtype, torch.float32))
        mean = h.mean(dim=dims, keepdim=True)
        var = h.var(dim=dims, keepdim=True)
        y = (h - mean) / torch.sqrt(var + self.eps)
        if self.weight is not None:
            y = y * self.weight + self.bias
        return y.to(x.dtype)
""",
        "fails": ["test_layer_norm"],
        "says": "분산을 n - 1 로 나누었습니다",
    },
    {
        "name": "ln_one_pass_variance_cancels",
        "kind": "logic",
        "cell": "layer_norm",
        "source": _LN_INIT
        + """        dims = tuple(range(-len(self.normalized_shape), 0))
        h = x.to(torch.promote_types(x.dtype, torch.float32))
        mean = h.mean(dim=dims, keepdim=True)
        var = (h * h).mean(dim=dims, keepdim=True) - mean * mean
        y = (h - mean) / torch.sqrt(var + self.eps)
        if self.weight is not None:
            y = y * self.weight + self.bias
        return y.to(x.dtype)
""",
        "fails": ["test_layer_norm"],
        "says": "분산을 E[x²] - E[x]² 로 계산했습니다",
    },
    {
        "name": "ln_eps_outside_sqrt",
        "kind": "logic",
        "cell": "layer_norm",
        "source": _LN_INIT
        + """        dims = tuple(range(-len(self.normalized_shape), 0))
        h = x.to(torch.promote_types(x.dtype, torch.float32))
        mean = h.mean(dim=dims, keepdim=True)
        std = (h - mean).pow(2).mean(dim=dims, keepdim=True).sqrt()
        y = (h - mean) / (std + self.eps)
        if self.weight is not None:
            y = y * self.weight + self.bias
        return y.to(x.dtype)
""",
        "fails": ["test_layer_norm"],
        "says": "eps 를 표준편차에 더했습니다",
    },
    {
        "name": "ln_last_dim_only",
        "kind": "logic",
        "cell": "layer_norm",
        "source": _LN_INIT
        + """        h = x.to(torch.promote_types(x.dtype, torch.float32))
        mean = h.mean(dim=-1, keepdim=True)
        var = (h - mean).pow(2).mean(dim=-1, keepdim=True)
        y = (h - mean) / torch.sqrt(var + self.eps)
        if self.weight is not None:
            y = y * self.weight + self.bias
        return y.to(x.dtype)
""",
        "fails": ["test_layer_norm"],
        "says": "평균과 분산을 마지막 차원에서만 구했습니다",
    },
    {
        "name": "ln_no_upcast_half_overflow",
        "kind": "constant",
        "cell": "layer_norm",
        "source": _LN_INIT
        + """        dims = tuple(range(-len(self.normalized_shape), 0))
        mean = x.mean(dim=dims, keepdim=True)
        var = (x - mean).pow(2).mean(dim=dims, keepdim=True)
        y = (x - mean) / torch.sqrt(var + self.eps)
        if self.weight is not None:
            y = (y * self.weight + self.bias).to(x.dtype)
        return y
""",
        "fails": ["test_layer_norm"],
        "says": "float16/bfloat16 입력을 그 dtype 그대로 계산했습니다",
    },
    {
        "name": "ln_returns_float32_for_half",
        "kind": "logic",
        "cell": "layer_norm",
        "source": _LN_INIT
        + """        dims = tuple(range(-len(self.normalized_shape), 0))
        h = x.float()
        mean = h.mean(dim=dims, keepdim=True)
        var = (h - mean).pow(2).mean(dim=dims, keepdim=True)
        y = (h - mean) / torch.sqrt(var + self.eps)
        if self.weight is not None:
            y = y * self.weight + self.bias
        return y
""",
        "fails": ["test_layer_norm"],
        "says": "float64 입력을 float32 로 계산했습니다",
    },
    {
        "name": "ln_subtracts_mean_in_place",
        "kind": "in-place",
        "cell": "layer_norm",
        "source": _LN_INIT
        + """        dims = tuple(range(-len(self.normalized_shape), 0))
        h = x.to(torch.promote_types(x.dtype, torch.float32))
        h -= h.mean(dim=dims, keepdim=True)
        var = h.pow(2).mean(dim=dims, keepdim=True)
        y = h / torch.sqrt(var + self.eps)
        if self.weight is not None:
            y = y * self.weight + self.bias
        return y.to(x.dtype)
""",
        "fails": ["test_layer_norm"],
        "says": "in-place",
    },
    {
        "name": "ln_default_weight_on_cpu",
        "kind": "device",
        "cell": "layer_norm",
        "source": _LN_INIT
        + """        dims = tuple(range(-len(self.normalized_shape), 0))
        h = x.to(torch.promote_types(x.dtype, torch.float32))
        mean = h.mean(dim=dims, keepdim=True)
        var = (h - mean).pow(2).mean(dim=dims, keepdim=True)
        y = (h - mean) / torch.sqrt(var + self.eps)
        weight, bias = self.weight, self.bias
        if weight is None:
            weight = torch.ones(self.normalized_shape)
            bias = torch.zeros(self.normalized_shape)
        return (y * weight + bias).to(x.dtype)
""",
        "fails": ["test_layer_norm"],
        "says": "장치",
    },
    {
        "name": "ln_uses_f_layer_norm",
        "kind": "forbidden",
        "cell": "layer_norm",
        "source": _LN_INIT
        + """        h = x.to(torch.promote_types(x.dtype, torch.float32))
        y = F.layer_norm(h, self.normalized_shape, self.weight, self.bias, self.eps)
        return y.to(x.dtype)
""",
        "fails": ["test_layer_norm"],
        "says": "layer_norm",
    },
    # ------------------------------------------------------------------ RMSNorm
    {
        "name": "rms_subtracts_mean",
        "kind": "logic",
        "cell": "rms_norm",
        "source": _RMS_INIT
        + """        dims = tuple(range(-len(self.normalized_shape), 0))
        h = x.to(torch.promote_types(x.dtype, torch.float32))
        h = h - h.mean(dim=dims, keepdim=True)
        eps = torch.finfo(h.dtype).eps if self.eps is None else self.eps
        y = h * torch.rsqrt(h.pow(2).mean(dim=dims, keepdim=True) + eps)
        if self.weight is not None:
            y = y * self.weight
        return y.to(x.dtype)
""",
        "fails": ["test_rms_norm"],
        "says": "RMS 정규화에서 평균을 뺐습니다",
    },
    {
        "name": "rms_eps_none_of_input_dtype",
        "kind": "logic",
        "cell": "rms_norm",
        "source": _RMS_INIT
        + """        dims = tuple(range(-len(self.normalized_shape), 0))
        h = x.to(torch.promote_types(x.dtype, torch.float32))
        eps = torch.finfo(x.dtype).eps if self.eps is None else self.eps
        y = h * torch.rsqrt(h.pow(2).mean(dim=dims, keepdim=True) + eps)
        if self.weight is not None:
            y = y * self.weight
        return y.to(x.dtype)
""",
        "fails": ["test_rms_norm"],
        "says": "입력 dtype 의 torch.finfo(x.dtype).eps 를 썼습니다",
    },
    {
        "name": "rms_eps_none_fixed_1e_6",
        "kind": "constant",
        "cell": "rms_norm",
        "source": _RMS_INIT
        + """        dims = tuple(range(-len(self.normalized_shape), 0))
        h = x.to(torch.promote_types(x.dtype, torch.float32))
        eps = 1e-6 if self.eps is None else self.eps
        y = h * torch.rsqrt(h.pow(2).mean(dim=dims, keepdim=True) + eps)
        if self.weight is not None:
            y = y * self.weight
        return y.to(x.dtype)
""",
        "fails": ["test_rms_norm"],
        "says": "eps=None 을 1e-6 으로 바꾸었습니다",
    },
    {
        "name": "rms_extra_bias_parameter",
        "kind": "logic",
        "cell": "rms_norm",
        "source": """class RMSNorm(nn.Module):
    \"\"\"Root-mean-square normalization over the trailing dims (as nn.RMSNorm).\"\"\"

    def __init__(self, normalized_shape, eps=None, elementwise_affine=True):
        super().__init__()
        if isinstance(normalized_shape, int):
            normalized_shape = (normalized_shape,)
        self.normalized_shape = tuple(normalized_shape)
        self.eps = eps
        if elementwise_affine:
            self.weight = nn.Parameter(torch.ones(self.normalized_shape))
            self.bias = nn.Parameter(torch.zeros(self.normalized_shape))
        else:
            self.weight = None
            self.bias = None

    def forward(self, x):
        dims = tuple(range(-len(self.normalized_shape), 0))
        h = x.to(torch.promote_types(x.dtype, torch.float32))
        eps = torch.finfo(h.dtype).eps if self.eps is None else self.eps
        y = h * torch.rsqrt(h.pow(2).mean(dim=dims, keepdim=True) + eps)
        if self.weight is not None:
            y = y * self.weight + self.bias
        return y.to(x.dtype)
""",
        "fails": ["test_rms_norm"],
        "says": "있으면 안 되는 이름: bias",
    },
    {
        "name": "rms_scales_input_in_place",
        "kind": "in-place",
        "cell": "rms_norm",
        "source": _RMS_INIT
        + """        dims = tuple(range(-len(self.normalized_shape), 0))
        h = x.to(torch.promote_types(x.dtype, torch.float32))
        eps = torch.finfo(h.dtype).eps if self.eps is None else self.eps
        h *= torch.rsqrt(h.pow(2).mean(dim=dims, keepdim=True) + eps)
        if self.weight is not None:
            h = h * self.weight
        return h.to(x.dtype)
""",
        "fails": ["test_rms_norm"],
        "says": "in-place",
    },
    {
        "name": "rms_uses_f_rms_norm",
        "kind": "forbidden",
        "cell": "rms_norm",
        "source": _RMS_INIT
        + """        h = x.to(torch.promote_types(x.dtype, torch.float32))
        y = F.rms_norm(h, self.normalized_shape, self.weight, self.eps)
        return y.to(x.dtype)
""",
        "fails": ["test_rms_norm"],
        "says": "rms_norm",
    },
    # ------------------------------------------------------------------ FeedForward
    {
        "name": "ffn_relu_instead_of_gelu",
        "kind": "logic",
        "cell": "feed_forward",
        "source": _FFN.format(
            activation="nn.ReLU()",
            forward="return self.linear2(self.dropout(self.activation(self.linear1(x))))",
        ),
        "fails": ["test_feed_forward"],
        "says": "활성화 함수로 ReLU 를 썼습니다",
    },
    {
        "name": "ffn_tanh_gelu",
        "kind": "logic",
        "cell": "feed_forward",
        "source": _FFN.format(
            activation='nn.GELU(approximate="tanh")',
            forward="return self.linear2(self.dropout(self.activation(self.linear1(x))))",
        ),
        "fails": ["test_feed_forward"],
        "says": "GELU 의 tanh 근사",
    },
    {
        "name": "ffn_dropout_after_linear2",
        "kind": "randomness",
        "cell": "feed_forward",
        "source": _FFN.format(
            activation="nn.GELU()",
            forward="return self.dropout(self.linear2(self.activation(self.linear1(x))))",
        ),
        "fails": ["test_feed_forward"],
        "says": "같은 시드",
    },
    {
        "name": "ffn_functional_dropout_always_on",
        "kind": "randomness",
        "cell": "feed_forward",
        "source": _FFN.format(
            activation="nn.GELU()",
            forward="h = self.activation(self.linear1(x))\n"
            "        return self.linear2(F.dropout(h, self.dropout.p))",
        ),
        "fails": ["test_feed_forward"],
        "says": "eval",
    },
    # ------------------------------------------------------------------ TransformerBlock
    {
        "name": "block_pre_norm_loses_residual",
        "kind": "logic",
        "cell": "transformer_block",
        "source": _BLOCK_INIT
        + """        if self.norm_first:
            x = self.norm1(x)
            x = x + self.dropout1(self.self_attn(x, mask=mask))
            x = self.norm2(x)
            return x + self.dropout2(self.ffn(x))
        x = self.norm1(x + self.dropout1(self.self_attn(x, mask=mask)))
        return self.norm2(x + self.dropout2(self.ffn(x)))
""",
        "fails": ["test_transformer_block"],
        "says": "정규화한 값에 부분 층의 출력을 더했습니다",
    },
    {
        "name": "block_post_norm_normalizes_sublayer_only",
        "kind": "logic",
        "cell": "transformer_block",
        "source": _BLOCK_INIT
        + """        if self.norm_first:
            x = x + self.dropout1(self.self_attn(self.norm1(x), mask=mask))
            return x + self.dropout2(self.ffn(self.norm2(x)))
        x = x + self.norm1(self.dropout1(self.self_attn(x, mask=mask)))
        return x + self.norm2(self.dropout2(self.ffn(x)))
""",
        "fails": ["test_transformer_block"],
        "says": "부분 층의 출력만 정규화해 더했습니다",
    },
    {
        "name": "block_no_residual_dropout",
        "kind": "randomness",
        "cell": "transformer_block",
        "source": _BLOCK_INIT
        + """        if self.norm_first:
            x = x + self.self_attn(self.norm1(x), mask=mask)
            return x + self.ffn(self.norm2(x))
        x = self.norm1(x + self.self_attn(x, mask=mask))
        return self.norm2(x + self.ffn(x))
""",
        "fails": ["test_transformer_block"],
        "says": "같은 시드",
    },
    {
        "name": "block_ignores_mask",
        "kind": "logic",
        "cell": "transformer_block",
        "source": _BLOCK_INIT
        + """        if self.norm_first:
            x = x + self.dropout1(self.self_attn(self.norm1(x)))
            return x + self.dropout2(self.ffn(self.norm2(x)))
        x = self.norm1(x + self.dropout1(self.self_attn(x)))
        return self.norm2(x + self.dropout2(self.ffn(x)))
""",
        "fails": ["test_transformer_block"],
        "says": "mask 를 self_attn 에 넘기지 않았습니다",
    },
    {
        "name": "block_default_mask_on_cpu",
        "kind": "device",
        "cell": "transformer_block",
        "source": _BLOCK_INIT
        + """        if mask is None:
            T = x.shape[1]
            mask = torch.ones(T, T, dtype=torch.bool)
        if self.norm_first:
            x = x + self.dropout1(self.self_attn(self.norm1(x), mask=mask))
            return x + self.dropout2(self.ffn(self.norm2(x)))
        x = self.norm1(x + self.dropout1(self.self_attn(x, mask=mask)))
        return self.norm2(x + self.dropout2(self.ffn(x)))
""",
        "fails": ["test_transformer_block"],
        "says": "장치",
    },
    {
        "name": "block_eps_not_passed",
        "kind": "constant",
        "cell": "transformer_block",
        "source": _BLOCK_INIT.replace("LayerNorm(d_model, eps=eps)", "LayerNorm(d_model)")
        + """        if self.norm_first:
            x = x + self.dropout1(self.self_attn(self.norm1(x), mask=mask))
            return x + self.dropout2(self.ffn(self.norm2(x)))
        x = self.norm1(x + self.dropout1(self.self_attn(x, mask=mask)))
        return self.norm2(x + self.dropout2(self.ffn(x)))
""",
        "fails": ["test_transformer_block"],
        "says": "eps 를 LayerNorm 에 넘기지 않았습니다",
    },
    {
        "name": "block_uses_torch_encoder_layer",
        "kind": "forbidden",
        "cell": "transformer_block",
        "source": """class TransformerBlock(nn.Module):
    \"\"\"Self-attention and FFN sublayers with residual connections and LayerNorm.\"\"\"

    def __init__(self, d_model, num_heads, d_ff, dropout=0.0, norm_first=True, eps=1e-5):
        super().__init__()
        self.layer = nn.TransformerEncoderLayer(
            d_model, num_heads, d_ff, dropout, activation="gelu", layer_norm_eps=eps,
            batch_first=True, norm_first=norm_first,
        )

    def forward(self, x, mask=None):
        return self.layer(x, src_mask=None if mask is None else ~mask)
""",
        "fails": ["test_transformer_block"],
        "says": "TransformerEncoderLayer",
    },
    {
        "name": "block_uses_nn_layernorm",
        "kind": "forbidden",
        "cell": "transformer_block",
        "source": _BLOCK_INIT.replace(
            "LayerNorm(d_model, eps=eps)", "nn.LayerNorm(d_model, eps=eps)"
        )
        + """        if self.norm_first:
            x = x + self.dropout1(self.self_attn(self.norm1(x), mask=mask))
            return x + self.dropout2(self.ffn(self.norm2(x)))
        x = self.norm1(x + self.dropout1(self.self_attn(x, mask=mask)))
        return self.norm2(x + self.dropout2(self.ffn(x)))
""",
        "fails": ["test_transformer_block"],
        "says": "nn.LayerNorm",
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


_LN = (
    _LN_INIT
    + """        dims = tuple(range(-len(self.normalized_shape), 0))
        h = x.to(torch.promote_types(x.dtype, torch.float32))
        mean = h.mean(dim=dims, keepdim=True)
        centered = h - mean
        var = centered.pow(2).mean(dim=dims, keepdim=True)
        y = centered / torch.sqrt(var + self.eps)
        if self.weight is not None:
            y = y * self.weight + self.bias
        return y.to(x.dtype)
"""
)

_RMS = (
    _RMS_INIT
    + """        dims = tuple(range(-len(self.normalized_shape), 0))
        h = x.to(torch.promote_types(x.dtype, torch.float32))
        eps = torch.finfo(h.dtype).eps if self.eps is None else self.eps
        y = h * torch.rsqrt(h.pow(2).mean(dim=dims, keepdim=True) + eps)
        if self.weight is not None:
            y = y * self.weight
        return y.to(x.dtype)
"""
)

_FFN_REF = _FFN.format(
    activation="nn.GELU()",
    forward="return self.linear2(self.dropout(self.activation(self.linear1(x))))",
)

_BLOCK = (
    _BLOCK_INIT
    + """        if self.norm_first:
            x = x + self.dropout1(self.self_attn(self.norm1(x), mask=mask))
            return x + self.dropout2(self.ffn(self.norm2(x)))
        x = self.norm1(x + self.dropout1(self.self_attn(x, mask=mask)))
        return self.norm2(x + self.dropout2(self.ffn(x)))
"""
)

LN, RMS, FFN, BLOCK = (
    "test_layer_norm",
    "test_rms_norm",
    "test_feed_forward",
    "test_transformer_block",
)

MISTAKES += [
    # ------------------------------------------------------------------ LayerNorm
    _entry(
        "ln_float64_in_float32",
        "constant",
        "layer_norm",
        _fix(_LN, "h = x.to(torch.promote_types(x.dtype, torch.float32))", "h = x.float()"),
        [LN],
        "float64 입력을 float32 로 계산했습니다",
    ),
    _entry(
        "ln_parameters_last_dim_only",
        "logic",
        "layer_norm",
        _fix(
            _fix(
                _LN,
                "self.weight = nn.Parameter(torch.ones(self.normalized_shape))",
                "self.weight = nn.Parameter(torch.ones(self.normalized_shape[-1]))",
            ),
            "self.bias = nn.Parameter(torch.zeros(self.normalized_shape))",
            "self.bias = nn.Parameter(torch.zeros(self.normalized_shape[-1]))",
        ),
        [LN],
        "LayerNorm",
    ),
    _entry(
        "ln_bias_initialised_to_ones",
        "logic",
        "layer_norm",
        _fix(
            _LN,
            "self.bias = nn.Parameter(torch.zeros(self.normalized_shape))",
            "self.bias = nn.Parameter(torch.ones(self.normalized_shape))",
        ),
        [LN],
        "bias",
    ),
    # ------------------------------------------------------------------ RMSNorm
    _entry(
        "rms_eps_none_always_float32",
        "constant",
        "rms_norm",
        _fix(
            _RMS,
            "eps = torch.finfo(h.dtype).eps if self.eps is None else self.eps",
            "eps = torch.finfo(torch.float32).eps if self.eps is None else self.eps",
        ),
        [RMS],
        "늘 float32 의 eps 를 썼습니다",
    ),
    _entry(
        "rms_casts_back_before_weight",
        "logic",
        "rms_norm",
        _fix(
            _fix(
                _RMS, "        if self.weight is not None:\n            y = y * self.weight\n", ""
            ),
            "        return y.to(x.dtype)\n",
            "        y = y.to(x.dtype)\n"
            "        return y if self.weight is None else y * self.weight\n",
        ),
        [RMS],
        "dtype",
    ),
    _entry(
        "rms_unit_weight_on_cpu",
        "device",
        "rms_norm",
        _fix(
            _fix(_RMS, "        if self.weight is not None:\n", ""),
            "            y = y * self.weight\n",
            "        w = self.weight\n"
            "        if w is None:\n"
            "            w = torch.ones(self.normalized_shape)\n"
            "        y = y * w\n",
        ),
        [RMS],
        "장치",
    ),
    # ------------------------------------------------------------------ FeedForward
    _entry(
        "ffn_dropout_before_gelu",
        "randomness",
        "feed_forward",
        _fix(
            _FFN_REF,
            "return self.linear2(self.dropout(self.activation(self.linear1(x))))",
            "return self.linear2(self.activation(self.dropout(self.linear1(x))))",
        ),
        [FFN],
        "같은 시드",
    ),
    _entry(
        "ffn_linear2_created_first",
        "logic",
        "feed_forward",
        _fix(
            _fix(_FFN_REF, "        self.linear2 = nn.Linear(d_ff, d_model)\n", ""),
            "        self.linear1 = nn.Linear(d_model, d_ff)\n",
            "        self.linear2 = nn.Linear(d_ff, d_model)\n"
            "        self.linear1 = nn.Linear(d_model, d_ff)\n",
        ),
        [FFN],
        "FeedForward",
    ),
    # ------------------------------------------------------------------ TransformerBlock
    _entry(
        "block_mask_inverted_like_torch",
        "logic",
        "transformer_block",
        _fix(
            _fix(
                _BLOCK,
                "x = x + self.dropout1(self.self_attn(self.norm1(x), mask=mask))",
                "x = x + self.dropout1(self.self_attn(self.norm1(x), mask=blocked))",
            ),
            "x = self.norm1(x + self.dropout1(self.self_attn(x, mask=mask)))",
            "x = self.norm1(x + self.dropout1(self.self_attn(x, mask=blocked)))",
        ).replace(
            "        if self.norm_first:\n",
            "        blocked = None if mask is None else ~mask  # torch: True = blocked\n"
            "        if self.norm_first:\n",
            1,
        ),
        [BLOCK],
        "mask 를 뒤집어(~mask) 넘겼습니다",
    ),
]

# Correct solutions written another way: each must keep full marks.
CORRECT = [
    {
        "name": "ln_var_mean_biased",
        "cell": "layer_norm",
        "source": _fix(
            _LN,
            """        mean = h.mean(dim=dims, keepdim=True)
        centered = h - mean
        var = centered.pow(2).mean(dim=dims, keepdim=True)
        y = centered / torch.sqrt(var + self.eps)""",
            """        var, mean = torch.var_mean(h, dim=dims, correction=0, keepdim=True)
        y = (h - mean) * torch.rsqrt(var + self.eps)""",
        ),
        "why": "torch.var_mean with correction=0 is the biased variance (two-pass, stable)",
    },
    {
        "name": "ln_float64_inside",
        "cell": "layer_norm",
        "source": _fix(
            _fix(_LN, "h = x.to(torch.promote_types(x.dtype, torch.float32))", "h = x.double()"),
            "            y = y * self.weight + self.bias\n",
            "            y = torch.addcmul(self.bias.double(), y, self.weight.double())\n",
        ),
        "why": "float64 inside is at least as accurate as the float32 upcast; cast back at the end",
    },
    {
        "name": "rms_sqrt_division",
        "cell": "rms_norm",
        "source": _fix(
            _RMS,
            "y = h * torch.rsqrt(h.pow(2).mean(dim=dims, keepdim=True) + eps)",
            "y = h / torch.sqrt((h * h).mean(dim=dims, keepdim=True) + eps)",
        ),
        "why": "x / sqrt(ms + eps) equals x * rsqrt(ms + eps)",
    },
    {
        "name": "ffn_functional_gelu",
        "cell": "feed_forward",
        "source": _fix(
            _FFN_REF,
            "return self.linear2(self.dropout(self.activation(self.linear1(x))))",
            "h = F.gelu(self.linear1(x))  # exact (erf) GELU, as nn.GELU()\n"
            "        return self.linear2(self.dropout(h))",
        ),
        "why": "F.gelu is what nn.GELU() calls; the dropout stays on the (..., d_ff) hidden",
    },
    {
        "name": "block_named_sublayers",
        "cell": "transformer_block",
        "source": _BLOCK_INIT
        + """        if not self.norm_first:
            attn = self.dropout1(self.self_attn(x, mask=mask))
            x = self.norm1(x + attn)
            ff = self.dropout2(self.ffn(x))
            return self.norm2(x + ff)
        attn = self.dropout1(self.self_attn(self.norm1(x), mask=mask))
        h = x + attn
        ff = self.dropout2(self.ffn(self.norm2(h)))
        return h + ff
""",
        "why": "the same formulas with the post-norm branch first and named intermediates",
    },
]

MISTAKES += [
    _entry(
        "ln_affine_false_frozen_parameters",
        "logic",
        "layer_norm",
        _fix(
            _fix(
                _LN,
                """            self.weight = None
            self.bias = None""",
                """            ones = torch.ones(self.normalized_shape)
            self.weight = nn.Parameter(ones, requires_grad=False)
            self.bias = nn.Parameter(torch.zeros(self.normalized_shape), requires_grad=False)""",
            ),
            "        if self.weight is not None:\n            y = y * self.weight + self.bias\n",
            "        y = y * self.weight + self.bias\n",
        ),
        [LN],
        "elementwise_affine",
    ),
    _entry(
        "rms_last_dim_only",
        "logic",
        "rms_norm",
        _fix(
            _fix(_RMS, "        dims = tuple(range(-len(self.normalized_shape), 0))\n", ""),
            "h.pow(2).mean(dim=dims, keepdim=True)",
            "h.pow(2).mean(dim=-1, keepdim=True)",
        ),
        [RMS],
        "평균 제곱을 마지막 차원에서만 구했습니다",
    ),
]

# Graded full marks although they break the spec (the grader's gaps, kept out of MISTAKES): the
# why says what the grader did.
_OPEN_WHY = {}
OPEN = [dict(m, why=_OPEN_WHY[m["name"]]) for m in MISTAKES if m["name"] in _OPEN_WHY]
MISTAKES = [m for m in MISTAKES if m["name"] not in _OPEN_WHY]

# correct variants written on 2026-11-28 by an author who saw only the release notebook and
# the book (loops, library-style code, float64 inside): full marks on first contact
CORRECT += [
    {
        "name": "ok_layer_norm_flatten_var_mean",
        "cell": "layer_norm",
        "source": (
            "class LayerNorm(nn.Module):\n"
            "    '''Layer normalization over the trailing dims given by "
            "normalized_shape (as nn.LayerNorm).'''\n"
            "\n"
            "    def __init__(self, normalized_shape, eps=1e-5, "
            "elementwise_affine=True):\n"
            "        super().__init__()\n"
            "        shape = (normalized_shape,) if isinstance(normalized_shape, "
            "int) else tuple(normalized_shape)\n"
            "        self.normalized_shape = shape\n"
            "        self.eps = eps\n"
            "        self.elementwise_affine = elementwise_affine\n"
            "        if elementwise_affine:\n"
            "            self.weight = nn.Parameter(torch.ones(shape))\n"
            "            self.bias = nn.Parameter(torch.zeros(shape))\n"
            "        else:\n"
            "            self.register_parameter('weight', None)\n"
            "            self.register_parameter('bias', None)\n"
            "\n"
            "    def forward(self, x):\n"
            "        k = len(self.normalized_shape)\n"
            "        h = x.to(torch.promote_types(x.dtype, torch.float32))\n"
            "        flat = h.flatten(start_dim=h.dim() - k) if k > 0 else "
            "h.unsqueeze(-1)\n"
            "        var, mean = torch.var_mean(flat, dim=-1, correction=0, "
            "keepdim=True)\n"
            "        y = ((flat - mean) * torch.rsqrt(var + "
            "self.eps)).reshape(h.shape)\n"
            "        if self.weight is not None:\n"
            "            y = y * self.weight + self.bias\n"
            "        return y.to(x.dtype)\n"
        ),
        "why": (
            "Flattening the trailing normalized dims and using torch.var_mean(correction=0) gives"
            " the biased variance of the centred values (no E[x^2]-E[x]^2); rsqrt(var + eps) "
            "inside the root; affine and dtype rules as specified."
        ),
    },
    {
        "name": "ok_rms_norm_sum_div_sqrt",
        "cell": "rms_norm",
        "source": (
            "class RMSNorm(nn.Module):\n"
            "    '''Root-mean-square normalization over the trailing dims (as "
            "nn.RMSNorm): no mean, no bias.'''\n"
            "\n"
            "    def __init__(self, normalized_shape, eps=None, "
            "elementwise_affine=True):\n"
            "        super().__init__()\n"
            "        if isinstance(normalized_shape, int):\n"
            "            normalized_shape = (normalized_shape,)\n"
            "        self.normalized_shape = tuple(normalized_shape)\n"
            "        self.eps = eps\n"
            "        self.elementwise_affine = elementwise_affine\n"
            "        self.weight = nn.Parameter(torch.ones(self.normalized_shape)) "
            "if elementwise_affine else None\n"
            "\n"
            "    def forward(self, x):\n"
            "        dims = tuple(range(x.dim() - len(self.normalized_shape), "
            "x.dim()))\n"
            "        n = 1\n"
            "        for s in self.normalized_shape:\n"
            "            n *= s\n"
            "        compute = torch.promote_types(x.dtype, torch.float32)\n"
            "        h = x.to(compute)\n"
            "        if self.eps is None:\n"
            "            eps = torch.finfo(compute).eps\n"
            "        else:\n"
            "            eps = self.eps\n"
            "        rms = torch.sqrt((h * h).sum(dim=dims, keepdim=True) / n + "
            "eps)\n"
            "        out = h / rms\n"
            "        if self.weight is not None:\n"
            "            out = out * self.weight.to(compute)\n"
            "        return out.to(x.dtype)\n"
        ),
        "why": (
            "sum(x^2)/n is the mean square; dividing by sqrt(ms + eps) equals multiplying by "
            "rsqrt; eps default is finfo of the compute dtype (float32, or float64 for float64 "
            "inputs)."
        ),
    },
    {
        "name": "ok_feed_forward_erf_formula_matmul",
        "cell": "feed_forward",
        "source": (
            "class FeedForward(nn.Module):\n"
            "    '''Position-wise FFN: linear2(dropout(gelu(linear1(x)))), x (..., "
            "d_model) -> (..., d_model).'''\n"
            "\n"
            "    def __init__(self, d_model, d_ff, dropout=0.0):\n"
            "        super().__init__()\n"
            "        self.linear1 = nn.Linear(d_model, d_ff)\n"
            "        self.activation = nn.GELU()\n"
            "        self.dropout = nn.Dropout(dropout)\n"
            "        self.linear2 = nn.Linear(d_ff, d_model)\n"
            "\n"
            "    def forward(self, x):\n"
            "        h = torch.matmul(x, self.linear1.weight.t()) + "
            "self.linear1.bias\n"
            "        h = 0.5 * h * (1.0 + torch.erf(h * (1.0 / math.sqrt(2.0))))\n"
            "        h = self.dropout(h)\n"
            "        return torch.matmul(h, self.linear2.weight.t()) + "
            "self.linear2.bias\n"
        ),
        "why": (
            "x W1^T + b1, the exact GELU 0.5 h (1 + erf(h / sqrt 2)), dropout once on (..., "
            "d_ff), then h W2^T + b2: the same FFN written out."
        ),
    },
    {
        "name": "ok_block_explicit_branches",
        "cell": "transformer_block",
        "source": (
            "class TransformerBlock(nn.Module):\n"
            "    '''Self-attention and FFN sublayers with residual connections and "
            "LayerNorm.'''\n"
            "\n"
            "    def __init__(self, d_model, num_heads, d_ff, dropout=0.0, "
            "norm_first=True, eps=1e-5):\n"
            "        super().__init__()\n"
            "        self.self_attn = MultiHeadAttention(d_model, num_heads, "
            "dropout)\n"
            "        self.norm1 = LayerNorm(d_model, eps=eps)\n"
            "        self.norm2 = LayerNorm(d_model, eps=eps)\n"
            "        self.ffn = FeedForward(d_model, d_ff, dropout)\n"
            "        self.dropout1 = nn.Dropout(dropout)\n"
            "        self.dropout2 = nn.Dropout(dropout)\n"
            "        self.norm_first = bool(norm_first)\n"
            "\n"
            "    def _pre(self, x, mask):\n"
            "        residual = x\n"
            "        a = self.self_attn(self.norm1(x), mask=mask)\n"
            "        x = residual + self.dropout1(a)\n"
            "        residual = x\n"
            "        f = self.ffn(self.norm2(x))\n"
            "        return residual + self.dropout2(f)\n"
            "\n"
            "    def _post(self, x, mask):\n"
            "        a = self.self_attn(x, mask=mask)\n"
            "        x = self.norm1(torch.add(x, self.dropout1(a)))\n"
            "        f = self.ffn(x)\n"
            "        return self.norm2(torch.add(x, self.dropout2(f)))\n"
            "\n"
            "    def forward(self, x, mask=None):\n"
            "        return self._pre(x, mask) if self.norm_first else "
            "self._post(x, mask)\n"
        ),
        "why": (
            "Separate pre-norm and post-norm methods that follow the table line by line, keeping "
            "the un-normalised x on the pre-norm residual path."
        ),
    },
    {
        "name": "ok_block_sequential_list",
        "cell": "transformer_block",
        "source": (
            "class TransformerBlock(nn.Module):\n"
            "    '''Self-attention and FFN sublayers with residual connections and "
            "LayerNorm.'''\n"
            "\n"
            "    def __init__(self, d_model, num_heads, d_ff, dropout=0.0, "
            "norm_first=True, eps=1e-5):\n"
            "        super().__init__()\n"
            "        self.self_attn = MultiHeadAttention(d_model, num_heads, "
            "dropout)\n"
            "        self.norm1 = LayerNorm(d_model, eps=eps)\n"
            "        self.norm2 = LayerNorm(d_model, eps=eps)\n"
            "        self.ffn = FeedForward(d_model, d_ff, dropout)\n"
            "        self.dropout1 = nn.Dropout(dropout)\n"
            "        self.dropout2 = nn.Dropout(dropout)\n"
            "        self.norm_first = norm_first\n"
            "\n"
            "    def forward(self, x, mask=None):\n"
            "        steps = (\n"
            "            (lambda t: self.self_attn(t, mask=mask), self.norm1, "
            "self.dropout1),\n"
            "            (self.ffn, self.norm2, self.dropout2),\n"
            "        )\n"
            "        for layer, norm, drop in steps:\n"
            "            if self.norm_first:\n"
            "                x = x + drop(layer(norm(x)))\n"
            "            else:\n"
            "                x = norm(x + drop(layer(x)))\n"
            "        return x\n"
        ),
        "why": (
            "A loop over the two (sublayer, norm, dropout) triples in order applies exactly the "
            "table's formulas and the required dropout order."
        ),
    },
]
