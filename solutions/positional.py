"""Position information: sinusoidal and learned embeddings, RoPE, ALiBi, T5 relative buckets.

Shapes: B batch, T query length, S key length, h heads, d_head per-head width.
"""

import math

import torch
import torch.nn as nn


def _angle_dtype(dtype):
    """Angles and trigonometry run in float32 at least (fp16/bf16 positions lose integers early)."""
    return torch.promote_types(dtype or torch.get_default_dtype(), torch.float32)


def sinusoidal_encoding(T, d_model, base=10000.0, device=None, dtype=None):
    """Fixed sin/cos table of Vaswani et al. (2017), (T, d_model).

    PE[p, 2i] = sin(p / base^(2i/d)), PE[p, 2i+1] = cos(p / base^(2i/d)).
    Each pair (2i, 2i+1) is a point on a circle turning with frequency base^(-2i/d), so
    PE[p + k] is a fixed rotation of PE[p] (the same for every p).
    """
    if d_model % 2 != 0:
        raise ValueError("d_model must be even")
    work = _angle_dtype(dtype)
    pos = torch.arange(T, device=device, dtype=work)
    inv_freq = base ** (-torch.arange(0, d_model, 2, device=device, dtype=work) / d_model)
    angles = pos[:, None] * inv_freq  # (T, d/2)
    pe = torch.stack((angles.sin(), angles.cos()), dim=-1).flatten(-2)  # (T, d) sin, cos, sin, ...
    return pe.to(dtype or torch.get_default_dtype())


class LearnedPositionalEmbedding(nn.Module):
    """One trainable vector per position (BERT, GPT-1/2/3): forward(x (B, T, d)) -> x + table[:T].

    Positions beyond max_len have no vector: T > max_len raises.
    """

    def __init__(self, max_len, d_model):
        super().__init__()
        self.max_len = max_len
        self.embedding = nn.Embedding(max_len, d_model)

    def forward(self, x):
        T = x.shape[1]
        if T > self.max_len:
            raise ValueError(f"sequence length {T} exceeds max_len {self.max_len}")
        return x + self.embedding(torch.arange(T, device=x.device))


def rope_angles(positions, d_head, base=10000.0, dtype=torch.float32):
    """theta[..., p, i] = position_p * base^(-2i/d_head): positions (...) -> (..., d_head/2)."""
    if d_head % 2 != 0:
        raise ValueError("d_head must be even")
    i = torch.arange(0, d_head, 2, device=positions.device, dtype=dtype)
    inv_freq = base ** (-i / d_head)
    return positions.to(dtype)[..., None] * inv_freq


def rope_cos_sin(T, d_head, base=10000.0, device=None, dtype=None, offset=0):
    """cos and sin of the RoPE angles for positions offset .. offset+T-1, each (T, d_head/2).

    Column i belongs to the pair rotated with frequency base^(-2i/d_head) (the same angles
    for both pairings; only which two dimensions form pair i differs).
    """
    positions = torch.arange(offset, offset + T, device=device)
    angles = rope_angles(positions, d_head, base, _angle_dtype(dtype))
    out = dtype or torch.get_default_dtype()
    return angles.cos().to(out), angles.sin().to(out)


def _rotate(a, b, cos, sin):
    """Rotate each 2-D point (a, b) by the angle whose cos/sin are given: R(theta) (a, b)^T."""
    return a * cos - b * sin, a * sin + b * cos


def apply_rope(x, positions=None, base=10000.0, pairing="half", offset=0):
    """Rotary position embedding (Su et al., RoFormer) for queries or keys, x (B, h, T, d_head).

    positions: (T,) or (B, T) integer positions; default arange(offset, offset + T) (offset =
      number of cached tokens: new tokens behind a KV cache); offset is unused with positions.
    pairing="half": dim i is paired with dim i + d/2 (GPT-NeoX, Hugging Face LLaMA rotate_half).
    pairing="interleaved": dims (2i, 2i+1) form pair i (RoFormer paper, Meta's LLaMA complex form).
    Pair i at position p is rotated by p * base^(-2i/d), so <rope(q, m), rope(k, n)> depends
    only on q, k and m - n. Computed in at least float32, returned in x.dtype.
    """
    B, h, T, d = x.shape
    if positions is None:
        positions = torch.arange(offset, offset + T, device=x.device)
    angles = rope_angles(positions, d, base, _angle_dtype(x.dtype))  # (T, d/2) or (B, T, d/2)
    if angles.dim() == 3:
        angles = angles[:, None]  # (B, 1, T, d/2), broadcast over heads
    cos, sin = angles.cos(), angles.sin()
    xf = x.to(cos.dtype)
    if pairing == "half":
        a, b = _rotate(xf[..., : d // 2], xf[..., d // 2 :], cos, sin)
        out = torch.cat((a, b), dim=-1)
    elif pairing == "interleaved":
        a, b = _rotate(xf[..., 0::2], xf[..., 1::2], cos, sin)
        out = torch.stack((a, b), dim=-1).flatten(-2)
    else:
        raise ValueError(f"pairing must be 'half' or 'interleaved', got {pairing!r}")
    return out.to(x.dtype)


def interleaved_to_half(x):
    """Permute the last dim from (x0, x1, x2, x3, ...) to (x0, x2, ..., x1, x3, ...).

    The pair (2i, 2i+1) becomes (i, i + d/2), so
    apply_rope(x, pairing="interleaved") == half_to_interleaved(apply_rope(interleaved_to_half(x))).
    Applying the same permutation to q and k leaves every q.k unchanged; that is why Meta LLaMA
    checkpoints load into the rotate_half code after permuting the rows of W_q and W_k.
    """
    return torch.cat((x[..., 0::2], x[..., 1::2]), dim=-1)


def half_to_interleaved(x):
    """Inverse of interleaved_to_half: (x0, ..., x_{d/2}, ...) -> (x0, x_{d/2}, x1, ...)."""
    d = x.shape[-1]
    return torch.stack((x[..., : d // 2], x[..., d // 2 :]), dim=-1).flatten(-2)


def alibi_slopes(num_heads, device=None, dtype=None):
    """Head slopes of ALiBi (Press et al., 2022), (h,).

    For h a power of two: the geometric sequence 2^(-8/h), 2^(-16/h), ..., 2^(-8) (h = 8 gives
    1/2, 1/4, ..., 1/256). Otherwise, with n the largest power of two below h: the n slopes for
    n heads, then every other slope of the 2n-head sequence (odd exponents) for the remaining h - n
    heads, as in the official code and Hugging Face BLOOM.
    """
    n = 2 ** math.floor(math.log2(num_heads))
    slopes = [2.0 ** (-8.0 * k / n) for k in range(1, n + 1)]
    slopes += [2.0 ** (-8.0 * k / (2 * n)) for k in range(1, 2 * (num_heads - n), 2)]
    return torch.tensor(slopes, device=device, dtype=dtype or torch.get_default_dtype())


def alibi_bias(num_heads, T, S=None, device=None, dtype=None):
    """ALiBi bias to add to the attention scores, (h, T, S): -slope_h * (i + S - T - j).

    Query i sits at absolute position i + S - T (S > T: the last T queries behind a cache), so the
    value is -slope times the distance back to key j. Future keys (j after the query) get 0 here:
    combine with the causal mask separately. Because softmax ignores a constant per row, adding
    slope * j instead gives the same attention (the official code's shortcut).
    """
    S = T if S is None else S
    q_pos = torch.arange(S - T, S, device=device)[:, None]
    k_pos = torch.arange(S, device=device)[None, :]
    distance = (q_pos - k_pos).clamp_min(0)  # (T, S)
    slopes = alibi_slopes(num_heads, device=device, dtype=dtype)
    return -slopes[:, None, None] * distance.to(slopes.dtype)


def t5_relative_position_bucket(
    relative_position, bidirectional=True, num_buckets=32, max_distance=128
):
    """Bucket index of T5's relative attention bias (Raffel et al., 2020; Hugging Face semantics).

    relative_position = key_pos - query_pos (long tensor, any shape). bidirectional: half of the
    buckets for keys after the query (offset num_buckets/2), half for the rest; otherwise keys
    after the query all share bucket 0. Within a half of n buckets, distances 0 .. n/2 - 1 get
    their own bucket and larger ones are log-spaced up to max_distance; beyond it, the last bucket.
    """
    buckets = torch.zeros_like(relative_position)
    if bidirectional:
        num_buckets //= 2
        buckets = buckets + (relative_position > 0).long() * num_buckets
        distance = relative_position.abs()
    else:
        distance = (-relative_position).clamp_min(0)
    max_exact = num_buckets // 2
    is_small = distance < max_exact
    scaled = torch.log(distance.clamp_min(max_exact).float() / max_exact) / math.log(
        max_distance / max_exact
    )
    large = max_exact + (scaled * (num_buckets - max_exact)).long()
    large = large.clamp_max(num_buckets - 1)
    return buckets + torch.where(is_small, distance, large)
