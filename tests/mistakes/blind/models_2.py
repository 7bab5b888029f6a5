"""Blind mistakes and correct variants for the `models` assignment."""

MISTAKES = [
    {
        "name": 'dec_post_norm_residual',
        "cell": 'decoder_block',
        "clause": 'Pre-norm form: x <- x + Dropout(SelfAttn_causal(LN1(x))) etc.; the LayerNorm is applied to the sublayer input, not to the residual sum.',
        "class": 'logic',
        "source": r'''
class DecoderBlock(nn.Module):
    """Pre-norm decoder layer: causal self-attention, cross-attention on memory, FFN.

    forward(x (B, T, d_model), memory (B, S, d_model), self_mask=None, memory_mask=None)
    -> (B, T, d_model).
    """

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
    {
        "name": 'dec_memory_normalized_by_norm2',
        "cell": 'decoder_block',
        "clause": 'Cross-attention queries come from LN2(x); keys and values come from the encoder output memory itself.',
        "class": 'logic',
        "source": r'''
class DecoderBlock(nn.Module):
    """Pre-norm decoder layer: causal self-attention, cross-attention on memory, FFN.

    forward(x (B, T, d_model), memory (B, S, d_model), self_mask=None, memory_mask=None)
    -> (B, T, d_model).
    """

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
        x = x + self.dropout(self.cross_attn(self.norm2(x), context=self.norm2(memory), mask=memory_mask))
        x = x + self.dropout(self.ffn(self.norm3(x)))
        return x
''',
    },
    {
        "name": 'dec_no_dropout_on_ffn_output',
        "cell": 'decoder_block',
        "clause": 'Apply self.dropout once to EACH sublayer output (self-attn, cross-attn, FFN) in the order of the equations; train() output is compared exactly.',
        "class": 'randomness',
        "source": r'''
class DecoderBlock(nn.Module):
    """Pre-norm decoder layer: causal self-attention, cross-attention on memory, FFN.

    forward(x (B, T, d_model), memory (B, S, d_model), self_mask=None, memory_mask=None)
    -> (B, T, d_model).
    """

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
        x = x + self.dropout(self.cross_attn(self.norm2(x), context=memory, mask=memory_mask))
        x = x + self.ffn(self.norm3(x))  # FeedForward already has its own dropout
        return x
''',
    },
    {
        "name": 'dec_attention_dropout_not_passed',
        "cell": 'decoder_block',
        "clause": 'self_attn / cross_attn are MultiHeadAttention(d_model, num_heads, dropout, causal=...): pass dropout to both attentions and the FFN.',
        "class": 'defaults',
        "source": r'''
class DecoderBlock(nn.Module):
    """Pre-norm decoder layer: causal self-attention, cross-attention on memory, FFN.

    forward(x (B, T, d_model), memory (B, S, d_model), self_mask=None, memory_mask=None)
    -> (B, T, d_model).
    """

    def __init__(self, d_model, num_heads, d_ff, dropout=0.0, eps=1e-5):
        super().__init__()
        self.self_attn = MultiHeadAttention(d_model, num_heads, causal=True)
        self.cross_attn = MultiHeadAttention(d_model, num_heads)
        self.ffn = FeedForward(d_model, d_ff, dropout)
        self.norm1 = nn.LayerNorm(d_model, eps=eps)
        self.norm2 = nn.LayerNorm(d_model, eps=eps)
        self.norm3 = nn.LayerNorm(d_model, eps=eps)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x, memory, self_mask=None, memory_mask=None):
        x = x + self.dropout(self.self_attn(self.norm1(x), mask=self_mask))
        x = x + self.dropout(self.cross_attn(self.norm2(x), context=memory, mask=memory_mask))
        x = x + self.dropout(self.ffn(self.norm3(x)))
        return x
''',
    },
    {
        "name": 'dec_self_mask_ignored',
        "cell": 'decoder_block',
        "clause": 'self_mask is an extra keep-mask used in self-attention (together with the causal mask), e.g. target padding (B, 1, 1, T).',
        "class": 'logic',
        "source": r'''
class DecoderBlock(nn.Module):
    """Pre-norm decoder layer: causal self-attention, cross-attention on memory, FFN.

    forward(x (B, T, d_model), memory (B, S, d_model), self_mask=None, memory_mask=None)
    -> (B, T, d_model).
    """

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
        x = x + self.dropout(self.self_attn(self.norm1(x)))
        x = x + self.dropout(self.cross_attn(self.norm2(x), context=memory, mask=memory_mask))
        x = x + self.dropout(self.ffn(self.norm3(x)))
        return x
''',
    },
    {
        "name": 'dec_layernorm_eps_not_passed',
        "cell": 'decoder_block',
        "clause": "norm1, norm2, norm3 are nn.LayerNorm(d_model, eps=eps) using the constructor's eps.",
        "class": 'defaults',
        "source": r'''
class DecoderBlock(nn.Module):
    """Pre-norm decoder layer: causal self-attention, cross-attention on memory, FFN.

    forward(x (B, T, d_model), memory (B, S, d_model), self_mask=None, memory_mask=None)
    -> (B, T, d_model).
    """

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
        "name": 'dec_default_self_mask_on_cpu',
        "cell": 'decoder_block',
        "clause": "New tensors must be created on the input's device (checked with the 'meta' device and on GPU).",
        "class": 'device',
        "source": r'''
class DecoderBlock(nn.Module):
    """Pre-norm decoder layer: causal self-attention, cross-attention on memory, FFN.

    forward(x (B, T, d_model), memory (B, S, d_model), self_mask=None, memory_mask=None)
    -> (B, T, d_model).
    """

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
        if self_mask is None:  # no target padding: keep every key
            self_mask = torch.ones(1, 1, 1, x.shape[1], dtype=torch.bool)
        x = x + self.dropout(self.self_attn(self.norm1(x), mask=self_mask))
        x = x + self.dropout(self.cross_attn(self.norm2(x), context=memory, mask=memory_mask))
        x = x + self.dropout(self.ffn(self.norm3(x)))
        return x
''',
    },
    {
        "name": 'mlm_exact_round_p_n_per_row',
        "cell": 'mlm_mask',
        "clause": 'Each non-special token is chosen INDEPENDENTLY with probability p (Bernoulli); not exactly round(p * n) per sentence - the count must vary with the seed.',
        "class": 'probability-mass',
        "source": r'''
def mlm_mask(input_ids, vocab_size, mask_id, special_ids, seed, p=0.15):
    """BERT masked-LM corruption: (inputs (B, T), labels (B, T)), labels -100 where not chosen.

    Each non-special token is chosen independently with probability p; a chosen token becomes
    mask_id (80 %), a uniform random id (10 %) or stays (10 %). Draws from a CPU generator.
    """
    g = torch.Generator().manual_seed(seed)
    dev = input_ids.device
    shape = input_ids.shape
    special = torch.zeros(shape, dtype=torch.bool, device=dev)
    for s in special_ids:
        special = special | (input_ids == s)
    scores = torch.rand(shape, generator=g).to(dev).masked_fill(special, 2.0)
    n_ok = (~special).sum(dim=1, keepdim=True)
    n_pick = torch.round(n_ok * p).long()
    rank = scores.argsort(dim=1).argsort(dim=1)
    chosen = (rank < n_pick) & ~special
    u = torch.rand(shape, generator=g).to(dev)
    rand_ids = torch.randint(0, vocab_size, shape, generator=g).to(dev).to(input_ids.dtype)
    to_mask = chosen & (u < 0.8)
    to_rand = chosen & (u >= 0.8) & (u < 0.9)
    inputs = torch.where(to_mask, torch.full_like(input_ids, mask_id), input_ids)
    inputs = torch.where(to_rand, rand_ids, inputs)
    labels = torch.where(chosen, input_ids, torch.full_like(input_ids, -100))
    return inputs, labels
''',
    },
    {
        "name": 'mlm_generator_on_input_device',
        "cell": 'mlm_mask',
        "clause": 'All random numbers come from g = torch.Generator().manual_seed(seed) (a CPU generator) and are then moved to input_ids.device.',
        "class": 'device',
        "source": r'''
def mlm_mask(input_ids, vocab_size, mask_id, special_ids, seed, p=0.15):
    """BERT masked-LM corruption: (inputs (B, T), labels (B, T)), labels -100 where not chosen.

    Each non-special token is chosen independently with probability p; a chosen token becomes
    mask_id (80 %), a uniform random id (10 %) or stays (10 %). Draws from a CPU generator.
    """
    dev = input_ids.device
    g = torch.Generator(device=dev).manual_seed(seed)
    shape = input_ids.shape
    special = torch.zeros(shape, dtype=torch.bool, device=dev)
    for s in special_ids:
        special = special | (input_ids == s)
    chosen = (torch.rand(shape, generator=g) < p).to(dev) & ~special
    u = torch.rand(shape, generator=g).to(dev)
    rand_ids = torch.randint(0, vocab_size, shape, generator=g).to(dev).to(input_ids.dtype)
    to_mask = chosen & (u < 0.8)
    to_rand = chosen & (u >= 0.8) & (u < 0.9)
    inputs = torch.where(to_mask, torch.full_like(input_ids, mask_id), input_ids)
    inputs = torch.where(to_rand, rand_ids, inputs)
    labels = torch.where(chosen, input_ids, torch.full_like(input_ids, -100))
    return inputs, labels
''',
    },
    {
        "name": 'mlm_random_share_of_remainder_wrong',
        "cell": 'mlm_mask',
        "clause": 'A chosen token becomes mask_id with probability 0.8, a uniform random id with 0.1 and stays with 0.1.',
        "class": 'probability-mass',
        "source": r'''
def mlm_mask(input_ids, vocab_size, mask_id, special_ids, seed, p=0.15):
    """BERT masked-LM corruption: (inputs (B, T), labels (B, T)), labels -100 where not chosen.

    Each non-special token is chosen independently with probability p; a chosen token becomes
    mask_id (80 %), a uniform random id (10 %) or stays (10 %). Draws from a CPU generator.
    """
    g = torch.Generator().manual_seed(seed)
    dev = input_ids.device
    shape = input_ids.shape
    special = torch.zeros(shape, dtype=torch.bool, device=dev)
    for s in special_ids:
        special = special | (input_ids == s)
    chosen = (torch.rand(shape, generator=g) < p).to(dev) & ~special
    u = torch.rand(shape, generator=g).to(dev)
    rand_ids = torch.randint(0, vocab_size, shape, generator=g).to(dev).to(input_ids.dtype)
    to_mask = chosen & (u < 0.8)
    to_rand = chosen & ~to_mask & (torch.rand(shape, generator=g).to(dev) < 0.1)
    inputs = torch.where(to_mask, torch.full_like(input_ids, mask_id), input_ids)
    inputs = torch.where(to_rand, rand_ids, inputs)
    labels = torch.where(chosen, input_ids, torch.full_like(input_ids, -100))
    return inputs, labels
''',
    },
    {
        "name": 'mlm_randint_high_off_by_one',
        "cell": 'mlm_mask',
        "clause": 'The random replacement id is drawn uniformly from [0, vocab_size).',
        "class": 'integer-arithmetic',
        "source": r'''
def mlm_mask(input_ids, vocab_size, mask_id, special_ids, seed, p=0.15):
    """BERT masked-LM corruption: (inputs (B, T), labels (B, T)), labels -100 where not chosen.

    Each non-special token is chosen independently with probability p; a chosen token becomes
    mask_id (80 %), a uniform random id (10 %) or stays (10 %). Draws from a CPU generator.
    """
    g = torch.Generator().manual_seed(seed)
    dev = input_ids.device
    shape = input_ids.shape
    special = torch.zeros(shape, dtype=torch.bool, device=dev)
    for s in special_ids:
        special = special | (input_ids == s)
    chosen = (torch.rand(shape, generator=g) < p).to(dev) & ~special
    u = torch.rand(shape, generator=g).to(dev)
    rand_ids = torch.randint(0, vocab_size - 1, shape, generator=g).to(dev).to(input_ids.dtype)
    to_mask = chosen & (u < 0.8)
    to_rand = chosen & (u >= 0.8) & (u < 0.9)
    inputs = torch.where(to_mask, torch.full_like(input_ids, mask_id), input_ids)
    inputs = torch.where(to_rand, rand_ids, inputs)
    labels = torch.where(chosen, input_ids, torch.full_like(input_ids, -100))
    return inputs, labels
''',
    },
    {
        "name": 'mlm_random_ids_skip_special_range',
        "cell": 'mlm_mask',
        "clause": 'The random id is uniform over [0, vocab_size); it may coincide with the original or a special id (as in BERT).',
        "class": 'integer-arithmetic',
        "source": r'''
def mlm_mask(input_ids, vocab_size, mask_id, special_ids, seed, p=0.15):
    """BERT masked-LM corruption: (inputs (B, T), labels (B, T)), labels -100 where not chosen.

    Each non-special token is chosen independently with probability p; a chosen token becomes
    mask_id (80 %), a uniform random id (10 %) or stays (10 %). Draws from a CPU generator.
    """
    g = torch.Generator().manual_seed(seed)
    dev = input_ids.device
    shape = input_ids.shape
    special = torch.zeros(shape, dtype=torch.bool, device=dev)
    for s in special_ids:
        special = special | (input_ids == s)
    chosen = (torch.rand(shape, generator=g) < p).to(dev) & ~special
    u = torch.rand(shape, generator=g).to(dev)
    rand_ids = torch.randint(len(special_ids), vocab_size, shape, generator=g).to(dev).to(input_ids.dtype)
    to_mask = chosen & (u < 0.8)
    to_rand = chosen & (u >= 0.8) & (u < 0.9)
    inputs = torch.where(to_mask, torch.full_like(input_ids, mask_id), input_ids)
    inputs = torch.where(to_rand, rand_ids, inputs)
    labels = torch.where(chosen, input_ids, torch.full_like(input_ids, -100))
    return inputs, labels
''',
    },
    {
        "name": 'mlm_reseeded_generator_per_draw',
        "cell": 'mlm_mask',
        "clause": 'Draw all random numbers from ONE generator g = torch.Generator().manual_seed(seed) (selection and the 80/10/10 decision must be independent).',
        "class": 'randomness',
        "source": r'''
def mlm_mask(input_ids, vocab_size, mask_id, special_ids, seed, p=0.15):
    """BERT masked-LM corruption: (inputs (B, T), labels (B, T)), labels -100 where not chosen.

    Each non-special token is chosen independently with probability p; a chosen token becomes
    mask_id (80 %), a uniform random id (10 %) or stays (10 %). Draws from a CPU generator.
    """
    g = torch.Generator().manual_seed(seed)
    dev = input_ids.device
    shape = input_ids.shape
    special = torch.zeros(shape, dtype=torch.bool, device=dev)
    for s in special_ids:
        special = special | (input_ids == s)
    chosen = (torch.rand(shape, generator=g) < p).to(dev) & ~special
    u = torch.rand(shape, generator=torch.Generator().manual_seed(seed)).to(dev)
    rand_ids = torch.randint(0, vocab_size, shape, generator=g).to(dev).to(input_ids.dtype)
    to_mask = chosen & (u < 0.8)
    to_rand = chosen & (u >= 0.8) & (u < 0.9)
    inputs = torch.where(to_mask, torch.full_like(input_ids, mask_id), input_ids)
    inputs = torch.where(to_rand, rand_ids, inputs)
    labels = torch.where(chosen, input_ids, torch.full_like(input_ids, -100))
    return inputs, labels
''',
    },
    {
        "name": 'mlm_labels_default_long',
        "cell": 'mlm_mask',
        "clause": 'inputs and labels have the same shape, dtype AND device as input_ids (the dtype need not be torch.long).',
        "class": 'dtype',
        "source": r'''
def mlm_mask(input_ids, vocab_size, mask_id, special_ids, seed, p=0.15):
    """BERT masked-LM corruption: (inputs (B, T), labels (B, T)), labels -100 where not chosen.

    Each non-special token is chosen independently with probability p; a chosen token becomes
    mask_id (80 %), a uniform random id (10 %) or stays (10 %). Draws from a CPU generator.
    """
    g = torch.Generator().manual_seed(seed)
    dev = input_ids.device
    shape = input_ids.shape
    special = torch.zeros(shape, dtype=torch.bool, device=dev)
    for s in special_ids:
        special = special | (input_ids == s)
    chosen = (torch.rand(shape, generator=g) < p).to(dev) & ~special
    u = torch.rand(shape, generator=g).to(dev)
    rand_ids = torch.randint(0, vocab_size, shape, generator=g).to(dev).to(input_ids.dtype)
    to_mask = chosen & (u < 0.8)
    to_rand = chosen & (u >= 0.8) & (u < 0.9)
    inputs = torch.where(to_mask, torch.full_like(input_ids, mask_id), input_ids)
    inputs = torch.where(to_rand, rand_ids, inputs)
    labels = torch.full(shape, -100, device=dev)
    labels[chosen] = input_ids[chosen]
    return inputs, labels
''',
    },
    {
        "name": 'mlm_random_ids_promote_to_long',
        "cell": 'mlm_mask',
        "clause": "inputs keeps input_ids' dtype (which may be int32), not the int64 of torch.randint.",
        "class": 'dtype',
        "source": r'''
def mlm_mask(input_ids, vocab_size, mask_id, special_ids, seed, p=0.15):
    """BERT masked-LM corruption: (inputs (B, T), labels (B, T)), labels -100 where not chosen.

    Each non-special token is chosen independently with probability p; a chosen token becomes
    mask_id (80 %), a uniform random id (10 %) or stays (10 %). Draws from a CPU generator.
    """
    g = torch.Generator().manual_seed(seed)
    dev = input_ids.device
    shape = input_ids.shape
    special = torch.zeros(shape, dtype=torch.bool, device=dev)
    for s in special_ids:
        special = special | (input_ids == s)
    chosen = (torch.rand(shape, generator=g) < p).to(dev) & ~special
    u = torch.rand(shape, generator=g).to(dev)
    rand_ids = torch.randint(0, vocab_size, shape, generator=g).to(dev)
    to_mask = chosen & (u < 0.8)
    to_rand = chosen & (u >= 0.8) & (u < 0.9)
    inputs = torch.where(to_mask, torch.full_like(input_ids, mask_id), input_ids)
    inputs = torch.where(to_rand, rand_ids, inputs)
    labels = torch.where(chosen, input_ids, torch.full_like(input_ids, -100))
    return inputs, labels
''',
    },
    {
        "name": 'mlm_inplace_on_input_ids',
        "cell": 'mlm_mask',
        "clause": 'Do not modify input_ids in place.',
        "class": 'in-place',
        "source": r'''
def mlm_mask(input_ids, vocab_size, mask_id, special_ids, seed, p=0.15):
    """BERT masked-LM corruption: (inputs (B, T), labels (B, T)), labels -100 where not chosen.

    Each non-special token is chosen independently with probability p; a chosen token becomes
    mask_id (80 %), a uniform random id (10 %) or stays (10 %). Draws from a CPU generator.
    """
    g = torch.Generator().manual_seed(seed)
    dev = input_ids.device
    shape = input_ids.shape
    special = torch.zeros(shape, dtype=torch.bool, device=dev)
    for s in special_ids:
        special = special | (input_ids == s)
    chosen = (torch.rand(shape, generator=g) < p).to(dev) & ~special
    u = torch.rand(shape, generator=g).to(dev)
    rand_ids = torch.randint(0, vocab_size, shape, generator=g).to(dev).to(input_ids.dtype)
    to_mask = chosen & (u < 0.8)
    to_rand = chosen & (u >= 0.8) & (u < 0.9)
    labels = torch.where(chosen, input_ids, torch.full_like(input_ids, -100))
    inputs = input_ids
    inputs[to_mask] = mask_id
    inputs[to_rand] = rand_ids[to_rand]
    return inputs, labels
''',
    },
    {
        "name": 'mlm_selection_drawn_per_position_not_per_token',
        "cell": 'mlm_mask',
        "clause": 'Each non-special token of the (B, T) batch is chosen independently with probability p; rows must not share one selection pattern.',
        "class": 'batch-axis',
        "source": r'''
def mlm_mask(input_ids, vocab_size, mask_id, special_ids, seed, p=0.15):
    """BERT masked-LM corruption: (inputs (B, T), labels (B, T)), labels -100 where not chosen.

    Each non-special token is chosen independently with probability p; a chosen token becomes
    mask_id (80 %), a uniform random id (10 %) or stays (10 %). Draws from a CPU generator.
    """
    g = torch.Generator().manual_seed(seed)
    dev = input_ids.device
    shape = input_ids.shape
    special = torch.zeros(shape, dtype=torch.bool, device=dev)
    for s in special_ids:
        special = special | (input_ids == s)
    chosen = (torch.rand(shape[-1], generator=g) < p).to(dev) & ~special  # (T,) broadcast over rows
    u = torch.rand(shape, generator=g).to(dev)
    rand_ids = torch.randint(0, vocab_size, shape, generator=g).to(dev).to(input_ids.dtype)
    to_mask = chosen & (u < 0.8)
    to_rand = chosen & (u >= 0.8) & (u < 0.9)
    inputs = torch.where(to_mask, torch.full_like(input_ids, mask_id), input_ids)
    inputs = torch.where(to_rand, rand_ids, inputs)
    labels = torch.where(chosen, input_ids, torch.full_like(input_ids, -100))
    return inputs, labels
''',
    },
    {
        "name": 'mlm_global_manual_seed',
        "cell": 'mlm_mask',
        "clause": 'Do not use the global random state (torch.manual_seed); draw from the CPU generator g.',
        "class": 'randomness',
        "source": r'''
def mlm_mask(input_ids, vocab_size, mask_id, special_ids, seed, p=0.15):
    """BERT masked-LM corruption: (inputs (B, T), labels (B, T)), labels -100 where not chosen.

    Each non-special token is chosen independently with probability p; a chosen token becomes
    mask_id (80 %), a uniform random id (10 %) or stays (10 %). Draws from a CPU generator.
    """
    torch.manual_seed(seed)
    g = None
    dev = input_ids.device
    shape = input_ids.shape
    special = torch.zeros(shape, dtype=torch.bool, device=dev)
    for s in special_ids:
        special = special | (input_ids == s)
    chosen = (torch.rand(shape, generator=g) < p).to(dev) & ~special
    u = torch.rand(shape, generator=g).to(dev)
    rand_ids = torch.randint(0, vocab_size, shape, generator=g).to(dev).to(input_ids.dtype)
    to_mask = chosen & (u < 0.8)
    to_rand = chosen & (u >= 0.8) & (u < 0.9)
    inputs = torch.where(to_mask, torch.full_like(input_ids, mask_id), input_ids)
    inputs = torch.where(to_rand, rand_ids, inputs)
    labels = torch.where(chosen, input_ids, torch.full_like(input_ids, -100))
    return inputs, labels
''',
    },
    {
        "name": 'gpt_attention_not_causal',
        "cell": 'gpt_model',
        "clause": 'GPTBlock.attn is MultiHeadAttention(d_model, num_heads, causal=True); logits at t must not depend on later tokens.',
        "class": 'defaults',
        "source": r'''
class GPTBlock(nn.Module):
    """Pre-norm causal block: x + attn(norm1(x)), then x + ffn(norm2(x)). (B, T, d) -> (B, T, d)."""

    def __init__(self, d_model, num_heads, d_ff):
        super().__init__()
        self.norm1 = nn.LayerNorm(d_model)
        self.attn = MultiHeadAttention(d_model, num_heads)
        self.norm2 = nn.LayerNorm(d_model)
        self.ffn = FeedForward(d_model, d_ff)

    def forward(self, x):
        x = x + self.attn(self.norm1(x))
        x = x + self.ffn(self.norm2(x))
        return x


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
        pos = torch.arange(T, device=idx.device)
        x = self.tok_emb(idx) + self.pos_emb(pos)
        for block in self.blocks:
            x = block(x)
        return self.lm_head(self.final_norm(x))
''',
    },
    {
        "name": 'gpt_positions_right_aligned',
        "cell": 'gpt_model',
        "clause": 'x0 = E_tok[idx] + E_pos[0..T-1]: the first token always gets position 0, also when T < context_length.',
        "class": 'integer-arithmetic',
        "source": r'''
class GPTBlock(nn.Module):
    """Pre-norm causal block: x + attn(norm1(x)), then x + ffn(norm2(x)). (B, T, d) -> (B, T, d)."""

    def __init__(self, d_model, num_heads, d_ff):
        super().__init__()
        self.norm1 = nn.LayerNorm(d_model)
        self.attn = MultiHeadAttention(d_model, num_heads, causal=True)
        self.norm2 = nn.LayerNorm(d_model)
        self.ffn = FeedForward(d_model, d_ff)

    def forward(self, x):
        x = x + self.attn(self.norm1(x))
        x = x + self.ffn(self.norm2(x))
        return x


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
        x = self.tok_emb(idx) + self.pos_emb.weight[-T:]
        for block in self.blocks:
            x = block(x)
        return self.lm_head(self.final_norm(x))
''',
    },
    {
        "name": 'gpt_position_slice_uses_batch_dim',
        "cell": 'gpt_model',
        "clause": 'x0 = E_tok[idx] + E_pos[0..T-1] where T is idx.shape[1] (idx is (B, T)).',
        "class": 'batch-axis',
        "source": r'''
class GPTBlock(nn.Module):
    """Pre-norm causal block: x + attn(norm1(x)), then x + ffn(norm2(x)). (B, T, d) -> (B, T, d)."""

    def __init__(self, d_model, num_heads, d_ff):
        super().__init__()
        self.norm1 = nn.LayerNorm(d_model)
        self.attn = MultiHeadAttention(d_model, num_heads, causal=True)
        self.norm2 = nn.LayerNorm(d_model)
        self.ffn = FeedForward(d_model, d_ff)

    def forward(self, x):
        x = x + self.attn(self.norm1(x))
        x = x + self.ffn(self.norm2(x))
        return x


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
        x = self.tok_emb(idx) + self.pos_emb.weight[: len(idx)]
        for block in self.blocks:
            x = block(x)
        return self.lm_head(self.final_norm(x))
''',
    },
    {
        "name": 'gpt_tie_shares_data_not_parameter',
        "cell": 'gpt_model',
        "clause": 'tie_weights=True: self.lm_head.weight = self.tok_emb.weight, the SAME Parameter object (one entry in named_parameters, gradient is the sum of both uses).',
        "class": 'logic',
        "source": r'''
class GPTBlock(nn.Module):
    """Pre-norm causal block: x + attn(norm1(x)), then x + ffn(norm2(x)). (B, T, d) -> (B, T, d)."""

    def __init__(self, d_model, num_heads, d_ff):
        super().__init__()
        self.norm1 = nn.LayerNorm(d_model)
        self.attn = MultiHeadAttention(d_model, num_heads, causal=True)
        self.norm2 = nn.LayerNorm(d_model)
        self.ffn = FeedForward(d_model, d_ff)

    def forward(self, x):
        x = x + self.attn(self.norm1(x))
        x = x + self.ffn(self.norm2(x))
        return x


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
            self.lm_head.weight.data = self.tok_emb.weight.data

    def forward(self, idx):
        T = idx.shape[1]
        pos = torch.arange(T, device=idx.device)
        x = self.tok_emb(idx) + self.pos_emb(pos)
        for block in self.blocks:
            x = block(x)
        return self.lm_head(self.final_norm(x))
''',
    },
    {
        "name": 'gpt_same_block_repeated',
        "cell": 'gpt_model',
        "clause": 'blocks is an nn.ModuleList of num_layers separate GPTBlock layers (keys blocks.0..., blocks.1..., each with its own weights).',
        "class": 'logic',
        "source": r'''
class GPTBlock(nn.Module):
    """Pre-norm causal block: x + attn(norm1(x)), then x + ffn(norm2(x)). (B, T, d) -> (B, T, d)."""

    def __init__(self, d_model, num_heads, d_ff):
        super().__init__()
        self.norm1 = nn.LayerNorm(d_model)
        self.attn = MultiHeadAttention(d_model, num_heads, causal=True)
        self.norm2 = nn.LayerNorm(d_model)
        self.ffn = FeedForward(d_model, d_ff)

    def forward(self, x):
        x = x + self.attn(self.norm1(x))
        x = x + self.ffn(self.norm2(x))
        return x


class GPTModel(nn.Module):
    """Decoder-only LM: forward(idx (B, T) long) -> logits (B, T, vocab_size)."""

    def __init__(
        self, vocab_size, context_length, d_model, num_heads, num_layers, d_ff, tie_weights=False
    ):
        super().__init__()
        self.tok_emb = nn.Embedding(vocab_size, d_model)
        self.pos_emb = nn.Embedding(context_length, d_model)
        self.blocks = nn.ModuleList([GPTBlock(d_model, num_heads, d_ff)] * num_layers)
        self.final_norm = nn.LayerNorm(d_model)
        self.lm_head = nn.Linear(d_model, vocab_size, bias=False)
        if tie_weights:
            self.lm_head.weight = self.tok_emb.weight

    def forward(self, idx):
        T = idx.shape[1]
        pos = torch.arange(T, device=idx.device)
        x = self.tok_emb(idx) + self.pos_emb(pos)
        for block in self.blocks:
            x = block(x)
        return self.lm_head(self.final_norm(x))
''',
    },
    {
        "name": 'gpt_positions_start_at_one',
        "cell": 'gpt_model',
        "clause": 'Positions are 0..T-1 (E_pos[0..T-1]) and T may equal context_length.',
        "class": 'integer-arithmetic',
        "source": r'''
class GPTBlock(nn.Module):
    """Pre-norm causal block: x + attn(norm1(x)), then x + ffn(norm2(x)). (B, T, d) -> (B, T, d)."""

    def __init__(self, d_model, num_heads, d_ff):
        super().__init__()
        self.norm1 = nn.LayerNorm(d_model)
        self.attn = MultiHeadAttention(d_model, num_heads, causal=True)
        self.norm2 = nn.LayerNorm(d_model)
        self.ffn = FeedForward(d_model, d_ff)

    def forward(self, x):
        x = x + self.attn(self.norm1(x))
        x = x + self.ffn(self.norm2(x))
        return x


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
        pos = torch.arange(1, T + 1, device=idx.device)
        x = self.tok_emb(idx) + self.pos_emb(pos)
        for block in self.blocks:
            x = block(x)
        return self.lm_head(self.final_norm(x))
''',
    },
    {
        "name": 'gpt_ffn_uses_norm1',
        "cell": 'gpt_model',
        "clause": 'GPTBlock: x + attn(norm1(x)), then x + ffn(norm2(x)).',
        "class": 'logic',
        "source": r'''
class GPTBlock(nn.Module):
    """Pre-norm causal block: x + attn(norm1(x)), then x + ffn(norm2(x)). (B, T, d) -> (B, T, d)."""

    def __init__(self, d_model, num_heads, d_ff):
        super().__init__()
        self.norm1 = nn.LayerNorm(d_model)
        self.attn = MultiHeadAttention(d_model, num_heads, causal=True)
        self.norm2 = nn.LayerNorm(d_model)
        self.ffn = FeedForward(d_model, d_ff)

    def forward(self, x):
        x = x + self.attn(self.norm1(x))
        x = x + self.ffn(self.norm1(x))
        return x


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
        pos = torch.arange(T, device=idx.device)
        x = self.tok_emb(idx) + self.pos_emb(pos)
        for block in self.blocks:
            x = block(x)
        return self.lm_head(self.final_norm(x))
''',
    },
    {
        "name": 'gpt_lm_head_default_bias',
        "cell": 'gpt_model',
        "clause": 'lm_head is nn.Linear(d_model, vocab_size, bias=False): no parameters beyond the table (strict load).',
        "class": 'defaults',
        "source": r'''
class GPTBlock(nn.Module):
    """Pre-norm causal block: x + attn(norm1(x)), then x + ffn(norm2(x)). (B, T, d) -> (B, T, d)."""

    def __init__(self, d_model, num_heads, d_ff):
        super().__init__()
        self.norm1 = nn.LayerNorm(d_model)
        self.attn = MultiHeadAttention(d_model, num_heads, causal=True)
        self.norm2 = nn.LayerNorm(d_model)
        self.ffn = FeedForward(d_model, d_ff)

    def forward(self, x):
        x = x + self.attn(self.norm1(x))
        x = x + self.ffn(self.norm2(x))
        return x


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
        self.lm_head = nn.Linear(d_model, vocab_size)
        if tie_weights:
            self.lm_head.weight = self.tok_emb.weight

    def forward(self, idx):
        T = idx.shape[1]
        pos = torch.arange(T, device=idx.device)
        x = self.tok_emb(idx) + self.pos_emb(pos)
        for block in self.blocks:
            x = block(x)
        return self.lm_head(self.final_norm(x))
''',
    },
    {
        "name": 'rope_interleaved_pairs',
        "cell": 'modern_block',
        "clause": "Dimension i is paired with i + d_head/2 ('half' pairing, HF rotate_half), not RoFormer's (2i, 2i+1).",
        "class": 'input-layout',
        "source": r'''
def apply_rope(x, positions=None, base=10000.0):
    """RoPE with the "half" pairing (dim i with i + d/2): x (B, h, T, d_head) -> same shape."""
    T, d = x.shape[-2], x.shape[-1]
    ct = torch.promote_types(x.dtype, torch.float32)
    if positions is None:
        positions = torch.arange(T, device=x.device)
    half = d // 2
    inv = base ** (-torch.arange(half, device=x.device, dtype=ct) * 2 / d)
    theta = positions.to(ct)[:, None] * inv[None, :]  # (T, half)
    cos, sin = theta.cos(), theta.sin()
    xf = x.to(ct)
    a, b = xf[..., 0::2], xf[..., 1::2]
    out = torch.stack([a * cos - b * sin, a * sin + b * cos], dim=-1).flatten(-2)
    return out.to(x.dtype)


class GroupedQueryAttention(nn.Module):
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

    def forward(self, x, mask=None):
        B, T, _ = x.shape
        q = self.W_query(x).view(B, T, self.num_heads, self.d_head).transpose(1, 2)
        k = self.W_key(x).view(B, T, self.num_kv_heads, self.d_head).transpose(1, 2)
        v = self.W_value(x).view(B, T, self.num_kv_heads, self.d_head).transpose(1, 2)
        q = apply_rope(q, base=self.rope_base)
        k = apply_rope(k, base=self.rope_base)
        r = self.num_heads // self.num_kv_heads
        k = k.repeat_interleave(r, dim=1)
        v = v.repeat_interleave(r, dim=1)
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.d_head)
        i = torch.arange(T, device=x.device)
        keep = i[None, :] <= i[:, None]
        if mask is not None:
            keep = keep & mask
        scores = scores.masked_fill(~keep, torch.finfo(scores.dtype).min)
        w = torch.softmax(scores, dim=-1)
        out = (w @ v).transpose(1, 2).reshape(B, T, self.num_heads * self.d_head)
        return self.out_proj(out)


class ModernBlock(nn.Module):
    """LLaMA-style block: x + attn(attn_norm(x)), then x + ffn(ffn_norm(x))."""

    def __init__(self, d_model, num_heads, num_kv_heads, d_ff, eps=1e-6, rope_base=10000.0):
        super().__init__()
        self.attn_norm = RMSNorm(d_model, eps)
        self.attn = GroupedQueryAttention(d_model, num_heads, num_kv_heads, rope_base)
        self.ffn_norm = RMSNorm(d_model, eps)
        self.ffn = SwiGLU(d_model, d_ff)

    def forward(self, x, mask=None):
        x = x + self.attn(self.attn_norm(x), mask=mask)
        x = x + self.ffn(self.ffn_norm(x))
        return x
''',
    },
    {
        "name": 'rope_angles_in_input_dtype',
        "cell": 'modern_block',
        "clause": 'Compute angles and the rotation in float32 or wider (float64 for float64 input), then cast back to x.dtype; bfloat16 angles are badly wrong at large positions.',
        "class": 'dtype',
        "source": r'''
def apply_rope(x, positions=None, base=10000.0):
    """RoPE with the "half" pairing (dim i with i + d/2): x (B, h, T, d_head) -> same shape."""
    T, d = x.shape[-2], x.shape[-1]
    ct = x.dtype
    if positions is None:
        positions = torch.arange(T, device=x.device)
    half = d // 2
    inv = base ** (-torch.arange(half, device=x.device, dtype=ct) * 2 / d)
    theta = positions.to(ct)[:, None] * inv[None, :]  # (T, half)
    cos, sin = theta.cos(), theta.sin()
    xf = x.to(ct)
    a, b = xf[..., :half], xf[..., half:]
    out = torch.cat([a * cos - b * sin, a * sin + b * cos], dim=-1)
    return out.to(x.dtype)


class GroupedQueryAttention(nn.Module):
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

    def forward(self, x, mask=None):
        B, T, _ = x.shape
        q = self.W_query(x).view(B, T, self.num_heads, self.d_head).transpose(1, 2)
        k = self.W_key(x).view(B, T, self.num_kv_heads, self.d_head).transpose(1, 2)
        v = self.W_value(x).view(B, T, self.num_kv_heads, self.d_head).transpose(1, 2)
        q = apply_rope(q, base=self.rope_base)
        k = apply_rope(k, base=self.rope_base)
        r = self.num_heads // self.num_kv_heads
        k = k.repeat_interleave(r, dim=1)
        v = v.repeat_interleave(r, dim=1)
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.d_head)
        i = torch.arange(T, device=x.device)
        keep = i[None, :] <= i[:, None]
        if mask is not None:
            keep = keep & mask
        scores = scores.masked_fill(~keep, torch.finfo(scores.dtype).min)
        w = torch.softmax(scores, dim=-1)
        out = (w @ v).transpose(1, 2).reshape(B, T, self.num_heads * self.d_head)
        return self.out_proj(out)


class ModernBlock(nn.Module):
    """LLaMA-style block: x + attn(attn_norm(x)), then x + ffn(ffn_norm(x))."""

    def __init__(self, d_model, num_heads, num_kv_heads, d_ff, eps=1e-6, rope_base=10000.0):
        super().__init__()
        self.attn_norm = RMSNorm(d_model, eps)
        self.attn = GroupedQueryAttention(d_model, num_heads, num_kv_heads, rope_base)
        self.ffn_norm = RMSNorm(d_model, eps)
        self.ffn = SwiGLU(d_model, d_ff)

    def forward(self, x, mask=None):
        x = x + self.attn(self.attn_norm(x), mask=mask)
        x = x + self.ffn(self.ffn_norm(x))
        return x
''',
    },
    {
        "name": 'rope_always_float32',
        "cell": 'modern_block',
        "clause": 'Angles and rotation in at least float32 - in float64 when the input is float64.',
        "class": 'dtype',
        "source": r'''
def apply_rope(x, positions=None, base=10000.0):
    """RoPE with the "half" pairing (dim i with i + d/2): x (B, h, T, d_head) -> same shape."""
    T, d = x.shape[-2], x.shape[-1]
    ct = torch.float32
    if positions is None:
        positions = torch.arange(T, device=x.device)
    half = d // 2
    inv = base ** (-torch.arange(half, device=x.device, dtype=ct) * 2 / d)
    theta = positions.to(ct)[:, None] * inv[None, :]  # (T, half)
    cos, sin = theta.cos(), theta.sin()
    xf = x.to(ct)
    a, b = xf[..., :half], xf[..., half:]
    out = torch.cat([a * cos - b * sin, a * sin + b * cos], dim=-1)
    return out.to(x.dtype)


class GroupedQueryAttention(nn.Module):
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

    def forward(self, x, mask=None):
        B, T, _ = x.shape
        q = self.W_query(x).view(B, T, self.num_heads, self.d_head).transpose(1, 2)
        k = self.W_key(x).view(B, T, self.num_kv_heads, self.d_head).transpose(1, 2)
        v = self.W_value(x).view(B, T, self.num_kv_heads, self.d_head).transpose(1, 2)
        q = apply_rope(q, base=self.rope_base)
        k = apply_rope(k, base=self.rope_base)
        r = self.num_heads // self.num_kv_heads
        k = k.repeat_interleave(r, dim=1)
        v = v.repeat_interleave(r, dim=1)
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.d_head)
        i = torch.arange(T, device=x.device)
        keep = i[None, :] <= i[:, None]
        if mask is not None:
            keep = keep & mask
        scores = scores.masked_fill(~keep, torch.finfo(scores.dtype).min)
        w = torch.softmax(scores, dim=-1)
        out = (w @ v).transpose(1, 2).reshape(B, T, self.num_heads * self.d_head)
        return self.out_proj(out)


class ModernBlock(nn.Module):
    """LLaMA-style block: x + attn(attn_norm(x)), then x + ffn(ffn_norm(x))."""

    def __init__(self, d_model, num_heads, num_kv_heads, d_ff, eps=1e-6, rope_base=10000.0):
        super().__init__()
        self.attn_norm = RMSNorm(d_model, eps)
        self.attn = GroupedQueryAttention(d_model, num_heads, num_kv_heads, rope_base)
        self.ffn_norm = RMSNorm(d_model, eps)
        self.ffn = SwiGLU(d_model, d_ff)

    def forward(self, x, mask=None):
        x = x + self.attn(self.attn_norm(x), mask=mask)
        x = x + self.ffn(self.ffn_norm(x))
        return x
''',
    },
    {
        "name": 'rope_default_positions_on_cpu',
        "cell": 'modern_block',
        "clause": "positions defaults to 0..T-1; new tensors go on the input's device.",
        "class": 'device',
        "source": r'''
def apply_rope(x, positions=None, base=10000.0):
    """RoPE with the "half" pairing (dim i with i + d/2): x (B, h, T, d_head) -> same shape."""
    T, d = x.shape[-2], x.shape[-1]
    ct = torch.promote_types(x.dtype, torch.float32)
    if positions is None:
        positions = torch.arange(T)
    half = d // 2
    inv = base ** (-torch.arange(half, device=x.device, dtype=ct) * 2 / d)
    theta = positions.to(ct)[:, None] * inv[None, :]  # (T, half)
    cos, sin = theta.cos(), theta.sin()
    xf = x.to(ct)
    a, b = xf[..., :half], xf[..., half:]
    out = torch.cat([a * cos - b * sin, a * sin + b * cos], dim=-1)
    return out.to(x.dtype)


class GroupedQueryAttention(nn.Module):
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

    def forward(self, x, mask=None):
        B, T, _ = x.shape
        q = self.W_query(x).view(B, T, self.num_heads, self.d_head).transpose(1, 2)
        k = self.W_key(x).view(B, T, self.num_kv_heads, self.d_head).transpose(1, 2)
        v = self.W_value(x).view(B, T, self.num_kv_heads, self.d_head).transpose(1, 2)
        q = apply_rope(q, base=self.rope_base)
        k = apply_rope(k, base=self.rope_base)
        r = self.num_heads // self.num_kv_heads
        k = k.repeat_interleave(r, dim=1)
        v = v.repeat_interleave(r, dim=1)
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.d_head)
        i = torch.arange(T, device=x.device)
        keep = i[None, :] <= i[:, None]
        if mask is not None:
            keep = keep & mask
        scores = scores.masked_fill(~keep, torch.finfo(scores.dtype).min)
        w = torch.softmax(scores, dim=-1)
        out = (w @ v).transpose(1, 2).reshape(B, T, self.num_heads * self.d_head)
        return self.out_proj(out)


class ModernBlock(nn.Module):
    """LLaMA-style block: x + attn(attn_norm(x)), then x + ffn(ffn_norm(x))."""

    def __init__(self, d_model, num_heads, num_kv_heads, d_ff, eps=1e-6, rope_base=10000.0):
        super().__init__()
        self.attn_norm = RMSNorm(d_model, eps)
        self.attn = GroupedQueryAttention(d_model, num_heads, num_kv_heads, rope_base)
        self.ffn_norm = RMSNorm(d_model, eps)
        self.ffn = SwiGLU(d_model, d_ff)

    def forward(self, x, mask=None):
        x = x + self.attn(self.attn_norm(x), mask=mask)
        x = x + self.ffn(self.ffn_norm(x))
        return x
''',
    },
    {
        "name": 'gqa_repeat_tiles_kv_heads',
        "cell": 'modern_block',
        "clause": 'KV head g is used by query heads g*r ... g*r + r - 1 (repeat_interleave(r, dim=1)), not tiled.',
        "class": 'input-layout',
        "source": r'''
def apply_rope(x, positions=None, base=10000.0):
    """RoPE with the "half" pairing (dim i with i + d/2): x (B, h, T, d_head) -> same shape."""
    T, d = x.shape[-2], x.shape[-1]
    ct = torch.promote_types(x.dtype, torch.float32)
    if positions is None:
        positions = torch.arange(T, device=x.device)
    half = d // 2
    inv = base ** (-torch.arange(half, device=x.device, dtype=ct) * 2 / d)
    theta = positions.to(ct)[:, None] * inv[None, :]  # (T, half)
    cos, sin = theta.cos(), theta.sin()
    xf = x.to(ct)
    a, b = xf[..., :half], xf[..., half:]
    out = torch.cat([a * cos - b * sin, a * sin + b * cos], dim=-1)
    return out.to(x.dtype)


class GroupedQueryAttention(nn.Module):
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

    def forward(self, x, mask=None):
        B, T, _ = x.shape
        q = self.W_query(x).view(B, T, self.num_heads, self.d_head).transpose(1, 2)
        k = self.W_key(x).view(B, T, self.num_kv_heads, self.d_head).transpose(1, 2)
        v = self.W_value(x).view(B, T, self.num_kv_heads, self.d_head).transpose(1, 2)
        q = apply_rope(q, base=self.rope_base)
        k = apply_rope(k, base=self.rope_base)
        r = self.num_heads // self.num_kv_heads
        k = k.repeat(1, r, 1, 1)
        v = v.repeat(1, r, 1, 1)
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.d_head)
        i = torch.arange(T, device=x.device)
        keep = i[None, :] <= i[:, None]
        if mask is not None:
            keep = keep & mask
        scores = scores.masked_fill(~keep, torch.finfo(scores.dtype).min)
        w = torch.softmax(scores, dim=-1)
        out = (w @ v).transpose(1, 2).reshape(B, T, self.num_heads * self.d_head)
        return self.out_proj(out)


class ModernBlock(nn.Module):
    """LLaMA-style block: x + attn(attn_norm(x)), then x + ffn(ffn_norm(x))."""

    def __init__(self, d_model, num_heads, num_kv_heads, d_ff, eps=1e-6, rope_base=10000.0):
        super().__init__()
        self.attn_norm = RMSNorm(d_model, eps)
        self.attn = GroupedQueryAttention(d_model, num_heads, num_kv_heads, rope_base)
        self.ffn_norm = RMSNorm(d_model, eps)
        self.ffn = SwiGLU(d_model, d_ff)

    def forward(self, x, mask=None):
        x = x + self.attn(self.attn_norm(x), mask=mask)
        x = x + self.ffn(self.ffn_norm(x))
        return x
''',
    },
    {
        "name": 'gqa_fill_neg_inf',
        "cell": 'modern_block',
        "clause": 'Blocked scores are filled with torch.finfo(dtype).min before the softmax (a fully blocked row must not become NaN).',
        "class": 'edge-values',
        "source": r'''
def apply_rope(x, positions=None, base=10000.0):
    """RoPE with the "half" pairing (dim i with i + d/2): x (B, h, T, d_head) -> same shape."""
    T, d = x.shape[-2], x.shape[-1]
    ct = torch.promote_types(x.dtype, torch.float32)
    if positions is None:
        positions = torch.arange(T, device=x.device)
    half = d // 2
    inv = base ** (-torch.arange(half, device=x.device, dtype=ct) * 2 / d)
    theta = positions.to(ct)[:, None] * inv[None, :]  # (T, half)
    cos, sin = theta.cos(), theta.sin()
    xf = x.to(ct)
    a, b = xf[..., :half], xf[..., half:]
    out = torch.cat([a * cos - b * sin, a * sin + b * cos], dim=-1)
    return out.to(x.dtype)


class GroupedQueryAttention(nn.Module):
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

    def forward(self, x, mask=None):
        B, T, _ = x.shape
        q = self.W_query(x).view(B, T, self.num_heads, self.d_head).transpose(1, 2)
        k = self.W_key(x).view(B, T, self.num_kv_heads, self.d_head).transpose(1, 2)
        v = self.W_value(x).view(B, T, self.num_kv_heads, self.d_head).transpose(1, 2)
        q = apply_rope(q, base=self.rope_base)
        k = apply_rope(k, base=self.rope_base)
        r = self.num_heads // self.num_kv_heads
        k = k.repeat_interleave(r, dim=1)
        v = v.repeat_interleave(r, dim=1)
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.d_head)
        i = torch.arange(T, device=x.device)
        keep = i[None, :] <= i[:, None]
        if mask is not None:
            keep = keep & mask
        scores = scores.masked_fill(~keep, float("-inf"))
        w = torch.softmax(scores, dim=-1)
        out = (w @ v).transpose(1, 2).reshape(B, T, self.num_heads * self.d_head)
        return self.out_proj(out)


class ModernBlock(nn.Module):
    """LLaMA-style block: x + attn(attn_norm(x)), then x + ffn(ffn_norm(x))."""

    def __init__(self, d_model, num_heads, num_kv_heads, d_ff, eps=1e-6, rope_base=10000.0):
        super().__init__()
        self.attn_norm = RMSNorm(d_model, eps)
        self.attn = GroupedQueryAttention(d_model, num_heads, num_kv_heads, rope_base)
        self.ffn_norm = RMSNorm(d_model, eps)
        self.ffn = SwiGLU(d_model, d_ff)

    def forward(self, x, mask=None):
        x = x + self.attn(self.attn_norm(x), mask=mask)
        x = x + self.ffn(self.ffn_norm(x))
        return x
''',
    },
    {
        "name": 'gqa_causal_mask_on_cpu',
        "cell": 'modern_block',
        "clause": 'New tensors (the causal mask) are created on x.device.',
        "class": 'device',
        "source": r'''
def apply_rope(x, positions=None, base=10000.0):
    """RoPE with the "half" pairing (dim i with i + d/2): x (B, h, T, d_head) -> same shape."""
    T, d = x.shape[-2], x.shape[-1]
    ct = torch.promote_types(x.dtype, torch.float32)
    if positions is None:
        positions = torch.arange(T, device=x.device)
    half = d // 2
    inv = base ** (-torch.arange(half, device=x.device, dtype=ct) * 2 / d)
    theta = positions.to(ct)[:, None] * inv[None, :]  # (T, half)
    cos, sin = theta.cos(), theta.sin()
    xf = x.to(ct)
    a, b = xf[..., :half], xf[..., half:]
    out = torch.cat([a * cos - b * sin, a * sin + b * cos], dim=-1)
    return out.to(x.dtype)


class GroupedQueryAttention(nn.Module):
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

    def forward(self, x, mask=None):
        B, T, _ = x.shape
        q = self.W_query(x).view(B, T, self.num_heads, self.d_head).transpose(1, 2)
        k = self.W_key(x).view(B, T, self.num_kv_heads, self.d_head).transpose(1, 2)
        v = self.W_value(x).view(B, T, self.num_kv_heads, self.d_head).transpose(1, 2)
        q = apply_rope(q, base=self.rope_base)
        k = apply_rope(k, base=self.rope_base)
        r = self.num_heads // self.num_kv_heads
        k = k.repeat_interleave(r, dim=1)
        v = v.repeat_interleave(r, dim=1)
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.d_head)
        keep = torch.ones(T, T, dtype=torch.bool).tril()
        if mask is not None:
            keep = keep & mask
        scores = scores.masked_fill(~keep, torch.finfo(scores.dtype).min)
        w = torch.softmax(scores, dim=-1)
        out = (w @ v).transpose(1, 2).reshape(B, T, self.num_heads * self.d_head)
        return self.out_proj(out)


class ModernBlock(nn.Module):
    """LLaMA-style block: x + attn(attn_norm(x)), then x + ffn(ffn_norm(x))."""

    def __init__(self, d_model, num_heads, num_kv_heads, d_ff, eps=1e-6, rope_base=10000.0):
        super().__init__()
        self.attn_norm = RMSNorm(d_model, eps)
        self.attn = GroupedQueryAttention(d_model, num_heads, num_kv_heads, rope_base)
        self.ffn_norm = RMSNorm(d_model, eps)
        self.ffn = SwiGLU(d_model, d_ff)

    def forward(self, x, mask=None):
        x = x + self.attn(self.attn_norm(x), mask=mask)
        x = x + self.ffn(self.ffn_norm(x))
        return x
''',
    },
    {
        "name": 'gqa_mask_and_in_place',
        "cell": 'modern_block',
        "clause": "Combine the causal mask and `mask` with a logical AND into a new tensor; the caller's mask must not change.",
        "class": 'in-place',
        "source": r'''
def apply_rope(x, positions=None, base=10000.0):
    """RoPE with the "half" pairing (dim i with i + d/2): x (B, h, T, d_head) -> same shape."""
    T, d = x.shape[-2], x.shape[-1]
    ct = torch.promote_types(x.dtype, torch.float32)
    if positions is None:
        positions = torch.arange(T, device=x.device)
    half = d // 2
    inv = base ** (-torch.arange(half, device=x.device, dtype=ct) * 2 / d)
    theta = positions.to(ct)[:, None] * inv[None, :]  # (T, half)
    cos, sin = theta.cos(), theta.sin()
    xf = x.to(ct)
    a, b = xf[..., :half], xf[..., half:]
    out = torch.cat([a * cos - b * sin, a * sin + b * cos], dim=-1)
    return out.to(x.dtype)


class GroupedQueryAttention(nn.Module):
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

    def forward(self, x, mask=None):
        B, T, _ = x.shape
        q = self.W_query(x).view(B, T, self.num_heads, self.d_head).transpose(1, 2)
        k = self.W_key(x).view(B, T, self.num_kv_heads, self.d_head).transpose(1, 2)
        v = self.W_value(x).view(B, T, self.num_kv_heads, self.d_head).transpose(1, 2)
        q = apply_rope(q, base=self.rope_base)
        k = apply_rope(k, base=self.rope_base)
        r = self.num_heads // self.num_kv_heads
        k = k.repeat_interleave(r, dim=1)
        v = v.repeat_interleave(r, dim=1)
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.d_head)
        i = torch.arange(T, device=x.device)
        keep = i[None, :] <= i[:, None]
        if mask is not None:
            mask &= keep
            keep = mask
        scores = scores.masked_fill(~keep, torch.finfo(scores.dtype).min)
        w = torch.softmax(scores, dim=-1)
        out = (w @ v).transpose(1, 2).reshape(B, T, self.num_heads * self.d_head)
        return self.out_proj(out)


class ModernBlock(nn.Module):
    """LLaMA-style block: x + attn(attn_norm(x)), then x + ffn(ffn_norm(x))."""

    def __init__(self, d_model, num_heads, num_kv_heads, d_ff, eps=1e-6, rope_base=10000.0):
        super().__init__()
        self.attn_norm = RMSNorm(d_model, eps)
        self.attn = GroupedQueryAttention(d_model, num_heads, num_kv_heads, rope_base)
        self.ffn_norm = RMSNorm(d_model, eps)
        self.ffn = SwiGLU(d_model, d_ff)

    def forward(self, x, mask=None):
        x = x + self.attn(self.attn_norm(x), mask=mask)
        x = x + self.ffn(self.ffn_norm(x))
        return x
''',
    },
    {
        "name": 'block_rmsnorm_eps_not_passed',
        "cell": 'modern_block',
        "clause": "attn_norm and ffn_norm are RMSNorm(d_model, eps) with the block's eps.",
        "class": 'defaults',
        "source": r'''
def apply_rope(x, positions=None, base=10000.0):
    """RoPE with the "half" pairing (dim i with i + d/2): x (B, h, T, d_head) -> same shape."""
    T, d = x.shape[-2], x.shape[-1]
    ct = torch.promote_types(x.dtype, torch.float32)
    if positions is None:
        positions = torch.arange(T, device=x.device)
    half = d // 2
    inv = base ** (-torch.arange(half, device=x.device, dtype=ct) * 2 / d)
    theta = positions.to(ct)[:, None] * inv[None, :]  # (T, half)
    cos, sin = theta.cos(), theta.sin()
    xf = x.to(ct)
    a, b = xf[..., :half], xf[..., half:]
    out = torch.cat([a * cos - b * sin, a * sin + b * cos], dim=-1)
    return out.to(x.dtype)


class GroupedQueryAttention(nn.Module):
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

    def forward(self, x, mask=None):
        B, T, _ = x.shape
        q = self.W_query(x).view(B, T, self.num_heads, self.d_head).transpose(1, 2)
        k = self.W_key(x).view(B, T, self.num_kv_heads, self.d_head).transpose(1, 2)
        v = self.W_value(x).view(B, T, self.num_kv_heads, self.d_head).transpose(1, 2)
        q = apply_rope(q, base=self.rope_base)
        k = apply_rope(k, base=self.rope_base)
        r = self.num_heads // self.num_kv_heads
        k = k.repeat_interleave(r, dim=1)
        v = v.repeat_interleave(r, dim=1)
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.d_head)
        i = torch.arange(T, device=x.device)
        keep = i[None, :] <= i[:, None]
        if mask is not None:
            keep = keep & mask
        scores = scores.masked_fill(~keep, torch.finfo(scores.dtype).min)
        w = torch.softmax(scores, dim=-1)
        out = (w @ v).transpose(1, 2).reshape(B, T, self.num_heads * self.d_head)
        return self.out_proj(out)


class ModernBlock(nn.Module):
    """LLaMA-style block: x + attn(attn_norm(x)), then x + ffn(ffn_norm(x))."""

    def __init__(self, d_model, num_heads, num_kv_heads, d_ff, eps=1e-6, rope_base=10000.0):
        super().__init__()
        self.attn_norm = RMSNorm(d_model)
        self.attn = GroupedQueryAttention(d_model, num_heads, num_kv_heads, rope_base)
        self.ffn_norm = RMSNorm(d_model)
        self.ffn = SwiGLU(d_model, d_ff)

    def forward(self, x, mask=None):
        x = x + self.attn(self.attn_norm(x), mask=mask)
        x = x + self.ffn(self.ffn_norm(x))
        return x
''',
    },
    {
        "name": 'block_rope_base_not_passed',
        "cell": 'modern_block',
        "clause": "attn is GroupedQueryAttention(d_model, num_heads, num_kv_heads, rope_base) with the block's rope_base.",
        "class": 'defaults',
        "source": r'''
def apply_rope(x, positions=None, base=10000.0):
    """RoPE with the "half" pairing (dim i with i + d/2): x (B, h, T, d_head) -> same shape."""
    T, d = x.shape[-2], x.shape[-1]
    ct = torch.promote_types(x.dtype, torch.float32)
    if positions is None:
        positions = torch.arange(T, device=x.device)
    half = d // 2
    inv = base ** (-torch.arange(half, device=x.device, dtype=ct) * 2 / d)
    theta = positions.to(ct)[:, None] * inv[None, :]  # (T, half)
    cos, sin = theta.cos(), theta.sin()
    xf = x.to(ct)
    a, b = xf[..., :half], xf[..., half:]
    out = torch.cat([a * cos - b * sin, a * sin + b * cos], dim=-1)
    return out.to(x.dtype)


class GroupedQueryAttention(nn.Module):
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

    def forward(self, x, mask=None):
        B, T, _ = x.shape
        q = self.W_query(x).view(B, T, self.num_heads, self.d_head).transpose(1, 2)
        k = self.W_key(x).view(B, T, self.num_kv_heads, self.d_head).transpose(1, 2)
        v = self.W_value(x).view(B, T, self.num_kv_heads, self.d_head).transpose(1, 2)
        q = apply_rope(q, base=self.rope_base)
        k = apply_rope(k, base=self.rope_base)
        r = self.num_heads // self.num_kv_heads
        k = k.repeat_interleave(r, dim=1)
        v = v.repeat_interleave(r, dim=1)
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.d_head)
        i = torch.arange(T, device=x.device)
        keep = i[None, :] <= i[:, None]
        if mask is not None:
            keep = keep & mask
        scores = scores.masked_fill(~keep, torch.finfo(scores.dtype).min)
        w = torch.softmax(scores, dim=-1)
        out = (w @ v).transpose(1, 2).reshape(B, T, self.num_heads * self.d_head)
        return self.out_proj(out)


class ModernBlock(nn.Module):
    """LLaMA-style block: x + attn(attn_norm(x)), then x + ffn(ffn_norm(x))."""

    def __init__(self, d_model, num_heads, num_kv_heads, d_ff, eps=1e-6, rope_base=10000.0):
        super().__init__()
        self.attn_norm = RMSNorm(d_model, eps)
        self.attn = GroupedQueryAttention(d_model, num_heads, num_kv_heads)
        self.ffn_norm = RMSNorm(d_model, eps)
        self.ffn = SwiGLU(d_model, d_ff)

    def forward(self, x, mask=None):
        x = x + self.attn(self.attn_norm(x), mask=mask)
        x = x + self.ffn(self.ffn_norm(x))
        return x
''',
    },
    {
        "name": 'block_mask_not_forwarded',
        "cell": 'modern_block',
        "clause": 'ModernBlock.forward(x, mask=None) passes the keep-mask (e.g. (B, 1, 1, T) padding) to the attention together with the causal mask.',
        "class": 'logic',
        "source": r'''
def apply_rope(x, positions=None, base=10000.0):
    """RoPE with the "half" pairing (dim i with i + d/2): x (B, h, T, d_head) -> same shape."""
    T, d = x.shape[-2], x.shape[-1]
    ct = torch.promote_types(x.dtype, torch.float32)
    if positions is None:
        positions = torch.arange(T, device=x.device)
    half = d // 2
    inv = base ** (-torch.arange(half, device=x.device, dtype=ct) * 2 / d)
    theta = positions.to(ct)[:, None] * inv[None, :]  # (T, half)
    cos, sin = theta.cos(), theta.sin()
    xf = x.to(ct)
    a, b = xf[..., :half], xf[..., half:]
    out = torch.cat([a * cos - b * sin, a * sin + b * cos], dim=-1)
    return out.to(x.dtype)


class GroupedQueryAttention(nn.Module):
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

    def forward(self, x, mask=None):
        B, T, _ = x.shape
        q = self.W_query(x).view(B, T, self.num_heads, self.d_head).transpose(1, 2)
        k = self.W_key(x).view(B, T, self.num_kv_heads, self.d_head).transpose(1, 2)
        v = self.W_value(x).view(B, T, self.num_kv_heads, self.d_head).transpose(1, 2)
        q = apply_rope(q, base=self.rope_base)
        k = apply_rope(k, base=self.rope_base)
        r = self.num_heads // self.num_kv_heads
        k = k.repeat_interleave(r, dim=1)
        v = v.repeat_interleave(r, dim=1)
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.d_head)
        i = torch.arange(T, device=x.device)
        keep = i[None, :] <= i[:, None]
        if mask is not None:
            keep = keep & mask
        scores = scores.masked_fill(~keep, torch.finfo(scores.dtype).min)
        w = torch.softmax(scores, dim=-1)
        out = (w @ v).transpose(1, 2).reshape(B, T, self.num_heads * self.d_head)
        return self.out_proj(out)


class ModernBlock(nn.Module):
    """LLaMA-style block: x + attn(attn_norm(x)), then x + ffn(ffn_norm(x))."""

    def __init__(self, d_model, num_heads, num_kv_heads, d_ff, eps=1e-6, rope_base=10000.0):
        super().__init__()
        self.attn_norm = RMSNorm(d_model, eps)
        self.attn = GroupedQueryAttention(d_model, num_heads, num_kv_heads, rope_base)
        self.ffn_norm = RMSNorm(d_model, eps)
        self.ffn = SwiGLU(d_model, d_ff)

    def forward(self, x, mask=None):
        x = x + self.attn(self.attn_norm(x))
        x = x + self.ffn(self.ffn_norm(x))
        return x
''',
    },
]

CORRECT = [
    {
        "name": 'dec_residual_helper',
        "cell": 'decoder_block',
        "why": 'Same sublayers, same attribute names and the same dropout order; the three residual updates are written through a small helper.',
        "source": r'''
class DecoderBlock(nn.Module):
    """Pre-norm decoder layer: causal self-attention, cross-attention on memory, FFN.

    forward(x (B, T, d_model), memory (B, S, d_model), self_mask=None, memory_mask=None)
    -> (B, T, d_model).
    """

    def __init__(self, d_model, num_heads, d_ff, dropout=0.0, eps=1e-5):
        super().__init__()
        self.self_attn = MultiHeadAttention(d_model, num_heads, dropout, causal=True)
        self.cross_attn = MultiHeadAttention(d_model, num_heads, dropout, causal=False)
        self.ffn = FeedForward(d_model, d_ff, dropout)
        self.norm1 = nn.LayerNorm(d_model, eps=eps)
        self.norm2 = nn.LayerNorm(d_model, eps=eps)
        self.norm3 = nn.LayerNorm(d_model, eps=eps)
        self.dropout = nn.Dropout(dropout)

    def _sublayer(self, x, norm, fn):
        return x + self.dropout(fn(norm(x)))

    def forward(self, x, memory, self_mask=None, memory_mask=None):
        x = self._sublayer(x, self.norm1, lambda h: self.self_attn(h, None, self_mask))
        x = self._sublayer(x, self.norm2, lambda h: self.cross_attn(h, memory, memory_mask))
        return self._sublayer(x, self.norm3, self.ffn)
''',
    },
    {
        "name": 'mlm_bernoulli_then_categorical',
        "cell": 'mlm_mask',
        "why": 'Bernoulli(p) selection with torch.bernoulli on the CPU generator, then one uniform draw split into [0, .8) mask / [.8, .9) random / rest keep; everything moved to input_ids.device and cast to its dtype.',
        "source": r'''
def mlm_mask(input_ids, vocab_size, mask_id, special_ids, seed, p=0.15):
    """BERT masked-LM corruption: (inputs (B, T), labels (B, T)), labels -100 where not chosen.

    Each non-special token is chosen independently with probability p; a chosen token becomes
    mask_id (80 %), a uniform random id (10 %) or stays (10 %). Draws from a CPU generator.
    """
    g = torch.Generator().manual_seed(seed)
    device, dtype = input_ids.device, input_ids.dtype
    size = tuple(input_ids.shape)
    pick = torch.bernoulli(torch.full(size, float(p)), generator=g).bool().to(device)
    kind = torch.rand(size, generator=g).to(device)
    random_ids = torch.randint(vocab_size, size, generator=g).to(device=device, dtype=dtype)
    special = torch.zeros_like(input_ids, dtype=torch.bool)
    for sid in special_ids:
        special = special.logical_or(input_ids.eq(sid))
    pick = pick.logical_and(special.logical_not())
    inputs = input_ids.clone()
    inputs = torch.where(pick & (kind < 0.8), torch.full_like(inputs, mask_id), inputs)
    inputs = torch.where(pick & (kind >= 0.8) & (kind < 0.9), random_ids, inputs)
    labels = input_ids.masked_fill(~pick, -100)
    return inputs, labels
''',
    },
    {
        "name": 'gpt_pos_weight_slice_einsum_head',
        "cell": 'gpt_model',
        "why": 'Adds pos_emb.weight[:T] (identical to embedding 0..T-1) and computes the LM head with einsum against lm_head.weight; tying assigns the same Parameter so named_parameters lists tok_emb.weight only.',
        "source": r'''
class GPTBlock(nn.Module):
    """Pre-norm causal block: x + attn(norm1(x)), then x + ffn(norm2(x)). (B, T, d) -> (B, T, d)."""

    def __init__(self, d_model, num_heads, d_ff):
        super().__init__()
        self.norm1 = nn.LayerNorm(d_model)
        self.attn = MultiHeadAttention(d_model, num_heads, causal=True)
        self.norm2 = nn.LayerNorm(d_model)
        self.ffn = FeedForward(d_model, d_ff)

    def forward(self, x):
        x = x + self.attn(self.norm1(x))
        x = x + self.ffn(self.norm2(x))
        return x


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
        x = self.tok_emb(idx) + self.pos_emb.weight[: idx.size(1)].unsqueeze(0)
        for block in self.blocks:
            x = block(x)
        h = self.final_norm(x)
        return torch.einsum("btd,vd->btv", h, self.lm_head.weight)
''',
    },
    {
        "name": 'rope_complex_gqa_expand',
        "cell": 'modern_block',
        "why": 'RoPE via complex multiplication (a + ib) * exp(i theta) computed in float32/float64, then cast back; GQA repeats KV heads with expand + reshape (identical to repeat_interleave) and uses einsum for the scores.',
        "source": r'''
def apply_rope(x, positions=None, base=10000.0):
    """RoPE with the "half" pairing (dim i with i + d/2): x (B, h, T, d_head) -> same shape."""
    T, d = x.shape[-2], x.shape[-1]
    real = torch.float64 if x.dtype == torch.float64 else torch.float32
    pos = torch.arange(T, device=x.device) if positions is None else positions
    freqs = torch.pow(base, -torch.arange(0, d, 2, device=x.device, dtype=real) / d)
    theta = torch.outer(pos.to(real), freqs)
    rot = torch.polar(torch.ones_like(theta), theta)  # exp(i theta), (T, d/2)
    z = torch.complex(x[..., : d // 2].to(real), x[..., d // 2 :].to(real)) * rot
    return torch.cat((z.real, z.imag), dim=-1).to(x.dtype)


class GroupedQueryAttention(nn.Module):
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

    def forward(self, x, mask=None):
        B, T, _ = x.shape
        q = self.W_query(x).view(B, T, self.num_heads, self.d_head).transpose(1, 2)
        k = self.W_key(x).view(B, T, self.num_kv_heads, self.d_head).transpose(1, 2)
        v = self.W_value(x).view(B, T, self.num_kv_heads, self.d_head).transpose(1, 2)
        q = apply_rope(q, base=self.rope_base)
        k = apply_rope(k, base=self.rope_base)
        r = self.num_heads // self.num_kv_heads
        B_, hk, T_, dh = k.shape
        k = k[:, :, None].expand(B_, hk, r, T_, dh).reshape(B_, hk * r, T_, dh)
        v = v[:, :, None].expand(B_, hk, r, T_, dh).reshape(B_, hk * r, T_, dh)
        scores = torch.einsum("bhqd,bhkd->bhqk", q, k) / math.sqrt(self.d_head)
        i = torch.arange(T, device=x.device)
        keep = i[None, :] <= i[:, None]
        if mask is not None:
            keep = keep & mask
        scores = scores.masked_fill(~keep, torch.finfo(scores.dtype).min)
        w = torch.softmax(scores, dim=-1)
        out = (w @ v).transpose(1, 2).reshape(B, T, self.num_heads * self.d_head)
        return self.out_proj(out)


class ModernBlock(nn.Module):
    """LLaMA-style block: x + attn(attn_norm(x)), then x + ffn(ffn_norm(x))."""

    def __init__(self, d_model, num_heads, num_kv_heads, d_ff, eps=1e-6, rope_base=10000.0):
        super().__init__()
        self.attn_norm = RMSNorm(d_model, eps)
        self.attn = GroupedQueryAttention(d_model, num_heads, num_kv_heads, rope_base)
        self.ffn_norm = RMSNorm(d_model, eps)
        self.ffn = SwiGLU(d_model, d_ff)

    def forward(self, x, mask=None):
        x = x + self.attn(self.attn_norm(x), mask=mask)
        x = x + self.ffn(self.ffn_norm(x))
        return x
''',
    },
]

if __name__ == "__main__":
    import ast

    for entry in MISTAKES + CORRECT:
        ast.parse(entry["source"])
    assert len({e["name"] for e in MISTAKES + CORRECT}) == len(MISTAKES + CORRECT)
    print(f"models: {len(MISTAKES)} mistakes, {len(CORRECT)} correct variants")
