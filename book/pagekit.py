"""Demo models shared by chapters 7-9 of the book (import pagekit; the kernel runs in book/, or in
the chapters/ folder of the student bundle, where this file sits next to the notebooks).

Only what a page needs to run a demo lives here: no graded code, nothing a student implements in
an assignment. The attention below is PyTorch's F.scaled_dot_product_attention (the assignments
forbid it), the cache only takes one new token per call (the graded kv_cached_attention takes
several), and the model has no weight tying (the graded GPTModel has it).
"""

import torch
import torch.nn.functional as F
from torch import nn


class _CachedSelfAttention(nn.Module):
    """Causal multi-head self-attention that can append to a per-layer KV cache."""

    def __init__(self, d_model, num_heads):
        super().__init__()
        self.num_heads = num_heads
        self.qkv = nn.Linear(d_model, 3 * d_model)
        self.proj = nn.Linear(d_model, d_model)

    def forward(self, x, kv_store=None):
        B, T, d = x.shape
        q, k, v = self.qkv(x).view(B, T, 3, self.num_heads, -1).permute(2, 0, 3, 1, 4)
        if kv_store:  # earlier keys and values of this layer
            if T != 1:
                raise ValueError("with a filled cache, feed one new token per call")
            k = torch.cat((kv_store["k"], k), dim=2)
            v = torch.cat((kv_store["v"], v), dim=2)
            out = F.scaled_dot_product_attention(q, k, v)  # the newest token sees every key
        else:
            out = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        if kv_store is not None:
            kv_store["k"], kv_store["v"] = k, v
        return self.proj(out.transpose(1, 2).reshape(B, T, d))


class _Block(nn.Module):
    def __init__(self, d_model, num_heads):
        super().__init__()
        self.ln1 = nn.LayerNorm(d_model)
        self.attn = _CachedSelfAttention(d_model, num_heads)
        self.ln2 = nn.LayerNorm(d_model)
        self.mlp = nn.Sequential(
            nn.Linear(d_model, 4 * d_model), nn.GELU(), nn.Linear(4 * d_model, d_model)
        )

    def forward(self, x, kv_store=None):
        x = x + self.attn(self.ln1(x), kv_store)
        return x + self.mlp(self.ln2(x))


class CachedLM(nn.Module):
    """A small GPT-style language model for the speed demos: token and learned position
    embeddings, pre-norm blocks, a final layer norm and a linear head (no weight tying).

    model(idx (B, T)) -> logits (B, T, vocab_size). With model(idx, caches), where
    caches = model.make_caches() (one dict per block, passed as the second argument), the first
    call runs the prompt and fills one KV cache per block; each later call takes the newest
    token only, (B, 1), and continues at the cached position.
    """

    def __init__(self, vocab_size, context_length, d_model, num_heads, num_layers):
        super().__init__()
        self.max_positions = context_length
        self.token_table = nn.Embedding(vocab_size, d_model)
        self.position_table = nn.Embedding(context_length, d_model)
        self.blocks = nn.ModuleList(_Block(d_model, num_heads) for _ in range(num_layers))
        self.ln_f = nn.LayerNorm(d_model)
        self.head = nn.Linear(d_model, vocab_size, bias=False)

    def make_caches(self):
        return [{} for _ in self.blocks]

    def forward(self, tokens, kv_stores=None):
        done = kv_stores[0]["k"].shape[2] if kv_stores and kv_stores[0] else 0  # cached tokens
        end = done + tokens.shape[1]
        if end > self.max_positions:
            raise ValueError(f"{end} positions exceed context_length={self.max_positions}")
        positions = torch.arange(done, end, device=tokens.device)
        x = self.token_table(tokens) + self.position_table(positions)
        stores = [None] * len(self.blocks) if kv_stores is None else kv_stores
        for block, store in zip(self.blocks, stores, strict=True):
            x = block(x, store)
        return self.head(self.ln_f(x))
