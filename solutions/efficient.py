"""Efficient attention: sliding window, grouped-query attention, KV cache, linear and tiled.

Shapes: B batch, h query heads, h_kv key/value heads, T query length, S key length, d_head.
Boolean masks follow the course convention: True = may attend (keep).

References
- Beltagy et al. 2020, Longformer (sliding window + global tokens); Jiang et al. 2023, Mistral 7B
  (causal sliding window, receptive field grows by window - 1 per layer).
- Shazeer 2019, Fast Transformer Decoding (multi-query attention); Ainslie et al. 2023, GQA.
- Katharopoulos et al. 2020, Transformers are RNNs (linear attention, phi = elu + 1).
- Milakov & Gimelshein 2018, Online normalizer calculation for softmax; Dao et al. 2022,
  FlashAttention (tiling with an online softmax).
"""

import math

import torch
import torch.nn as nn
import torch.nn.functional as F

from solutions.attention import scaled_dot_product_attention
from solutions.masking import causal_mask, combine_masks
from solutions.multihead import merge_heads, split_heads
from solutions.positional import apply_rope


def sliding_window_mask(T, window, global_tokens=(), causal=True, device=None, S=None):
    """Local attention keep-mask, bool (T, S); S defaults to T.

    The T queries are the last T of S positions (as in causal_mask): query i sits at position
    p = i + S - T. causal=True: it sees keys j with p - window < j <= p (itself and window - 1
    earlier tokens, Mistral-style). causal=False: |p - j| < window (Longformer-style, window - 1
    on each side). Positions in global_tokens (0 <= g < S) attend to every key and are attended
    by every query; with causal=True the causal rule still holds on top of that (a global token
    sees all earlier tokens and is seen by all later ones).
    """
    S = T if S is None else S
    if window < 1:
        raise ValueError("window must be >= 1")
    if not 0 <= T <= S:
        raise ValueError(f"sliding_window_mask needs 0 <= T <= S, got T={T}, S={S}")
    i = torch.arange(S - T, S, device=device).unsqueeze(1)  # query positions
    j = torch.arange(S, device=device).unsqueeze(0)
    dist = i - j
    mask = (dist >= 0) & (dist < window) if causal else dist.abs() < window
    if len(global_tokens) > 0:
        g = torch.zeros(S, dtype=torch.bool, device=device)
        g[torch.as_tensor(list(global_tokens), dtype=torch.long, device=device)] = True
        mask = mask | g[S - T :].unsqueeze(1) | g.unsqueeze(0)
        if causal:
            mask = mask & (dist >= 0)
    return mask


class KVCache:
    """Key/value cache of one attention layer.

    Holds k, v of shape (B, h_kv, S, d_head); update() appends along the sequence dim (-2).
    """

    def __init__(self):
        self.k = None
        self.v = None

    @property
    def length(self):
        """Number of positions cached so far (int)."""
        return 0 if self.k is None else self.k.shape[-2]

    def update(self, k_new, v_new):
        """Append (B, h_kv, T_new, d_head) keys/values; return all cached (k_all, v_all)."""
        if self.k is None:
            self.k, self.v = k_new, v_new
        else:
            self.k = torch.cat([self.k, k_new], dim=-2)
            self.v = torch.cat([self.v, v_new], dim=-2)
        return self.k, self.v

    def reset(self):
        self.k = None
        self.v = None


def kv_cache_bytes(batch, seq_len, num_layers, num_kv_heads, d_head, bytes_per_elem=2):
    """Memory of a KV cache in bytes: 2 (K and V) * B * S * layers * h_kv * d_head * bytes."""
    return 2 * batch * seq_len * num_layers * num_kv_heads * d_head * bytes_per_elem


def repeat_kv(x, num_heads):
    """(B, h_kv, S, d_head) -> (B, num_heads, S, d_head); kv head g serves query heads
    g*r ... g*r + r - 1 with r = num_heads // h_kv (repeat_interleave, as in HF LLaMA)."""
    h_kv = x.shape[1]
    if num_heads % h_kv != 0:
        raise ValueError(f"num_heads={num_heads} is not a multiple of num_kv_heads={h_kv}")
    return x if h_kv == num_heads else x.repeat_interleave(num_heads // h_kv, dim=1)


def cached_attention_step(q_new, k_new, v_new, cache):
    """One decoding step with a KV cache.

    q_new (B, h, T_new, d_head) (usually T_new = 1), k_new/v_new (B, h_kv, T_new, d_head).
    Appends k_new/v_new to cache, then attends from the new queries to all cached keys with the
    causal rule (new query t sees cached positions <= its own). Returns (B, h, T_new, d_head),
    equal to the last T_new rows of full causal attention over the whole sequence.
    """
    k_all, v_all = cache.update(k_new, v_new)
    h = q_new.shape[1]
    T, S = q_new.shape[-2], k_all.shape[-2]
    mask = causal_mask(T, S, device=q_new.device)
    out, _ = scaled_dot_product_attention(q_new, repeat_kv(k_all, h), repeat_kv(v_all, h), mask)
    return out


def grouped_query_attention(q, k, v, mask=None):
    """Attention of h query heads over h_kv shared key/value heads (h % h_kv == 0).

    q (B, h, T, d_k), k (B, h_kv, S, d_k), v (B, h_kv, S, d_v) -> (B, h, T, d_v).
    Query head i uses kv head i // (h // h_kv) (contiguous groups, repeat_interleave order).
    mask: bool keep-mask broadcastable to (B, h, T, S); a row with every key blocked gives zeros.
    """
    out, _ = scaled_dot_product_attention(
        q, repeat_kv(k, q.shape[-3]), repeat_kv(v, q.shape[-3]), mask
    )
    return out


def kv_cached_attention(q_new, k_new, v_new, k_cache=None, v_cache=None):
    """One decoding step with the cache passed as data (nothing is changed in place).

    q_new (B, h, T_new, d_k); k_new, v_new (B, h_kv, T_new, d); k_cache, v_cache
    (B, h_kv, S_old, d) or None. The new keys/values go after the cached ones (S = S_old + T_new)
    and the new queries attend causally (query i sees key j iff j <= i + S - T_new).
    Returns (out (B, h, T_new, d_v), k_all (B, h_kv, S, d_k), v_all (B, h_kv, S, d_v)).
    """
    k_all = k_new if k_cache is None else torch.cat([k_cache, k_new], dim=-2)
    v_all = v_new if v_cache is None else torch.cat([v_cache, v_new], dim=-2)
    mask = causal_mask(q_new.shape[-2], k_all.shape[-2], device=q_new.device)
    return grouped_query_attention(q_new, k_all, v_all, mask), k_all, v_all


class GroupedQueryAttention(nn.Module):
    """Grouped-query attention (Ainslie et al. 2023).

    num_heads query heads share num_kv_heads key/value heads (num_heads % num_kv_heads == 0):
    num_kv_heads == num_heads is multi-head attention, num_kv_heads == 1 is multi-query attention.
    rope=True rotates q and k with RoPE (pairing "half") at their absolute positions; with a cache
    the positions continue from cache.length. Keys are cached after rotation.
    """

    def __init__(
        self, d_model, num_heads, num_kv_heads, bias=False, causal=True, rope=False, rope_base=1e4
    ):
        super().__init__()
        if d_model % num_heads != 0:
            raise ValueError("d_model must be divisible by num_heads")
        if num_heads % num_kv_heads != 0:
            raise ValueError("num_heads must be divisible by num_kv_heads")
        self.num_heads = num_heads
        self.num_kv_heads = num_kv_heads
        self.d_head = d_model // num_heads
        self.causal = causal
        self.rope = rope
        self.rope_base = rope_base
        self.W_query = nn.Linear(d_model, d_model, bias=bias)
        self.W_key = nn.Linear(d_model, num_kv_heads * self.d_head, bias=bias)
        self.W_value = nn.Linear(d_model, num_kv_heads * self.d_head, bias=bias)
        self.out_proj = nn.Linear(d_model, d_model, bias=bias)

    def forward(self, x, mask=None, cache=None):
        """x (B, T, d_model) -> (B, T, d_model).

        mask: bool keep-mask broadcastable to (B, h, T, S), ANDed with the causal rule.
        cache: KVCache or None; when given, the new keys/values are appended to it and the queries
        attend to everything cached (S = cache.length after the update). A query row with every
        key blocked gets zero output.
        """
        B, T, _ = x.shape
        q = split_heads(self.W_query(x), self.num_heads)  # (B, h, T, d_head)
        k = split_heads(self.W_key(x), self.num_kv_heads)  # (B, h_kv, T, d_head)
        v = split_heads(self.W_value(x), self.num_kv_heads)
        start = 0 if cache is None else cache.length
        if self.rope:
            pos = torch.arange(start, start + T, device=x.device)
            q = apply_rope(q, pos, base=self.rope_base)
            k = apply_rope(k, pos, base=self.rope_base)
        if cache is not None:
            k, v = cache.update(k, v)
        S = k.shape[-2]
        if self.causal:
            mask = combine_masks(causal_mask(T, S, device=x.device), mask)
        k, v = repeat_kv(k, self.num_heads), repeat_kv(v, self.num_heads)
        out, _ = scaled_dot_product_attention(q, k, v, mask)
        return self.out_proj(merge_heads(out))


def elu_feature_map(x):
    """phi(x) = elu(x) + 1 > 0 (Katharopoulos et al. 2020)."""
    return F.elu(x) + 1


def linear_attention(q, k, v, causal=False, feature_map=elu_feature_map, eps=1e-6):
    """Linear attention (Katharopoulos et al. 2020).

    out_i = phi(q_i)^T [sum_j phi(k_j) v_j^T] / (phi(q_i)^T [sum_j phi(k_j)] + eps).

    q (..., T, d_k), k (..., S, d_k), v (..., S, d_v) -> (..., T, d_v).
    Non-causal sums over all j via phi(K)^T V, (d_k, d_v), in O(n d_k d_v).
    Causal (T == S) sums over j <= i with prefix sums (cumsum); this form keeps the running
    (d_k, d_v) state for every position, the recurrent view of Katharopoulos et al.
    """
    phi_q, phi_k = feature_map(q), feature_map(k)
    if not causal:
        kv = phi_k.transpose(-2, -1) @ v  # (..., d_k, d_v)
        z = phi_k.sum(dim=-2)  # (..., d_k)
        num = phi_q @ kv  # (..., T, d_v)
        den = (phi_q * z.unsqueeze(-2)).sum(dim=-1, keepdim=True)  # (..., T, 1)
        return num / (den + eps)
    if q.shape[-2] != k.shape[-2]:
        raise ValueError("causal linear attention needs T == S")
    kv = torch.cumsum(phi_k.unsqueeze(-1) * v.unsqueeze(-2), dim=-3)  # (..., T, d_k, d_v)
    z = torch.cumsum(phi_k, dim=-2)  # (..., T, d_k)
    num = (phi_q.unsqueeze(-1) * kv).sum(dim=-2)  # (..., T, d_v)
    den = (phi_q * z).sum(dim=-1, keepdim=True)
    return num / (den + eps)


def tiled_attention(q, k, v, block_size=64, causal=False, mask=None):
    """Exact softmax attention computed over key blocks with an online softmax.

    q (..., T, d_k), k (..., S, d_k), v (..., S, d_v) -> (..., T, d_v); scale 1/sqrt(d_k).
    For each key block: new running max m' = max(m, rowmax(block)), rescale the running
    denominator l and the unnormalised output o by exp(m - m'), add the block's exp-scores.
    Only a (T, block_size) score tile exists at a time. causal uses the course's causal_mask
    (j <= i + S - T); mask is an optional bool keep-mask broadcastable to (..., T, S).
    Rows with every key blocked return zeros.
    """
    T, S = q.shape[-2], k.shape[-2]
    scale = 1.0 / math.sqrt(q.shape[-1])
    keep = causal_mask(T, S, device=q.device) if causal else None
    if mask is not None:
        keep = combine_masks(keep, mask)
    m = torch.full(q.shape[:-1] + (1,), torch.finfo(q.dtype).min, device=q.device, dtype=q.dtype)
    l = torch.zeros_like(m)
    o = torch.zeros(q.shape[:-1] + (v.shape[-1],), device=q.device, dtype=q.dtype)
    for s0 in range(0, S, block_size):
        s1 = min(s0 + block_size, S)
        scores = (q @ k[..., s0:s1, :].transpose(-2, -1)) * scale  # (..., T, blk)
        if keep is not None:
            kb = keep if keep.shape[-1] == 1 else keep[..., s0:s1]
            # -inf (not finfo.min) so that blocked keys never enter the running max or sum
            scores = scores.masked_fill(~kb, float("-inf"))
        m_new = torch.maximum(m, scores.amax(dim=-1, keepdim=True))
        p = torch.exp(scores - m_new)
        alpha = torch.exp(m - m_new)
        l = l * alpha + p.sum(dim=-1, keepdim=True)
        o = o * alpha + p @ v[..., s0:s1, :]
        m = m_new
    return torch.where(l > 0, o / l.clamp_min(torch.finfo(l.dtype).tiny), torch.zeros_like(o))
