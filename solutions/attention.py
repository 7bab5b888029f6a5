"""Self-attention and scaled dot-product attention (chapter 2).

Shapes: B batch, T queries, S keys, d_k query/key size, d_v value size; any leading dims
(..., e.g. (B, h)) are batch dims.
"""

import math

import torch
import torch.nn as nn

from solutions.masking import attention_dropout, masked_softmax
from solutions.softmax import softmax


def example_inputs(device=None, dtype=None):
    """The 6 x 3 toy embeddings of "Your journey starts with one step" of Raschka (2024), ch. 3.

    Rows: Your, journey, starts, with, one, step. The book and the tests reuse this tensor to
    reproduce Raschka's printed numbers (e.g. the weight-free context vector of "journey").
    """
    return torch.tensor(
        [
            [0.43, 0.15, 0.89],  # Your
            [0.55, 0.87, 0.66],  # journey
            [0.57, 0.85, 0.64],  # starts
            [0.22, 0.58, 0.33],  # with
            [0.77, 0.25, 0.10],  # one
            [0.05, 0.80, 0.55],  # step
        ],
        device=device,
        dtype=dtype,
    )


def simple_self_attention(x):
    """Weight-free self-attention (Raschka §3.3): scores x x^T, row softmax, weighted sum of inputs.

    x: (..., T, d). No projections and no 1/sqrt(d) scaling.
    Returns (context (..., T, d), weights (..., T, T)).
    """
    weights = softmax(x @ x.transpose(-2, -1), dim=-1)
    return weights @ x, weights


def scaled_dot_product_attention(q, k, v, mask=None, dropout_p=0.0, training=False, generator=None):
    """softmax(q k^T / sqrt(d_k) [masked]) v, returning the output and the weights.

    q: (..., T, d_k), k: (..., S, d_k), v: (..., S, d_v); leading dims broadcast.
    mask: None, a bool keep-mask (True = may attend), or an additive float mask, broadcastable to
    (..., T, S). A query whose keys are all blocked gets zero weights and a zero output.
    Dropout (inverted, prob dropout_p) is applied to the weights only when training is True.
    Returns (out (..., T, d_v), weights (..., T, S)); weights are the ones applied to v (after
    dropout, as nn.MultiheadAttention reports them), so out == weights @ v.
    """
    if q.shape[-1] != k.shape[-1]:
        raise ValueError(f"q and k need the same last dim, got {q.shape[-1]} and {k.shape[-1]}")
    if k.shape[-2] != v.shape[-2]:
        raise ValueError(f"k and v need the same length S, got {k.shape[-2]} and {v.shape[-2]}")
    # scaled before the product: q k^T alone can exceed float16's range when d_k is large
    scores = (q / math.sqrt(q.shape[-1])) @ k.transpose(-2, -1)  # (..., T, S)
    weights = masked_softmax(scores, mask)
    weights = attention_dropout(weights, dropout_p, training=training, generator=generator)
    return weights @ v, weights


class SelfAttention_v1(nn.Module):
    """Self-attention with raw weight matrices (Raschka listing 3.1): q = x W_query, etc.

    W_query, W_key, W_value: nn.Parameter (d_in, d_out) from torch.rand, created in that order, so
    torch.manual_seed(123) reproduces Raschka's numbers. forward(x (T, d_in) or (B, T, d_in)) ->
    context (..., T, d_out). No mask: every token sees every token.
    """

    def __init__(self, d_in, d_out):
        super().__init__()
        self.W_query = nn.Parameter(torch.rand(d_in, d_out))
        self.W_key = nn.Parameter(torch.rand(d_in, d_out))
        self.W_value = nn.Parameter(torch.rand(d_in, d_out))

    def forward(self, x):
        q, k, v = x @ self.W_query, x @ self.W_key, x @ self.W_value
        return scaled_dot_product_attention(q, k, v)[0]


class SelfAttention_v2(nn.Module):
    """Self-attention with nn.Linear projections (Raschka listing 3.2).

    nn.Linear stores its weight as (d_out, d_in) and computes x W^T (+ bias); its default
    (Kaiming-uniform) init differs from v1's torch.rand, hence different outputs for one seed.
    forward(x (T, d_in) or (B, T, d_in)) -> context (..., T, d_out).
    """

    def __init__(self, d_in, d_out, qkv_bias=False):
        super().__init__()
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)

    def forward(self, x):
        q, k, v = self.W_query(x), self.W_key(x), self.W_value(x)
        return scaled_dot_product_attention(q, k, v)[0]


def copy_v2_to_v1(v2, v1):
    """Copy SelfAttention_v2's weights into SelfAttention_v1 so v1(x) == v2(x) (Raschka ex. 3.1).

    nn.Linear computes x W^T, v1 computes x W, so each v1 matrix is the transposed Linear weight.
    v1 has no bias, so v2 must have been built with qkv_bias=False. Returns v1.
    """
    pairs = [(v1.W_query, v2.W_query), (v1.W_key, v2.W_key), (v1.W_value, v2.W_value)]
    for p1, lin in pairs:
        if lin.bias is not None:
            raise ValueError(
                "SelfAttention_v1 has no bias: build SelfAttention_v2 with qkv_bias=False"
            )
        if p1.shape != lin.weight.T.shape:
            raise ValueError(
                f"shape mismatch: v1 {tuple(p1.shape)} vs v2^T {tuple(lin.weight.T.shape)}"
            )
    with torch.no_grad():
        for p1, lin in pairs:
            p1.copy_(lin.weight.T)
    return v1


QKV_NAMES = ("W_query", "W_key", "W_value")


def v2_to_v1_state_dict(state_dict):
    """SelfAttention_v2 state_dict -> SelfAttention_v1 state_dict with the same outputs (data only).

    state_dict: {"W_query.weight", "W_key.weight", "W_value.weight"}: (d_out, d_in) tensors of
    nn.Linear without bias. Returns {"W_query", "W_key", "W_value"}: (d_in, d_out) tensors, the
    transposes, on the same device and dtype (v1 computes x W, nn.Linear computes x W^T).
    """
    extra = sorted(set(state_dict) - {f"{n}.weight" for n in QKV_NAMES})
    if extra:
        raise ValueError(
            f"SelfAttention_v1 has no place for {extra} (build v2 with qkv_bias=False)"
        )
    return {name: state_dict[f"{name}.weight"].detach().T.clone() for name in QKV_NAMES}
