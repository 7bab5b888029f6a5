"""Blind wrong solutions for models, written from the release notebook and the book only."""
ASSIGNMENT = "models"

_DECODER_HEAD = '''class DecoderBlock(nn.Module):
    """Pre-norm decoder layer: causal self-attention, cross-attention on memory, FFN.

    forward(x (B, T, d_model), memory (B, S, d_model), self_mask=None, memory_mask=None)
    -> (B, T, d_model).
    """
'''

_MLM_HEAD = '''def mlm_mask(input_ids, vocab_size, mask_id, special_ids, seed, p=0.15):
    """BERT masked-LM corruption: (inputs (B, T), labels (B, T)), labels -100 where not chosen.

    Each non-special token is chosen independently with probability p; a chosen token becomes
    mask_id (80 %), a uniform random id (10 %) or stays (10 %). Draws from a CPU generator.
    """
'''

_GPT_BLOCK = '''class GPTBlock(nn.Module):
    """Pre-norm causal block: x + attn(norm1(x)), then x + ffn(norm2(x)). (B, T, d) -> (B, T, d)."""

    def __init__(self, d_model, num_heads, d_ff):
        super().__init__()
        self.norm1 = nn.LayerNorm(d_model)
        self.attn = MultiHeadAttention(d_model, num_heads, causal=True)
        self.norm2 = nn.LayerNorm(d_model)
        self.ffn = FeedForward(d_model, d_ff)

    def forward(self, x):
        x = x + self.attn(self.norm1(x))
        return x + self.ffn(self.norm2(x))

'''

_ROPE_OK = '''def apply_rope(x, positions=None, base=10000.0):
    """RoPE with the "half" pairing (dim i with i + d/2): x (B, h, T, d_head) -> same shape."""
    T, d_head = x.shape[-2], x.shape[-1]
    work = torch.promote_types(x.dtype, torch.float32)          # float32, or float64 for float64
    if positions is None:
        positions = torch.arange(T, device=x.device)
    inv_freq = base ** (-torch.arange(0, d_head, 2, device=x.device, dtype=work) / d_head)
    angle = positions.to(device=x.device, dtype=work)[:, None] * inv_freq   # (T, d_head / 2)
    cos, sin = angle.cos(), angle.sin()
    xw = x.to(work)
    a, b = xw[..., : d_head // 2], xw[..., d_head // 2 :]
    return torch.cat((a * cos - b * sin, a * sin + b * cos), dim=-1).to(x.dtype)

'''

_GQA_INIT = '''class GroupedQueryAttention(nn.Module):
    """Causal GQA with RoPE, no biases: forward(x (B, T, d_model), mask=None) -> (B, T, d_model)."""

    def __init__(self, d_model, num_heads, num_kv_heads, rope_base=10000.0):
        super().__init__()
        self.num_heads = num_heads
        self.num_kv_heads = num_kv_heads
        self.d_head = d_model // num_heads
        self.rope_base = rope_base
        self.W_query = nn.Linear(d_model, d_model, bias=False)
        self.W_key = nn.Linear(d_model, num_kv_heads * self.d_head, bias=False)
        self.W_value = nn.Linear(d_model, num_kv_heads * self.d_head, bias=False)
        self.out_proj = nn.Linear(d_model, d_model, bias=False)
'''

_GQA_OK = _GQA_INIT + '''
    def forward(self, x, mask=None):
        B, T, _ = x.shape
        q = self.W_query(x).view(B, T, self.num_heads, self.d_head).transpose(1, 2)
        k = self.W_key(x).view(B, T, self.num_kv_heads, self.d_head).transpose(1, 2)
        v = self.W_value(x).view(B, T, self.num_kv_heads, self.d_head).transpose(1, 2)
        q = apply_rope(q, base=self.rope_base)
        k = apply_rope(k, base=self.rope_base)
        group = self.num_heads // self.num_kv_heads
        k = k.repeat_interleave(group, dim=1)                      # (B, h, T, d_head)
        v = v.repeat_interleave(group, dim=1)
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.d_head)  # (B, h, T, T)
        pos = torch.arange(T, device=x.device)
        keep = pos[None, :] <= pos[:, None]                         # (T, T) causal keep-mask
        if mask is not None:
            keep = keep & mask
        scores = scores.masked_fill(~keep, torch.finfo(scores.dtype).min)
        weights = torch.softmax(scores, dim=-1)
        out = (weights @ v).transpose(1, 2).reshape(B, T, self.num_heads * self.d_head)
        return self.out_proj(out)

'''

_MODERN_OK = '''class ModernBlock(nn.Module):
    """LLaMA-style block: x + attn(attn_norm(x)), then x + ffn(ffn_norm(x))."""

    def __init__(self, d_model, num_heads, num_kv_heads, d_ff, eps=1e-6, rope_base=10000.0):
        super().__init__()
        self.attn_norm = RMSNorm(d_model, eps)
        self.attn = GroupedQueryAttention(d_model, num_heads, num_kv_heads, rope_base)
        self.ffn_norm = RMSNorm(d_model, eps)
        self.ffn = SwiGLU(d_model, d_ff)

    def forward(self, x, mask=None):
        x = x + self.attn(self.attn_norm(x), mask=mask)
        return x + self.ffn(self.ffn_norm(x))
'''

MISTAKES = [
    # ------------------------------------------------------------------ decoder_block
    {
        "name": "decoder_self_mask_ignored",
        "cell": "decoder_block",
        "clause": "self_mask is an extra keep-mask for the self-attention (combined with the causal mask)",
        "class": "logic",
        "source": _DECODER_HEAD + '''
    def __init__(self, d_model, num_heads, d_ff, dropout=0.0, eps=1e-5):
        super().__init__()
        self.self_attn = MultiHeadAttention(d_model, num_heads, dropout, causal=True)
        self.cross_attn = MultiHeadAttention(d_model, num_heads, dropout, causal=False)
        self.ffn = FeedForward(d_model, d_ff, dropout)
        self.norm1 = nn.LayerNorm(d_model, eps=eps)
        self.norm2 = nn.LayerNorm(d_model, eps=eps)
        self.norm3 = nn.LayerNorm(d_model, eps=eps)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x, memory, self_mask=None, memory_mask=None):
        # the causal mask already hides the future, which is all the self-attention needs
        x = x + self.dropout(self.self_attn(self.norm1(x)))
        x = x + self.dropout(self.cross_attn(self.norm2(x), context=memory, mask=memory_mask))
        x = x + self.dropout(self.ffn(self.norm3(x)))
        return x
''',
    },
    {
        "name": "decoder_sublayers_built_without_dropout",
        "cell": "decoder_block",
        "clause": "dropout is passed to both attentions and the FFN (train() output must match draw for draw)",
        "class": "randomness",
        "source": _DECODER_HEAD + '''
    def __init__(self, d_model, num_heads, d_ff, dropout=0.0, eps=1e-5):
        super().__init__()
        self.self_attn = MultiHeadAttention(d_model, num_heads, causal=True)
        self.cross_attn = MultiHeadAttention(d_model, num_heads, causal=False)
        self.ffn = FeedForward(d_model, d_ff)
        self.norm1 = nn.LayerNorm(d_model, eps=eps)
        self.norm2 = nn.LayerNorm(d_model, eps=eps)
        self.norm3 = nn.LayerNorm(d_model, eps=eps)
        self.dropout = nn.Dropout(dropout)          # one dropout for the whole block

    def forward(self, x, memory, self_mask=None, memory_mask=None):
        x = x + self.dropout(self.self_attn(self.norm1(x), mask=self_mask))
        x = x + self.dropout(self.cross_attn(self.norm2(x), context=memory, mask=memory_mask))
        x = x + self.dropout(self.ffn(self.norm3(x)))
        return x
''',
    },
    {
        "name": "decoder_layernorm_eps_not_passed",
        "cell": "decoder_block",
        "clause": "norm1..norm3 are nn.LayerNorm(d_model, eps=eps) with the given eps",
        "class": "defaults",
        "source": _DECODER_HEAD + '''
    def __init__(self, d_model, num_heads, d_ff, dropout=0.0, eps=1e-5):
        super().__init__()
        self.self_attn = MultiHeadAttention(d_model, num_heads, dropout, causal=True)
        self.cross_attn = MultiHeadAttention(d_model, num_heads, dropout, causal=False)
        self.ffn = FeedForward(d_model, d_ff, dropout)
        self.norm1 = nn.LayerNorm(d_model)
        self.norm2 = nn.LayerNorm(d_model)
        self.norm3 = nn.LayerNorm(d_model)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x, memory, self_mask=None, memory_mask=None):
        x = x + self.dropout(self.self_attn(self.norm1(x), mask=self_mask))
        x = x + self.dropout(self.cross_attn(self.norm2(x), context=memory, mask=memory_mask))
        x = x + self.dropout(self.ffn(self.norm3(x)))
        return x
''',
    },
    {
        "name": "decoder_norm2_norm3_swapped",
        "cell": "decoder_block",
        "clause": "LN_2 normalises the cross-attention input and LN_3 the FFN input",
        "class": "logic",
        "source": _DECODER_HEAD + '''
    def __init__(self, d_model, num_heads, d_ff, dropout=0.0, eps=1e-5):
        super().__init__()
        self.self_attn = MultiHeadAttention(d_model, num_heads, dropout, causal=True)
        self.cross_attn = MultiHeadAttention(d_model, num_heads, dropout, causal=False)
        self.ffn = FeedForward(d_model, d_ff, dropout)
        self.norm1 = nn.LayerNorm(d_model, eps=eps)
        self.norm2 = nn.LayerNorm(d_model, eps=eps)
        self.norm3 = nn.LayerNorm(d_model, eps=eps)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x, memory, self_mask=None, memory_mask=None):
        x = x + self.dropout(self.self_attn(self.norm1(x), mask=self_mask))
        x = x + self.dropout(self.cross_attn(self.norm3(x), context=memory, mask=memory_mask))
        x = x + self.dropout(self.ffn(self.norm2(x)))
        return x
''',
    },
    {
        "name": "decoder_dropout_on_residual_sum",
        "cell": "decoder_block",
        "clause": "dropout is applied to each sublayer output before the residual addition, not to the sum",
        "class": "randomness",
        "source": _DECODER_HEAD + '''
    def __init__(self, d_model, num_heads, d_ff, dropout=0.0, eps=1e-5):
        super().__init__()
        self.self_attn = MultiHeadAttention(d_model, num_heads, dropout, causal=True)
        self.cross_attn = MultiHeadAttention(d_model, num_heads, dropout, causal=False)
        self.ffn = FeedForward(d_model, d_ff, dropout)
        self.norm1 = nn.LayerNorm(d_model, eps=eps)
        self.norm2 = nn.LayerNorm(d_model, eps=eps)
        self.norm3 = nn.LayerNorm(d_model, eps=eps)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x, memory, self_mask=None, memory_mask=None):
        x = self.dropout(x + self.self_attn(self.norm1(x), mask=self_mask))
        x = self.dropout(x + self.cross_attn(self.norm2(x), context=memory, mask=memory_mask))
        x = self.dropout(x + self.ffn(self.norm3(x)))
        return x
''',
    },
    {
        "name": "decoder_causal_mask_built_on_cpu",
        "cell": "decoder_block",
        "clause": "new tensors (the causal mask) are created on the input's device",
        "class": "device",
        "source": _DECODER_HEAD + '''
    def __init__(self, d_model, num_heads, d_ff, dropout=0.0, eps=1e-5):
        super().__init__()
        # causal=True on the module; the mask is also combined here with self_mask explicitly
        self.self_attn = MultiHeadAttention(d_model, num_heads, dropout, causal=True)
        self.cross_attn = MultiHeadAttention(d_model, num_heads, dropout, causal=False)
        self.ffn = FeedForward(d_model, d_ff, dropout)
        self.norm1 = nn.LayerNorm(d_model, eps=eps)
        self.norm2 = nn.LayerNorm(d_model, eps=eps)
        self.norm3 = nn.LayerNorm(d_model, eps=eps)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x, memory, self_mask=None, memory_mask=None):
        T = x.shape[1]
        causal = torch.ones(T, T, dtype=torch.bool).tril()          # (T, T), True = may attend
        keep = causal if self_mask is None else self_mask & causal
        x = x + self.dropout(self.self_attn(self.norm1(x), mask=keep))
        x = x + self.dropout(self.cross_attn(self.norm2(x), context=memory, mask=memory_mask))
        x = x + self.dropout(self.ffn(self.norm3(x)))
        return x
''',
    },
    {
        "name": "decoder_post_norm",
        "cell": "decoder_block",
        "clause": "pre-norm: x <- x + Dropout(Sublayer(LN(x))), the norm is applied to the sublayer input",
        "class": "logic",
        "source": _DECODER_HEAD + '''
    def __init__(self, d_model, num_heads, d_ff, dropout=0.0, eps=1e-5):
        super().__init__()
        self.self_attn = MultiHeadAttention(d_model, num_heads, dropout, causal=True)
        self.cross_attn = MultiHeadAttention(d_model, num_heads, dropout, causal=False)
        self.ffn = FeedForward(d_model, d_ff, dropout)
        self.norm1 = nn.LayerNorm(d_model, eps=eps)
        self.norm2 = nn.LayerNorm(d_model, eps=eps)
        self.norm3 = nn.LayerNorm(d_model, eps=eps)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x, memory, self_mask=None, memory_mask=None):
        x = self.norm1(x + self.dropout(self.self_attn(x, mask=self_mask)))
        x = self.norm2(x + self.dropout(self.cross_attn(x, context=memory, mask=memory_mask)))
        x = self.norm3(x + self.dropout(self.ffn(x)))
        return x
''',
    },
    # ------------------------------------------------------------------ mlm_mask
    {
        "name": "mlm_exact_count_per_row",
        "cell": "mlm_mask",
        "clause": "selection is an independent Bernoulli(p) per non-special token, not exactly round(p * n) per row",
        "class": "logic",
        "source": _MLM_HEAD + '''    g = torch.Generator().manual_seed(seed)
    B, T = input_ids.shape
    device = input_ids.device
    special = torch.zeros(B, T, dtype=torch.bool, device=device)
    for s in special_ids:
        special |= input_ids == s
    # like BERT: every row gets round(p * n) predictions among its non-special tokens
    scores = torch.rand(B, T, generator=g).to(device).masked_fill(special, 2.0)
    n_pick = (((~special).sum(dim=1).float() * p).round()).long()          # (B,)
    rank = scores.argsort(dim=1).argsort(dim=1)                             # rank of each token
    chosen = (rank < n_pick[:, None]) & ~special
    u_kind = torch.rand(B, T, generator=g).to(device)
    random_ids = torch.randint(vocab_size, (B, T), generator=g).to(device=device, dtype=input_ids.dtype)
    labels = torch.where(chosen, input_ids, torch.full_like(input_ids, -100))
    inputs = input_ids.clone()
    inputs[chosen & (u_kind < 0.8)] = mask_id
    use_random = chosen & (u_kind >= 0.8) & (u_kind < 0.9)
    inputs[use_random] = random_ids[use_random]
    return inputs, labels
''',
    },
    {
        "name": "mlm_random_ids_promote_dtype",
        "cell": "mlm_mask",
        "clause": "inputs keep input_ids' dtype (e.g. int32 stays int32; randint gives int64)",
        "class": "dtype",
        "source": _MLM_HEAD + '''    g = torch.Generator().manual_seed(seed)
    shape = input_ids.shape
    device = input_ids.device
    u_pick = torch.rand(shape, generator=g).to(device)
    u_kind = torch.rand(shape, generator=g).to(device)
    random_ids = torch.randint(vocab_size, shape, generator=g).to(device)
    special = torch.zeros(shape, dtype=torch.bool, device=device)
    for s in special_ids:
        special = special | (input_ids == s)
    chosen = (u_pick < p) & ~special
    labels = input_ids.masked_fill(~chosen, -100)
    inputs = input_ids.masked_fill(chosen & (u_kind < 0.8), mask_id)
    inputs = torch.where(chosen & (u_kind >= 0.8) & (u_kind < 0.9), random_ids, inputs)
    return inputs, labels
''',
    },
    {
        "name": "mlm_random_token_excludes_special_ids",
        "cell": "mlm_mask",
        "clause": "the random replacement is uniform over [0, vocab_size), special ids included",
        "class": "randomness",
        "source": _MLM_HEAD + '''    g = torch.Generator().manual_seed(seed)
    shape = input_ids.shape
    device = input_ids.device
    u_pick = torch.rand(shape, generator=g).to(device)
    u_kind = torch.rand(shape, generator=g).to(device)
    # a random replacement should look like a real word, so draw among the ordinary ids only
    ordinary = torch.tensor([i for i in range(vocab_size) if i not in set(special_ids)])
    random_ids = ordinary[torch.randint(len(ordinary), shape, generator=g)]
    random_ids = random_ids.to(device=device, dtype=input_ids.dtype)
    special = torch.zeros(shape, dtype=torch.bool, device=device)
    for s in special_ids:
        special = special | (input_ids == s)
    chosen = (u_pick < p) & ~special
    labels = torch.where(chosen, input_ids, torch.full_like(input_ids, -100))
    inputs = torch.where(chosen & (u_kind < 0.8), torch.full_like(input_ids, mask_id), input_ids)
    inputs = torch.where(chosen & (u_kind >= 0.8) & (u_kind < 0.9), random_ids, inputs)
    return inputs, labels
''',
    },
    {
        "name": "mlm_draws_on_input_device",
        "cell": "mlm_mask",
        "clause": "all draws come from the CPU generator and are then moved to input_ids.device",
        "class": "device",
        "source": _MLM_HEAD + '''    device = input_ids.device
    g = torch.Generator(device=device).manual_seed(seed)
    shape = input_ids.shape
    u_pick = torch.rand(shape, generator=g, device=device)
    u_kind = torch.rand(shape, generator=g, device=device)
    random_ids = torch.randint(vocab_size, shape, generator=g, device=device, dtype=input_ids.dtype)
    special = torch.zeros(shape, dtype=torch.bool, device=device)
    for s in special_ids:
        special = special | (input_ids == s)
    chosen = (u_pick < p) & ~special
    labels = torch.where(chosen, input_ids, torch.full_like(input_ids, -100))
    inputs = torch.where(chosen & (u_kind < 0.8), torch.full_like(input_ids, mask_id), input_ids)
    inputs = torch.where(chosen & (u_kind >= 0.8) & (u_kind < 0.9), random_ids, inputs)
    return inputs, labels
''',
    },
    {
        "name": "mlm_global_manual_seed",
        "cell": "mlm_mask",
        "clause": "use a local torch.Generator; do not call torch.manual_seed / the global RNG",
        "class": "randomness",
        "source": _MLM_HEAD + '''    torch.manual_seed(seed)                      # same seed -> same corruption
    shape = input_ids.shape
    device = input_ids.device
    u_pick = torch.rand(shape).to(device)
    u_kind = torch.rand(shape).to(device)
    random_ids = torch.randint(vocab_size, shape).to(device=device, dtype=input_ids.dtype)
    special = torch.zeros(shape, dtype=torch.bool, device=device)
    for s in special_ids:
        special = special | (input_ids == s)
    chosen = (u_pick < p) & ~special
    labels = torch.where(chosen, input_ids, torch.full_like(input_ids, -100))
    inputs = torch.where(chosen & (u_kind < 0.8), torch.full_like(input_ids, mask_id), input_ids)
    inputs = torch.where(chosen & (u_kind >= 0.8) & (u_kind < 0.9), random_ids, inputs)
    return inputs, labels
''',
    },
    {
        "name": "mlm_rate_hardcoded_015",
        "cell": "mlm_mask",
        "clause": "the selection probability is the argument p (default 0.15), not a constant",
        "class": "defaults",
        "source": _MLM_HEAD + '''    MLM_PROB = 0.15                               # BERT's masking rate
    g = torch.Generator().manual_seed(seed)
    shape = input_ids.shape
    device = input_ids.device
    u_pick = torch.rand(shape, generator=g).to(device)
    u_kind = torch.rand(shape, generator=g).to(device)
    random_ids = torch.randint(vocab_size, shape, generator=g).to(device=device, dtype=input_ids.dtype)
    special = torch.zeros(shape, dtype=torch.bool, device=device)
    for s in special_ids:
        special = special | (input_ids == s)
    chosen = (u_pick < MLM_PROB) & ~special
    labels = torch.where(chosen, input_ids, torch.full_like(input_ids, -100))
    inputs = torch.where(chosen & (u_kind < 0.8), torch.full_like(input_ids, mask_id), input_ids)
    inputs = torch.where(chosen & (u_kind >= 0.8) & (u_kind < 0.9), random_ids, inputs)
    return inputs, labels
''',
    },
    {
        "name": "mlm_labels_default_int64",
        "cell": "mlm_mask",
        "clause": "labels have input_ids' dtype (int32 input -> int32 labels)",
        "class": "dtype",
        "source": _MLM_HEAD + '''    g = torch.Generator().manual_seed(seed)
    shape = input_ids.shape
    device = input_ids.device
    u_pick = torch.rand(shape, generator=g).to(device)
    u_kind = torch.rand(shape, generator=g).to(device)
    random_ids = torch.randint(vocab_size, shape, generator=g).to(device=device, dtype=input_ids.dtype)
    special = torch.zeros(shape, dtype=torch.bool, device=device)
    for s in special_ids:
        special = special | (input_ids == s)
    chosen = (u_pick < p) & ~special
    labels = torch.full(shape, -100, device=device)               # ignore_index everywhere ...
    labels[chosen] = input_ids[chosen].long()                     # ... except the chosen tokens
    inputs = torch.where(chosen & (u_kind < 0.8), torch.full_like(input_ids, mask_id), input_ids)
    inputs = torch.where(chosen & (u_kind >= 0.8) & (u_kind < 0.9), random_ids, inputs)
    return inputs, labels
''',
    },
    # ------------------------------------------------------------------ gpt_model
    {
        "name": "gpt_positions_on_cpu",
        "cell": "gpt_model",
        "clause": "position indices are created on idx.device (torch.arange(T, device=idx.device))",
        "class": "device",
        "source": _GPT_BLOCK + '''
class GPTModel(nn.Module):
    """Decoder-only LM: forward(idx (B, T) long) -> logits (B, T, vocab_size)."""

    def __init__(
        self, vocab_size, context_length, d_model, num_heads, num_layers, d_ff, tie_weights=False
    ):
        super().__init__()
        self.tok_emb = nn.Embedding(vocab_size, d_model)
        self.pos_emb = nn.Embedding(context_length, d_model)
        self.blocks = nn.ModuleList([GPTBlock(d_model, num_heads, d_ff) for _ in range(num_layers)])
        self.final_norm = nn.LayerNorm(d_model)
        self.lm_head = nn.Linear(d_model, vocab_size, bias=False)
        if tie_weights:
            self.lm_head.weight = self.tok_emb.weight

    def forward(self, idx):
        B, T = idx.shape
        positions = torch.arange(T)
        x = self.tok_emb(idx) + self.pos_emb(positions)
        for block in self.blocks:
            x = block(x)
        return self.lm_head(self.final_norm(x))
''',
    },
    {
        "name": "gpt_ffn_width_fixed_4x",
        "cell": "gpt_model",
        "clause": "each GPTBlock uses FeedForward(d_model, d_ff) with the given d_ff (state_dict shapes)",
        "class": "logic",
        "source": '''class GPTBlock(nn.Module):
    """Pre-norm causal block: x + attn(norm1(x)), then x + ffn(norm2(x)). (B, T, d) -> (B, T, d)."""

    def __init__(self, d_model, num_heads, d_ff):
        super().__init__()
        self.norm1 = nn.LayerNorm(d_model)
        self.attn = MultiHeadAttention(d_model, num_heads, causal=True)
        self.norm2 = nn.LayerNorm(d_model)
        self.ffn = FeedForward(d_model, 4 * d_model)           # GPT-2 uses a 4x wider FFN

    def forward(self, x):
        x = x + self.attn(self.norm1(x))
        return x + self.ffn(self.norm2(x))


class GPTModel(nn.Module):
    """Decoder-only LM: forward(idx (B, T) long) -> logits (B, T, vocab_size)."""

    def __init__(
        self, vocab_size, context_length, d_model, num_heads, num_layers, d_ff, tie_weights=False
    ):
        super().__init__()
        self.tok_emb = nn.Embedding(vocab_size, d_model)
        self.pos_emb = nn.Embedding(context_length, d_model)
        self.blocks = nn.ModuleList([GPTBlock(d_model, num_heads, d_ff) for _ in range(num_layers)])
        self.final_norm = nn.LayerNorm(d_model)
        self.lm_head = nn.Linear(d_model, vocab_size, bias=False)
        if tie_weights:
            self.lm_head.weight = self.tok_emb.weight

    def forward(self, idx):
        T = idx.shape[1]
        x = self.tok_emb(idx) + self.pos_emb(torch.arange(T, device=idx.device))
        for block in self.blocks:
            x = block(x)
        return self.lm_head(self.final_norm(x))
''',
    },
    {
        "name": "gpt_token_embedding_scaled_sqrt_d",
        "cell": "gpt_model",
        "clause": "x_0 = E_tok[idx] + E_pos[0..T-1] (no sqrt(d_model) scaling of the token embedding)",
        "class": "logic",
        "source": _GPT_BLOCK + '''
class GPTModel(nn.Module):
    """Decoder-only LM: forward(idx (B, T) long) -> logits (B, T, vocab_size)."""

    def __init__(
        self, vocab_size, context_length, d_model, num_heads, num_layers, d_ff, tie_weights=False
    ):
        super().__init__()
        self.d_model = d_model
        self.tok_emb = nn.Embedding(vocab_size, d_model)
        self.pos_emb = nn.Embedding(context_length, d_model)
        self.blocks = nn.ModuleList([GPTBlock(d_model, num_heads, d_ff) for _ in range(num_layers)])
        self.final_norm = nn.LayerNorm(d_model)
        self.lm_head = nn.Linear(d_model, vocab_size, bias=False)
        if tie_weights:
            self.lm_head.weight = self.tok_emb.weight

    def forward(self, idx):
        T = idx.shape[1]
        tokens = self.tok_emb(idx) * math.sqrt(self.d_model)       # as in "Attention is all you need"
        x = tokens + self.pos_emb(torch.arange(T, device=idx.device))
        for block in self.blocks:
            x = block(x)
        return self.lm_head(self.final_norm(x))
''',
    },
    # ------------------------------------------------------------------ modern_block
    {
        "name": "rope_angles_in_input_dtype",
        "cell": "modern_block",
        "clause": "angles and rotation are computed in float32 or wider (bfloat16 inputs must not compute angles in bfloat16)",
        "class": "dtype",
        "source": '''def apply_rope(x, positions=None, base=10000.0):
    """RoPE with the "half" pairing (dim i with i + d/2): x (B, h, T, d_head) -> same shape."""
    T, d_head = x.shape[-2], x.shape[-1]
    if positions is None:
        positions = torch.arange(T, device=x.device)
    inv_freq = base ** (-torch.arange(0, d_head, 2, device=x.device, dtype=x.dtype) / d_head)
    angle = positions.to(device=x.device, dtype=x.dtype)[:, None] * inv_freq
    cos, sin = angle.cos(), angle.sin()
    a, b = x[..., : d_head // 2], x[..., d_head // 2 :]
    return torch.cat((a * cos - b * sin, a * sin + b * cos), dim=-1)

''' + _GQA_OK + _MODERN_OK,
    },
    {
        "name": "rope_default_positions_on_cpu",
        "cell": "modern_block",
        "clause": "new tensors (default positions, frequencies) are created on x.device",
        "class": "device",
        "source": '''def apply_rope(x, positions=None, base=10000.0):
    """RoPE with the "half" pairing (dim i with i + d/2): x (B, h, T, d_head) -> same shape."""
    T, d_head = x.shape[-2], x.shape[-1]
    work = torch.promote_types(x.dtype, torch.float32)
    if positions is None:
        positions = torch.arange(T)
    inv_freq = base ** (-torch.arange(0, d_head, 2, dtype=work) / d_head)
    angle = positions.to(work)[:, None] * inv_freq               # (T, d_head / 2)
    cos, sin = angle.cos(), angle.sin()
    xw = x.to(work)
    a, b = xw[..., : d_head // 2], xw[..., d_head // 2 :]
    return torch.cat((a * cos - b * sin, a * sin + b * cos), dim=-1).to(x.dtype)

''' + _GQA_OK + _MODERN_OK,
    },
    {
        "name": "rope_returns_float32_for_half_inputs",
        "cell": "modern_block",
        "clause": "apply_rope returns x.dtype (bfloat16 / float16 inputs are cast back)",
        "class": "dtype",
        "source": '''def apply_rope(x, positions=None, base=10000.0):
    """RoPE with the "half" pairing (dim i with i + d/2): x (B, h, T, d_head) -> same shape."""
    T, d_head = x.shape[-2], x.shape[-1]
    if x.dtype != torch.float64:
        x = x.float()                                            # rotate in float32 at least
    if positions is None:
        positions = torch.arange(T, device=x.device)
    inv_freq = base ** (-torch.arange(0, d_head, 2, device=x.device, dtype=x.dtype) / d_head)
    angle = positions.to(device=x.device, dtype=x.dtype)[:, None] * inv_freq
    cos, sin = angle.cos(), angle.sin()
    a, b = x[..., : d_head // 2], x[..., d_head // 2 :]
    return torch.cat((a * cos - b * sin, a * sin + b * cos), dim=-1)

''' + _GQA_OK + _MODERN_OK,
    },
    {
        "name": "rope_float32_angles_for_float64",
        "cell": "modern_block",
        "clause": "for float64 inputs the angles and rotation are computed in float64",
        "class": "dtype",
        "source": '''def apply_rope(x, positions=None, base=10000.0):
    """RoPE with the "half" pairing (dim i with i + d/2): x (B, h, T, d_head) -> same shape."""
    T, d_head = x.shape[-2], x.shape[-1]
    if positions is None:
        positions = torch.arange(T, device=x.device)
    inv_freq = base ** (-torch.arange(0, d_head, 2, device=x.device).float() / d_head)
    angle = positions.float()[:, None] * inv_freq                # float32 is plenty for angles
    cos, sin = angle.cos(), angle.sin()
    xw = x.float() if x.dtype != torch.float64 else x
    a, b = xw[..., : d_head // 2], xw[..., d_head // 2 :]
    out = torch.cat((a * cos - b * sin, a * sin + b * cos), dim=-1)
    return out.to(x.dtype)

''' + _GQA_OK + _MODERN_OK,
    },
    {
        "name": "gqa_mask_argument_ignored",
        "cell": "modern_block",
        "clause": "the padding keep-mask is ANDed with the causal mask",
        "class": "logic",
        "source": _ROPE_OK + _GQA_INIT + '''
    def forward(self, x, mask=None):
        B, T, _ = x.shape
        q = self.W_query(x).view(B, T, self.num_heads, self.d_head).transpose(1, 2)
        k = self.W_key(x).view(B, T, self.num_kv_heads, self.d_head).transpose(1, 2)
        v = self.W_value(x).view(B, T, self.num_kv_heads, self.d_head).transpose(1, 2)
        q = apply_rope(q, base=self.rope_base)
        k = apply_rope(k, base=self.rope_base)
        group = self.num_heads // self.num_kv_heads
        k = k.repeat_interleave(group, dim=1)
        v = v.repeat_interleave(group, dim=1)
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.d_head)
        pos = torch.arange(T, device=x.device)
        causal = pos[None, :] <= pos[:, None]
        scores = scores.masked_fill(~causal, torch.finfo(scores.dtype).min)
        weights = torch.softmax(scores, dim=-1)
        out = (weights @ v).transpose(1, 2).reshape(B, T, self.num_heads * self.d_head)
        return self.out_proj(out)

''' + _MODERN_OK,
    },
    {
        "name": "gqa_masked_fill_minus_1e9",
        "cell": "modern_block",
        "clause": "blocked scores are filled with torch.finfo(dtype).min (very large scores must stay blocked)",
        "class": "edge-values",
        "source": _ROPE_OK + _GQA_INIT + '''
    def forward(self, x, mask=None):
        B, T, _ = x.shape
        q = self.W_query(x).view(B, T, self.num_heads, self.d_head).transpose(1, 2)
        k = self.W_key(x).view(B, T, self.num_kv_heads, self.d_head).transpose(1, 2)
        v = self.W_value(x).view(B, T, self.num_kv_heads, self.d_head).transpose(1, 2)
        q = apply_rope(q, base=self.rope_base)
        k = apply_rope(k, base=self.rope_base)
        group = self.num_heads // self.num_kv_heads
        k = k.repeat_interleave(group, dim=1)
        v = v.repeat_interleave(group, dim=1)
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.d_head)
        pos = torch.arange(T, device=x.device)
        keep = pos[None, :] <= pos[:, None]
        if mask is not None:
            keep = keep & mask
        scores = scores.masked_fill(~keep, -1e9)
        weights = torch.softmax(scores, dim=-1)
        out = (weights @ v).transpose(1, 2).reshape(B, T, self.num_heads * self.d_head)
        return self.out_proj(out)

''' + _MODERN_OK,
    },
    {
        "name": "modern_eps_not_forwarded",
        "cell": "modern_block",
        "clause": "attn_norm and ffn_norm are RMSNorm(d_model, eps) with the given eps",
        "class": "defaults",
        "source": _ROPE_OK + _GQA_OK + '''class ModernBlock(nn.Module):
    """LLaMA-style block: x + attn(attn_norm(x)), then x + ffn(ffn_norm(x))."""

    def __init__(self, d_model, num_heads, num_kv_heads, d_ff, eps=1e-6, rope_base=10000.0):
        super().__init__()
        self.attn_norm = RMSNorm(d_model)
        self.attn = GroupedQueryAttention(d_model, num_heads, num_kv_heads, rope_base)
        self.ffn_norm = RMSNorm(d_model)
        self.ffn = SwiGLU(d_model, d_ff)

    def forward(self, x, mask=None):
        x = x + self.attn(self.attn_norm(x), mask=mask)
        return x + self.ffn(self.ffn_norm(x))
''',
    },
    {
        "name": "modern_rope_base_not_forwarded",
        "cell": "modern_block",
        "clause": "ModernBlock passes rope_base to GroupedQueryAttention / apply_rope",
        "class": "defaults",
        "source": _ROPE_OK + _GQA_OK + '''class ModernBlock(nn.Module):
    """LLaMA-style block: x + attn(attn_norm(x)), then x + ffn(ffn_norm(x))."""

    def __init__(self, d_model, num_heads, num_kv_heads, d_ff, eps=1e-6, rope_base=10000.0):
        super().__init__()
        self.attn_norm = RMSNorm(d_model, eps)
        self.attn = GroupedQueryAttention(d_model, num_heads, num_kv_heads)
        self.ffn_norm = RMSNorm(d_model, eps)
        self.ffn = SwiGLU(d_model, d_ff)

    def forward(self, x, mask=None):
        x = x + self.attn(self.attn_norm(x), mask=mask)
        return x + self.ffn(self.ffn_norm(x))
''',
    },
    {
        "name": "gqa_kv_heads_repeated_not_interleaved",
        "cell": "modern_block",
        "clause": "key/value head g serves query heads g*r .. g*r + r - 1 (repeat_interleave, not repeat)",
        "class": "logic",
        "source": _ROPE_OK + _GQA_INIT + '''
    def forward(self, x, mask=None):
        B, T, _ = x.shape
        q = self.W_query(x).view(B, T, self.num_heads, self.d_head).transpose(1, 2)
        k = self.W_key(x).view(B, T, self.num_kv_heads, self.d_head).transpose(1, 2)
        v = self.W_value(x).view(B, T, self.num_kv_heads, self.d_head).transpose(1, 2)
        q = apply_rope(q, base=self.rope_base)
        k = apply_rope(k, base=self.rope_base)
        group = self.num_heads // self.num_kv_heads
        k = k.repeat(1, group, 1, 1)                                # (B, h, T, d_head)
        v = v.repeat(1, group, 1, 1)
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.d_head)
        pos = torch.arange(T, device=x.device)
        keep = pos[None, :] <= pos[:, None]
        if mask is not None:
            keep = keep & mask
        scores = scores.masked_fill(~keep, torch.finfo(scores.dtype).min)
        weights = torch.softmax(scores, dim=-1)
        out = (weights @ v).transpose(1, 2).reshape(B, T, self.num_heads * self.d_head)
        return self.out_proj(out)

''' + _MODERN_OK,
    },
]

CORRECT = [
    {
        "name": "decoder_residual_helper",
        "cell": "decoder_block",
        "source": _DECODER_HEAD + '''
    def __init__(self, d_model, num_heads, d_ff, dropout=0.0, eps=1e-5):
        super().__init__()
        self.norm1 = nn.LayerNorm(d_model, eps=eps)
        self.self_attn = MultiHeadAttention(d_model, num_heads, dropout=dropout, causal=True)
        self.norm2 = nn.LayerNorm(d_model, eps=eps)
        self.cross_attn = MultiHeadAttention(d_model, num_heads, dropout=dropout, causal=False)
        self.norm3 = nn.LayerNorm(d_model, eps=eps)
        self.ffn = FeedForward(d_model, d_ff, dropout=dropout)
        self.dropout = nn.Dropout(dropout)

    def _residual(self, x, norm, sublayer):
        return x + self.dropout(sublayer(norm(x)))

    def forward(self, x, memory, self_mask=None, memory_mask=None):
        x = self._residual(x, self.norm1, lambda h: self.self_attn(h, mask=self_mask))
        x = self._residual(x, self.norm2, lambda h: self.cross_attn(h, memory, memory_mask))
        return self._residual(x, self.norm3, self.ffn)
''',
    },
    {
        "name": "mlm_random_ids_first_single_uniform",
        "cell": "mlm_mask",
        "source": _MLM_HEAD + '''    g = torch.Generator().manual_seed(seed)
    device = input_ids.device
    B, T = input_ids.shape
    random_ids = torch.randint(0, vocab_size, (B, T), generator=g)
    u = torch.rand(2, B, T, generator=g)
    random_ids = random_ids.to(device=device, dtype=input_ids.dtype)
    pick, kind = u.to(device).unbind(0)
    special = torch.isin(input_ids, torch.tensor(list(special_ids), dtype=input_ids.dtype, device=device))
    chosen = (pick < p) & ~special
    labels = input_ids.masked_fill(~chosen, -100)
    inputs = input_ids.clone()
    inputs = inputs.masked_fill(chosen & (kind < 0.8), mask_id)
    random_spot = chosen & (kind >= 0.8) & (kind < 0.9)
    inputs = torch.where(random_spot, random_ids, inputs)
    return inputs, labels
''',
    },
    {
        "name": "gpt_position_slice_of_weight",
        "cell": "gpt_model",
        "source": '''class GPTBlock(nn.Module):
    """Pre-norm causal block: x + attn(norm1(x)), then x + ffn(norm2(x)). (B, T, d) -> (B, T, d)."""

    def __init__(self, d_model, num_heads, d_ff):
        super().__init__()
        self.attn = MultiHeadAttention(d_model, num_heads, causal=True)
        self.ffn = FeedForward(d_model, d_ff)
        self.norm1 = nn.LayerNorm(d_model)
        self.norm2 = nn.LayerNorm(d_model)

    def forward(self, x):
        h = x + self.attn(self.norm1(x))
        return h + self.ffn(self.norm2(h))


class GPTModel(nn.Module):
    """Decoder-only LM: forward(idx (B, T) long) -> logits (B, T, vocab_size)."""

    def __init__(
        self, vocab_size, context_length, d_model, num_heads, num_layers, d_ff, tie_weights=False
    ):
        super().__init__()
        self.tok_emb = nn.Embedding(vocab_size, d_model)
        self.pos_emb = nn.Embedding(context_length, d_model)
        self.blocks = nn.ModuleList()
        for _ in range(num_layers):
            self.blocks.append(GPTBlock(d_model, num_heads, d_ff))
        self.final_norm = nn.LayerNorm(d_model)
        self.lm_head = nn.Linear(d_model, vocab_size, bias=False)
        if tie_weights:
            self.lm_head.weight = self.tok_emb.weight            # one shared Parameter

    def forward(self, idx):
        T = idx.size(1)
        x = self.tok_emb(idx) + self.pos_emb.weight[:T].unsqueeze(0)
        for block in self.blocks:
            x = block(x)
        x = self.final_norm(x)
        return x @ self.lm_head.weight.t()
''',
    },
    {
        "name": "modern_complex_rope_expand_gqa",
        "cell": "modern_block",
        "source": '''def apply_rope(x, positions=None, base=10000.0):
    """RoPE with the "half" pairing (dim i with i + d/2): x (B, h, T, d_head) -> same shape."""
    T, d_head = x.shape[-2], x.shape[-1]
    half = d_head // 2
    work = torch.float64 if x.dtype == torch.float64 else torch.float32
    if positions is None:
        positions = torch.arange(T, device=x.device)
    i = torch.arange(half, device=x.device, dtype=work)
    theta = positions.to(device=x.device, dtype=work)[:, None] * torch.pow(base, -2.0 * i / d_head)
    xw = x.to(work)
    z = torch.complex(xw[..., :half], xw[..., half:]) * torch.polar(torch.ones_like(theta), theta)
    return torch.cat((z.real, z.imag), dim=-1).to(x.dtype)


class GroupedQueryAttention(nn.Module):
    """Causal GQA with RoPE, no biases: forward(x (B, T, d_model), mask=None) -> (B, T, d_model)."""

    def __init__(self, d_model, num_heads, num_kv_heads, rope_base=10000.0):
        super().__init__()
        self.h, self.h_kv, self.base = num_heads, num_kv_heads, rope_base
        self.d_head = d_model // num_heads
        self.W_query = nn.Linear(d_model, d_model, bias=False)
        self.W_key = nn.Linear(d_model, num_kv_heads * self.d_head, bias=False)
        self.W_value = nn.Linear(d_model, num_kv_heads * self.d_head, bias=False)
        self.out_proj = nn.Linear(d_model, d_model, bias=False)

    def forward(self, x, mask=None):
        B, T, _ = x.shape
        r = self.h // self.h_kv
        q = self.W_query(x).view(B, T, self.h, self.d_head).transpose(1, 2)
        k = self.W_key(x).view(B, T, self.h_kv, self.d_head).transpose(1, 2)
        v = self.W_value(x).view(B, T, self.h_kv, self.d_head).transpose(1, 2)
        q, k = apply_rope(q, base=self.base), apply_rope(k, base=self.base)
        # kv head g -> query heads g*r ... g*r + r - 1
        k = k[:, :, None].expand(B, self.h_kv, r, T, self.d_head).reshape(B, self.h, T, self.d_head)
        v = v[:, :, None].expand(B, self.h_kv, r, T, self.d_head).reshape(B, self.h, T, self.d_head)
        scores = torch.matmul(q, k.transpose(-1, -2)) * (1.0 / math.sqrt(self.d_head))
        blocked = torch.ones(T, T, dtype=torch.bool, device=x.device).triu(1)
        if mask is not None:
            blocked = blocked | ~mask
        scores = scores.masked_fill(blocked, torch.finfo(scores.dtype).min)
        out = torch.matmul(scores.softmax(dim=-1), v)
        return self.out_proj(out.transpose(1, 2).reshape(B, T, -1))


class ModernBlock(nn.Module):
    """LLaMA-style block: x + attn(attn_norm(x)), then x + ffn(ffn_norm(x))."""

    def __init__(self, d_model, num_heads, num_kv_heads, d_ff, eps=1e-6, rope_base=10000.0):
        super().__init__()
        self.attn_norm = RMSNorm(d_model, eps=eps)
        self.attn = GroupedQueryAttention(d_model, num_heads, num_kv_heads, rope_base=rope_base)
        self.ffn_norm = RMSNorm(d_model, eps=eps)
        self.ffn = SwiGLU(d_model, d_ff)

    def forward(self, x, mask=None):
        h = x + self.attn(self.attn_norm(x), mask)
        return h + self.ffn(self.ffn_norm(h))
''',
    },
]
