"""Masks for attention: causal, padding, their combination, masked softmax, dropout (chapter 3).

Convention (same as torch.nn.functional.scaled_dot_product_attention with a bool attn_mask):
a boolean mask is True where a query MAY attend to a key (keep) and False where it is blocked.
Blocked scores are filled with torch.finfo(dtype).min, never with a literal like -1e9 (which
overflows to -inf in float16) and never with -inf (an all -inf row makes torch.softmax NaN).
A query row whose keys are all blocked gets all-zero attention weights, hence a zero output.

Pitfalls this module avoids:
- -inf fills: fine while a row keeps one key, but a fully blocked row (e.g. a padding query)
  becomes NaN, and the NaN spreads through the next layers and the gradients.
- finfo.min fills alone: no NaN, but a fully blocked row turns into a uniform distribution over
  the blocked keys; the rows are therefore zeroed explicitly (as torch's SDPA does since 2.5).
- -1e9 literals: masked_fill(-1e9) raises on float16 (out of range, max 65504), and adding
  -1e9 gives -inf there.
- Opposite conventions: nn.MultiheadAttention's bool attn_mask / key_padding_mask use
  True = blocked; F.scaled_dot_product_attention and this course use True = keep.
"""

import math

import torch
import torch.nn as nn
import torch.nn.functional as F

from solutions.softmax import softmax


def causal_mask(T, S=None, device=None):
    """Bool keep-mask (T, S): query i may see key j iff j <= i + (S - T).

    S defaults to T (plain causal self-attention, lower triangle incl. the diagonal).
    S > T is the KV-cache case: the T new queries are the last T of S positions, so the last
    query sees every key. S < T is rejected. This is the bottom-right alignment of
    torch.nn.attention.bias.causal_lower_right; F.scaled_dot_product_attention(is_causal=True) is
    aligned top-left (j <= i), which differs when T != S.
    """
    S = T if S is None else S
    if T < 0 or S < T:
        raise ValueError(f"causal_mask needs 0 <= T <= S, got T={T}, S={S}")
    return torch.ones(T, S, dtype=torch.bool, device=device).tril(diagonal=S - T)


def padding_mask(lengths, S=None):
    """Bool keep-mask (B, 1, 1, S) from sequence lengths (B,): True where position < length.

    The two singleton dims broadcast over heads and queries of scores (B, h, T, S).
    S defaults to lengths.max() (needs real values: pass S explicitly on the meta device).
    Created on lengths.device.
    """
    if lengths.dim() != 1:
        raise ValueError(f"lengths must be 1-D (B,), got shape {tuple(lengths.shape)}")
    if S is None:
        S = int(lengths.max()) if lengths.numel() else 0
    pos = torch.arange(S, device=lengths.device)
    return (pos.unsqueeze(0) < lengths.unsqueeze(1))[:, None, None, :]


def combine_masks(*masks):
    """Logical AND of bool keep-masks with broadcasting; None entries are ignored.

    Returns None when every entry is None.
    E.g. causal (T, T) & padding (B, 1, 1, T) -> (B, 1, T, T).
    """
    out = None
    for m in masks:
        if m is None:
            continue
        if m.dtype != torch.bool:
            raise TypeError(f"combine_masks takes bool keep-masks, got {m.dtype}")
        out = m if out is None else out & m
    return out


def mask_fill_value(dtype):
    """Fill for blocked scores: torch.finfo(dtype).min (-65504 in float16, ~-3.4e38 in float32)."""
    return torch.finfo(dtype).min


def masked_softmax(scores, mask, dim=-1):
    """Softmax of scores with blocked entries filled BEFORE the softmax (the usual way).

    scores: (..., T, S). mask: None, a bool keep-mask, or an additive float mask (added to the
    scores, e.g. 0 / -inf or an ALiBi bias), broadcastable with scores.
    Blocked entries get weight exactly 0; a row with every key blocked (bool mask, or additive
    -inf everywhere) gets all zeros, not NaN. Shape: broadcast(scores, mask).
    """
    if mask is None:
        return softmax(scores, dim=dim)
    if mask.dtype == torch.bool:
        filled = torch.where(mask, scores, mask_fill_value(scores.dtype))
        # finfo.min gives exp() = 0 unless the whole row is blocked; then the row would be
        # uniform, so the blocked entries are zeroed explicitly.
        return softmax(filled, dim=dim).masked_fill(~mask, 0.0)
    return softmax(scores + mask.to(scores.dtype), dim=dim)


def masked_softmax_renorm(scores, mask, dim=-1):
    """Softmax first, then zero the blocked weights and renormalise each row (Raschka's first way).

    Equal to masked_softmax mathematically: exp(x_i)/Z / sum_kept(exp(x_j)/Z) is the softmax over
    the kept entries, the full denominator Z cancels. Numerically it is worse: if a blocked score
    exceeds the kept ones by more than ~100 (float32), the kept weights underflow to 0 before the
    renormalisation and the row comes out as zeros. Rows with every key blocked -> zeros.
    mask: bool keep-mask broadcastable with scores (..., T, S).
    """
    if mask is None:
        return softmax(scores, dim=dim)
    if mask.dtype != torch.bool:
        raise TypeError("masked_softmax_renorm needs a bool keep-mask")
    w = torch.where(mask, softmax(scores, dim=dim), 0.0)
    s = w.sum(dim=dim, keepdim=True)
    return w / torch.where(s > 0, s, torch.ones_like(s))


def attention_dropout(weights, p, training=True, generator=None):
    """Inverted dropout on attention weights: zero each entry with probability p, scale the rest by
    1/(1-p) so the expected value is unchanged. Identity when not training or p == 0.

    With generator=None it calls torch.nn.functional.dropout, so it consumes the global RNG
    exactly like nn.Dropout (torch.manual_seed(123) reproduces nn.Dropout's mask). With a
    torch.Generator it draws a Bernoulli(1-p) keep-mask from that generator.
    """
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"dropout probability must be in [0, 1], got {p}")
    if not training or p == 0.0:
        return weights
    if generator is None:
        return F.dropout(weights, p=p, training=True)
    if p == 1.0:
        return weights * 0.0
    keep = torch.empty_like(weights).bernoulli_(1.0 - p, generator=generator)
    return weights * keep / (1.0 - p)


class CausalAttention(nn.Module):
    """Single-head causal self-attention with dropout on its weights (Raschka listing 3.3).

    The keep-mask causal_mask(context_length) is a buffer, so .to(device) moves it with the
    weights. forward(x (B, T, d_in) or (T, d_in)) -> (B, T, d_out), T <= context_length.
    Dropout acts only in train(); eval() is deterministic.
    """

    def __init__(self, d_in, d_out, context_length, dropout, qkv_bias=False):
        super().__init__()
        self.d_out = d_out
        self.context_length = context_length
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.dropout = nn.Dropout(dropout)
        self.register_buffer("mask", causal_mask(context_length, context_length), persistent=False)

    def forward(self, x):
        T = x.shape[-2]
        if T > self.context_length:
            raise ValueError(f"sequence length {T} exceeds context_length {self.context_length}")
        q, k, v = self.W_query(x), self.W_key(x), self.W_value(x)  # (B, T, d_out)
        scores = q @ k.transpose(-2, -1) / math.sqrt(k.shape[-1])  # (B, T, T)
        weights = masked_softmax(scores, self.mask[:T, :T])
        weights = self.dropout(weights)
        return weights @ v
