"""Normalization layers, position-wise feed-forward networks and the Transformer block.

Shapes: B batch, T tokens, d_model width, d_ff hidden width of the feed-forward network.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

from solutions.multihead import MultiHeadAttention, load_torch_mha


def _work(x):
    """Statistics in at least float32 (fp16/bf16 sums of squares lose precision)."""
    return x.to(torch.promote_types(x.dtype, torch.float32))


def _as_shape(normalized_shape):
    """An int d or a sequence of ints -> a tuple (the trailing dims to normalize over)."""
    if isinstance(normalized_shape, int):
        return (normalized_shape,)
    return tuple(int(n) for n in normalized_shape)


class LayerNorm(nn.Module):
    """Layer normalization (Ba et al., 2016) over the trailing dims, x (..., *normalized_shape).

    y = (x - mean) / sqrt(var + eps) * weight + bias, var the biased (divide by n) variance,
    as in nn.LayerNorm (same signature and parameter names). Each token is normalized on its
    own; the batch plays no part. fp16/bf16 inputs are computed in float32 (statistics and the
    affine step) and the result is cast back to x.dtype; float64 stays float64.
    """

    def __init__(self, normalized_shape, eps=1e-5, elementwise_affine=True):
        super().__init__()
        self.normalized_shape = _as_shape(normalized_shape)
        self.eps = eps
        if elementwise_affine:
            self.weight = nn.Parameter(torch.ones(self.normalized_shape))
            self.bias = nn.Parameter(torch.zeros(self.normalized_shape))
        else:
            self.weight = self.bias = None

    def forward(self, x):
        dims = tuple(range(-len(self.normalized_shape), 0))
        h = _work(x)
        mean = h.mean(dim=dims, keepdim=True)
        var = h.var(dim=dims, keepdim=True, unbiased=False)  # two-pass: no E[x^2] - E[x]^2
        y = (h - mean) * torch.rsqrt(var + self.eps)
        if self.weight is not None:
            y = y * self.weight + self.bias
        return y.to(x.dtype)


class RMSNorm(nn.Module):
    """Root-mean-square normalization (Zhang & Sennrich, 2019), x (..., *normalized_shape).

    y = x / sqrt(mean(x^2) + eps) * weight: no mean subtraction and no bias (LLaMA, Mistral).
    eps=None uses torch.finfo of the computation dtype (float32, or float64 for float64
    inputs), as nn.RMSNorm does. fp16/bf16 inputs are computed in float32 and cast back.
    """

    def __init__(self, normalized_shape, eps=1e-6, elementwise_affine=True):
        super().__init__()
        self.normalized_shape = _as_shape(normalized_shape)
        self.eps = eps
        if elementwise_affine:
            self.weight = nn.Parameter(torch.ones(self.normalized_shape))
        else:
            self.weight = None

    def forward(self, x):
        dims = tuple(range(-len(self.normalized_shape), 0))
        h = _work(x)
        eps = torch.finfo(h.dtype).eps if self.eps is None else self.eps
        y = h * torch.rsqrt(h.pow(2).mean(dim=dims, keepdim=True) + eps)
        if self.weight is not None:
            y = y * self.weight
        return y.to(x.dtype)


_ACTIVATIONS = {
    "gelu": nn.GELU,  # exact erf form, as nn.TransformerEncoderLayer(activation="gelu")
    "gelu_tanh": lambda: nn.GELU(approximate="tanh"),  # GPT-2's approximation
    "relu": nn.ReLU,  # the original Transformer
}


class FeedForward(nn.Module):
    """Position-wise feed-forward network: linear2(dropout(act(linear1(x)))), x (B, T, d_model).

    Names linear1/linear2 match nn.TransformerEncoderLayer so weights copy across; d_ff is
    usually 4 * d_model.
    """

    def __init__(self, d_model, d_ff, dropout=0.0, activation="gelu"):
        super().__init__()
        self.linear1 = nn.Linear(d_model, d_ff)
        self.activation = _ACTIVATIONS[activation]()
        self.dropout = nn.Dropout(dropout)
        self.linear2 = nn.Linear(d_ff, d_model)

    def forward(self, x):
        return self.linear2(self.dropout(self.activation(self.linear1(x))))


class SwiGLU(nn.Module):
    """Gated feed-forward network of Shazeer (2020): w_down(silu(w_gate(x)) * w_up(x)).

    Three matrices instead of two; LLaMA picks d_ff about 8/3 * d_model to keep the parameter
    count of a 4 * d_model FeedForward.
    """

    def __init__(self, d_model, d_ff, bias=False):
        super().__init__()
        self.w_gate = nn.Linear(d_model, d_ff, bias=bias)
        self.w_up = nn.Linear(d_model, d_ff, bias=bias)
        self.w_down = nn.Linear(d_ff, d_model, bias=bias)

    def forward(self, x):
        return self.w_down(F.silu(self.w_gate(x)) * self.w_up(x))


class TransformerBlock(nn.Module):
    """Self-attention and feed-forward sublayers, each with a residual connection and LayerNorm.

    norm_first=True (pre-norm, GPT-2 and later): x + attn(norm1(x)), then x + ffn(norm2(x)).
    norm_first=False (post-norm, Vaswani et al. 2017, BERT): norm1(x + attn(x)), then
    norm2(x + ffn(x)). Dropout is applied to each sublayer output before the addition.
    forward(x (B, T, d_model), mask=None) -> (B, T, d_model); mask is a bool keep-mask
    broadcastable to (B, h, T, T), ANDed with the causal mask when causal=True.
    With dropout 0 it matches nn.TransformerEncoderLayer(batch_first=True, norm_first=...,
    activation="gelu") after copying weights (self_attn via multihead.load_torch_mha).
    """

    def __init__(
        self,
        d_model,
        num_heads,
        d_ff,
        dropout=0.0,
        norm_first=True,
        activation="gelu",
        causal=False,
        eps=1e-5,
        context_length=None,
    ):
        super().__init__()
        self.norm_first = norm_first
        self.self_attn = MultiHeadAttention(
            d_model, d_model, context_length, dropout, num_heads, qkv_bias=True, causal=causal
        )
        self.norm1 = LayerNorm(d_model, eps=eps)
        self.norm2 = LayerNorm(d_model, eps=eps)
        self.ffn = FeedForward(d_model, d_ff, dropout, activation)
        self.dropout1 = nn.Dropout(dropout)
        self.dropout2 = nn.Dropout(dropout)

    def _attn(self, x, mask):
        return self.dropout1(self.self_attn(x, mask=mask))

    def _ff(self, x):
        return self.dropout2(self.ffn(x))

    def forward(self, x, mask=None):
        if self.norm_first:
            x = x + self._attn(self.norm1(x), mask)
            return x + self._ff(self.norm2(x))
        x = self.norm1(x + self._attn(x, mask))
        return self.norm2(x + self._ff(x))


@torch.no_grad()
def load_torch_encoder_layer(block, layer):
    """Copy an nn.TransformerEncoderLayer's weights into a TransformerBlock (in place).

    self_attn goes through multihead.load_torch_mha; linear1/linear2 and norm1/norm2 copy by name.
    Returns block.
    """
    load_torch_mha(block.self_attn, layer.self_attn)
    for ours, theirs in [
        (block.ffn.linear1, layer.linear1),
        (block.ffn.linear2, layer.linear2),
        (block.norm1, layer.norm1),
        (block.norm2, layer.norm2),
    ]:
        ours.weight.copy_(theirs.weight)
        ours.bias.copy_(theirs.bias)
    return block


def gradient_norms_per_layer(blocks, x, loss_fn=None):
    """Gradient norm of each block's parameters after one backward pass, as a list of floats.

    blocks: a sequence of modules applied in order to x (B, T, d_model); loss_fn(output) -> scalar,
    default the mean of squares. Used for the pre- vs post-norm figure (Xiong et al., 2020):
    at initialization post-norm gradients grow toward the last layers, pre-norm ones do not.
    Existing .grad values are cleared first.
    """
    loss_fn = loss_fn or (lambda y: y.pow(2).mean())
    for block in blocks:
        block.zero_grad(set_to_none=True)
    y = x
    for block in blocks:
        y = block(y)
    loss_fn(y).backward()
    norms = []
    for block in blocks:
        grads = [p.grad.flatten() for p in block.parameters() if p.grad is not None]
        norms.append(torch.cat(grads).norm().item() if grads else 0.0)
    return norms
