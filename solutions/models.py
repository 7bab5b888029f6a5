"""Transformer model families (chapter 8): encoder and decoder blocks, BERT's MLM corruption,
a GPT-style decoder-only LM with a KV cache, an encoder-decoder model, and a LLaMA-style block.

Everything is assembled from the building blocks of the earlier chapters:
multi-head attention (multihead.py), LayerNorm/RMSNorm/FFN/SwiGLU (normalization.py),
positions (positional.py), grouped-query attention and the KV cache (efficient.py).
Masks are bool keep-masks (True = may attend), as everywhere in this package.
"""

import math

import torch
import torch.nn as nn

from solutions.efficient import GroupedQueryAttention, KVCache
from solutions.multihead import MultiHeadAttention
from solutions.normalization import FeedForward, LayerNorm, RMSNorm, SwiGLU, TransformerBlock
from solutions.positional import sinusoidal_encoding

# ---------------------------------------------------------------------------------------------
# Encoder and decoder blocks (Vaswani et al. 2017, §3.1)
# ---------------------------------------------------------------------------------------------


class EncoderBlock(TransformerBlock):
    """Bidirectional encoder layer: self-attention + FFN, each with residual and LayerNorm.

    forward(x (B, T, d_model), mask=None) -> (B, T, d_model); mask is a bool keep-mask
    broadcastable to (B, h, T, T), e.g. a source padding mask (B, 1, 1, T).
    Matches nn.TransformerEncoderLayer(batch_first=True, activation="gelu", norm_first=...).
    """

    def __init__(self, d_model, num_heads, d_ff, dropout=0.0, norm_first=True, eps=1e-5):
        super().__init__(
            d_model, num_heads, d_ff, dropout=dropout, norm_first=norm_first, causal=False, eps=eps
        )


class DecoderBlock(nn.Module):
    """Decoder layer of the original Transformer: masked self-attention, cross-attention on the
    encoder output (queries from the decoder, keys/values from `memory`), FFN.

    norm_first=True (pre-norm):  x += self_attn(norm1(x)); x += cross_attn(norm2(x), memory);
                                 x += ffn(norm3(x)).
    norm_first=False (post-norm): x = norm1(x + self_attn(x)); x = norm2(x + cross_attn(x, memory));
                                 x = norm3(x + ffn(x)).
    forward(x (B, T, d_model), memory (B, S, d_model), self_mask=None, memory_mask=None)
    -> (B, T, d_model). self_mask: extra keep-mask ANDed with the built-in causal mask,
    broadcastable to (B, h, T, T); memory_mask: keep-mask broadcastable to (B, h, T, S), e.g. the
    source padding mask (B, 1, 1, S). Matches nn.TransformerDecoderLayer(batch_first=True,
    activation="gelu", norm_first=...) with a causal tgt_mask, after copying weights.
    """

    def __init__(self, d_model, num_heads, d_ff, dropout=0.0, norm_first=True, eps=1e-5):
        super().__init__()
        self.norm_first = norm_first
        # context_length=None: the causal mask is built on the fly for any length
        self.self_attn = MultiHeadAttention(
            d_model, d_model, None, dropout, num_heads, qkv_bias=True, causal=True
        )
        self.cross_attn = MultiHeadAttention(
            d_model, d_model, None, dropout, num_heads, qkv_bias=True, causal=False
        )
        self.ffn = FeedForward(d_model, d_ff, dropout=dropout, activation="gelu")
        self.norm1 = LayerNorm(d_model, eps=eps)
        self.norm2 = LayerNorm(d_model, eps=eps)
        self.norm3 = LayerNorm(d_model, eps=eps)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x, memory, self_mask=None, memory_mask=None):
        def sa(h):
            return self.dropout(self.self_attn(h, mask=self_mask))

        def ca(h):
            return self.dropout(self.cross_attn(h, context=memory, mask=memory_mask))

        def ff(h):
            return self.dropout(self.ffn(h))

        if self.norm_first:
            x = x + sa(self.norm1(x))
            x = x + ca(self.norm2(x))
            return x + ff(self.norm3(x))
        x = self.norm1(x + sa(x))
        x = self.norm2(x + ca(x))
        return self.norm3(x + ff(x))


# ---------------------------------------------------------------------------------------------
# BERT masked language modelling (Devlin et al. 2019, §3.1 and appendix A.1)
# ---------------------------------------------------------------------------------------------


def _rand(shape, like, generator):
    """Uniform [0, 1) numbers drawn on the generator's device, returned on like.device."""
    dev = generator.device if generator is not None else like.device
    return torch.rand(shape, generator=generator, device=dev).to(like.device)


def bert_mlm_mask(
    input_ids, mask_token_id, vocab_size, mlm_prob=0.15, special_ids=(), generator=None
):
    """BERT's masked-LM corruption of a batch of token ids.

    input_ids (B, T) long. Every token whose id is not in special_ids ([CLS], [SEP], [PAD], ...)
    is selected independently with probability mlm_prob. A selected token is replaced by
    mask_token_id with probability 0.8, by a uniformly random id in [0, vocab_size) with
    probability 0.1, and kept unchanged with probability 0.1.
    Returns (inputs (B, T), labels (B, T)): labels hold the original id at the selected
    positions and -100 (cross_entropy's ignore_index) everywhere else; unselected tokens are
    never changed. All randomness comes from `generator` (its own device; results are moved to
    input_ids.device), so the same seed gives the same corruption.

    Why not always [MASK]: the [MASK] token never occurs when the model is fine-tuned, so BERT
    also feeds real tokens at some predicted positions. A random id may coincide with the
    original or with a special id, as in BERT and Hugging Face's DataCollatorForLanguageModeling.
    """
    shape = input_ids.shape
    u_select = _rand(shape, input_ids, generator)
    u_action = _rand(shape, input_ids, generator)
    dev = generator.device if generator is not None else input_ids.device
    random_ids = torch.randint(vocab_size, shape, generator=generator, device=dev)
    random_ids = random_ids.to(device=input_ids.device, dtype=input_ids.dtype)

    specials = torch.tensor(list(special_ids), dtype=input_ids.dtype, device=input_ids.device)
    selected = (u_select < mlm_prob) & ~torch.isin(input_ids, specials)
    to_mask = selected & (u_action < 0.8)
    to_random = selected & (u_action >= 0.8) & (u_action < 0.9)

    inputs = input_ids.masked_fill(to_mask, mask_token_id)
    inputs = torch.where(to_random, random_ids, inputs)
    labels = input_ids.masked_fill(~selected, -100)
    return inputs, labels


def mlm_mask(input_ids, vocab_size, mask_id, special_ids=(), seed=0, p=0.15):
    """bert_mlm_mask with plain-data arguments (the graded assignment's form).

    input_ids (B, T) integer ids; special_ids: list of ids never selected; seed: int.
    Every non-special token is selected independently with probability p (Bernoulli, as in
    Hugging Face's DataCollatorForLanguageModeling, not exactly round(p * n) per sequence as in
    the original BERT data script); a selected token becomes mask_id (80 %), a uniform random id
    in [0, vocab_size) (10 %) or stays (10 %). All draws come from
    torch.Generator().manual_seed(seed) on the CPU and are moved to input_ids.device, so a seed
    gives the same corruption on every device. Returns (inputs (B, T), labels (B, T)) with
    input_ids' dtype and device; labels are -100 where not selected.
    """
    generator = torch.Generator().manual_seed(int(seed))
    return bert_mlm_mask(input_ids, mask_id, vocab_size, p, tuple(special_ids), generator)


# ---------------------------------------------------------------------------------------------
# GPT: decoder-only language model (Radford et al. 2018/2019, Brown et al. 2020)
# ---------------------------------------------------------------------------------------------


class GPTBlock(nn.Module):
    """Pre-norm causal block: x + attn(LN(x)), then x + FFN(LN(x)) (GPT-2 layout).

    The attention is GroupedQueryAttention with num_kv_heads == num_heads (plain multi-head
    attention with biases), because it can append to a KVCache.
    forward(x (B, T, d_model), cache=None) -> (B, T, d_model).
    """

    def __init__(self, d_model, num_heads, d_ff, dropout=0.0):
        super().__init__()
        self.norm1 = LayerNorm(d_model)
        self.attn = GroupedQueryAttention(d_model, num_heads, num_heads, bias=True, causal=True)
        self.norm2 = LayerNorm(d_model)
        self.ffn = FeedForward(d_model, d_ff, dropout=dropout, activation="gelu")
        self.dropout = nn.Dropout(dropout)

    def forward(self, x, cache=None):
        x = x + self.dropout(self.attn(self.norm1(x), cache=cache))
        return x + self.dropout(self.ffn(self.norm2(x)))


class GPTModel(nn.Module):
    """GPT-style decoder-only LM: token + learned absolute position embeddings, pre-norm causal
    blocks, final LayerNorm, linear LM head (no bias; shares the token embedding matrix when
    tie_weights=True, as GPT-2 does).

    forward(idx (B, T) long, caches=None) -> logits (B, T, vocab_size).
    caches: None, or the list from make_caches() (one KVCache per layer). With caches the new
    tokens take positions caches[0].length ... caches[0].length + T - 1 and every layer appends
    their keys/values to its cache, so feeding a prompt and then one token at a time gives the
    same logits as one full forward pass. Positions beyond context_length raise ValueError.

    Initialization follows GPT-2 (Radford et al. 2019, §2.3; nanoGPT): weights N(0, 0.02^2),
    biases 0, and the two projections that write into the residual stream (attention out_proj,
    FFN linear2) N(0, (0.02 / sqrt(2 * num_layers))^2), so the residual sum does not grow with
    depth. Dropout acts on the embeddings, the FFN hidden layer and both residual branches (there
    is no dropout on the attention weights).
    """

    def __init__(
        self,
        vocab_size,
        context_length,
        d_model,
        num_heads,
        num_layers,
        d_ff=None,
        dropout=0.0,
        tie_weights=False,
    ):
        super().__init__()
        d_ff = 4 * d_model if d_ff is None else d_ff
        self.context_length = context_length
        self.tok_emb = nn.Embedding(vocab_size, d_model)
        self.pos_emb = nn.Embedding(context_length, d_model)
        self.dropout = nn.Dropout(dropout)
        self.blocks = nn.ModuleList(
            GPTBlock(d_model, num_heads, d_ff, dropout) for _ in range(num_layers)
        )
        self.final_norm = LayerNorm(d_model)
        self.lm_head = nn.Linear(d_model, vocab_size, bias=False)
        if tie_weights:
            self.lm_head.weight = self.tok_emb.weight
        self.reset_parameters(num_layers)

    @torch.no_grad()
    def reset_parameters(self, num_layers):
        for m in self.modules():
            if isinstance(m, (nn.Linear, nn.Embedding)):
                nn.init.normal_(m.weight, std=0.02)
            if isinstance(m, nn.Linear) and m.bias is not None:
                nn.init.zeros_(m.bias)
        for block in self.blocks:
            for proj in (block.attn.out_proj, block.ffn.linear2):
                nn.init.normal_(proj.weight, std=0.02 / math.sqrt(2 * num_layers))

    def make_caches(self):
        """One empty KVCache per layer, for incremental decoding."""
        return [KVCache() for _ in self.blocks]

    def forward(self, idx, caches=None):
        T = idx.shape[1]
        start = caches[0].length if caches is not None else 0
        if start + T > self.context_length:
            raise ValueError(
                f"positions {start}..{start + T - 1} exceed the model's context_length "
                f"{self.context_length}; crop the input to the last {self.context_length} tokens"
            )
        pos = torch.arange(start, start + T, device=idx.device)
        x = self.dropout(self.tok_emb(idx) + self.pos_emb(pos))  # (B, T, d_model)
        for i, block in enumerate(self.blocks):
            x = block(x, cache=None if caches is None else caches[i])
        return self.lm_head(self.final_norm(x))  # (B, T, V)


# ---------------------------------------------------------------------------------------------
# Encoder-decoder model (Vaswani et al. 2017)
# ---------------------------------------------------------------------------------------------


class EncoderDecoderModel(nn.Module):
    """Sequence-to-sequence Transformer: encoder stack over the source, decoder stack with
    causal self-attention over the target and cross-attention on the encoder output (memory).

    Embeddings are scaled by sqrt(d_model) and summed with sinusoidal positions (Vaswani et al.
    §3.4-3.5). Source tokens equal to pad_id are masked out as keys in encoder self-attention and
    in cross-attention, so they never influence the output. With norm_first=True (pre-norm) both
    stacks end with a final LayerNorm, as in nn.Transformer.
    forward(src (B, S) long, tgt (B, T) long, src_mask=None) -> logits (B, T, tgt_vocab_size);
    src_mask: keep-mask (B, 1, 1, S), by default src != pad_id.
    """

    def __init__(
        self,
        src_vocab_size,
        tgt_vocab_size,
        d_model,
        num_heads,
        num_encoder_layers,
        num_decoder_layers,
        d_ff=None,
        dropout=0.0,
        pad_id=0,
        max_len=4096,
        norm_first=True,
    ):
        super().__init__()
        d_ff = 4 * d_model if d_ff is None else d_ff
        self.d_model = d_model
        self.pad_id = pad_id
        self.max_len = max_len
        self.src_emb = nn.Embedding(src_vocab_size, d_model)
        self.tgt_emb = nn.Embedding(tgt_vocab_size, d_model)
        self.dropout = nn.Dropout(dropout)
        self.encoder = nn.ModuleList(
            EncoderBlock(d_model, num_heads, d_ff, dropout, norm_first)
            for _ in range(num_encoder_layers)
        )
        self.decoder = nn.ModuleList(
            DecoderBlock(d_model, num_heads, d_ff, dropout, norm_first)
            for _ in range(num_decoder_layers)
        )
        self.enc_norm = LayerNorm(d_model) if norm_first else nn.Identity()
        self.dec_norm = LayerNorm(d_model) if norm_first else nn.Identity()
        self.lm_head = nn.Linear(d_model, tgt_vocab_size)

    def embed(self, emb, ids):
        """Token embedding * sqrt(d_model) + sinusoidal positions: (B, T) -> (B, T, d_model)."""
        T = ids.shape[1]
        if T > self.max_len:
            raise ValueError(f"sequence length {T} exceeds max_len {self.max_len}")
        x = emb(ids) * math.sqrt(self.d_model)
        pe = sinusoidal_encoding(T, self.d_model, device=ids.device, dtype=x.dtype)
        return self.dropout(x + pe)

    def source_mask(self, src):
        """Keep-mask (B, 1, 1, S): True for real source tokens, False for padding."""
        return (src != self.pad_id)[:, None, None, :]

    def encode(self, src, src_mask=None):
        """src (B, S) -> memory (B, S, d_model)."""
        src_mask = self.source_mask(src) if src_mask is None else src_mask
        x = self.embed(self.src_emb, src)
        for block in self.encoder:
            x = block(x, mask=src_mask)
        return self.enc_norm(x)

    def decode(self, tgt, memory, src_mask):
        """tgt (B, T), memory (B, S, d_model), src_mask (B, 1, 1, S) -> logits (B, T, V)."""
        x = self.embed(self.tgt_emb, tgt)
        for block in self.decoder:
            x = block(x, memory, memory_mask=src_mask)
        return self.lm_head(self.dec_norm(x))

    def forward(self, src, tgt, src_mask=None):
        src_mask = self.source_mask(src) if src_mask is None else src_mask
        return self.decode(tgt, self.encode(src, src_mask), src_mask)


# ---------------------------------------------------------------------------------------------
# LLaMA-style block and LM (Touvron et al. 2023)
# ---------------------------------------------------------------------------------------------


class ModernBlock(nn.Module):
    """LLaMA-style decoder block: pre-norm with RMSNorm, causal grouped-query attention with
    RoPE on queries and keys, SwiGLU feed-forward, no bias anywhere.

    x = x + attn(attn_norm(x)); x = x + ffn(ffn_norm(x)).
    forward(x (B, T, d_model), mask=None, cache=None) -> (B, T, d_model); mask is an extra
    keep-mask ANDed with the causal one; with a cache, RoPE positions continue at cache.length.
    """

    def __init__(self, d_model, num_heads, num_kv_heads, d_ff, eps=1e-6, rope_base=10000.0):
        super().__init__()
        self.attn_norm = RMSNorm(d_model, eps=eps)
        self.attn = GroupedQueryAttention(
            d_model,
            num_heads,
            num_kv_heads,
            bias=False,
            causal=True,
            rope=True,
            rope_base=rope_base,
        )
        self.ffn_norm = RMSNorm(d_model, eps=eps)
        self.ffn = SwiGLU(d_model, d_ff, bias=False)

    def forward(self, x, mask=None, cache=None):
        x = x + self.attn(self.attn_norm(x), mask=mask, cache=cache)
        return x + self.ffn(self.ffn_norm(x))


class ModernLM(nn.Module):
    """Decoder-only LM from ModernBlocks: token embedding (no absolute positions; RoPE inside
    attention), final RMSNorm, bias-free LM head. forward(idx (B, T), caches=None) -> (B, T, V).
    """

    def __init__(
        self,
        vocab_size,
        d_model,
        num_heads,
        num_kv_heads,
        num_layers,
        d_ff,
        eps=1e-6,
        rope_base=10000.0,
    ):
        super().__init__()
        self.tok_emb = nn.Embedding(vocab_size, d_model)
        self.blocks = nn.ModuleList(
            ModernBlock(d_model, num_heads, num_kv_heads, d_ff, eps, rope_base)
            for _ in range(num_layers)
        )
        self.final_norm = RMSNorm(d_model, eps=eps)
        self.lm_head = nn.Linear(d_model, vocab_size, bias=False)

    def make_caches(self):
        """One empty KVCache per layer, for incremental decoding."""
        return [KVCache() for _ in self.blocks]

    def forward(self, idx, caches=None):
        x = self.tok_emb(idx)  # (B, T, d_model)
        for i, block in enumerate(self.blocks):
            x = block(x, cache=None if caches is None else caches[i])
        return self.lm_head(self.final_norm(x))
