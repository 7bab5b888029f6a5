"""Multi-head attention: the wrapper of single heads and the weight-split version (Raschka §3.6).

Shapes: B batch, T query length, S key length, h heads, d_head = d_out // h.
Masks follow the course convention: bool, True = may attend.
"""

import torch
import torch.nn as nn

from solutions.attention import scaled_dot_product_attention
from solutions.masking import CausalAttention, causal_mask, combine_masks


def split_heads(x, num_heads):
    """(B, T, d) -> (B, h, T, d_head): view the last dim as h blocks, then move h in front of T."""
    B, T, d = x.shape
    if d % num_heads != 0:
        raise ValueError(f"d={d} is not divisible by num_heads={num_heads}")
    return x.view(B, T, num_heads, d // num_heads).transpose(1, 2)


def merge_heads(x):
    """(B, h, T, d_head) -> (B, T, h * d_head); inverse of split_heads.

    The transpose makes the tensor non-contiguous, hence .contiguous() before .view().
    """
    B, h, T, d_head = x.shape
    return x.transpose(1, 2).contiguous().view(B, T, h * d_head)


class MultiHeadAttentionWrapper(nn.Module):
    """num_heads independent CausalAttention modules run one after another (Raschka listing 3.4).

    forward(x (B, T, d_in)) -> (B, T, num_heads * d_out): the heads' outputs side by side.
    """

    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__()
        self.heads = nn.ModuleList(
            [
                CausalAttention(d_in, d_out, context_length, dropout, qkv_bias)
                for _ in range(num_heads)
            ]
        )

    def forward(self, x):
        return torch.cat([head(x) for head in self.heads], dim=-1)


class MultiHeadAttention(nn.Module):
    """Multi-head attention with one projection per role, split into heads (Raschka listing 3.5).

    W_query, W_key, W_value: nn.Linear(d_in, d_out) (created in this order, so manual_seed(123)
    reproduces Raschka), out_proj: nn.Linear(d_out, d_out), dropout on the attention weights.
    causal=True keeps a bool buffer "mask" (context_length, context_length), True = may attend;
    context_length=None builds the causal mask on the fly instead (any length). The buffer is
    not persistent: it stays out of state_dict, so a Raschka-style float buffer (1 = blocked, the
    opposite meaning) can never be loaded into it silently.

    forward(x (B, T, d_in), context=None, mask=None, return_weights=False)
      context (B, S, d_in): cross-attention; keys and values come from context and the causal
        rule is not applied.
      mask: bool keep-mask broadcastable to (B, h, T, S) (e.g. masking.padding_mask), ANDed with
        the causal mask. A query row with every key blocked gets all-zero weights (zero output
        before out_proj), never NaN.
    Returns (B, T, d_out), or (out, weights (B, h, T, S)) with return_weights=True; in train()
    the weights are the ones after dropout (those applied to the values), as in PyTorch.
    """

    def __init__(
        self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False, causal=True
    ):
        super().__init__()
        if d_out % num_heads != 0:
            raise ValueError("d_out must be divisible by num_heads")
        self.d_out = d_out
        self.num_heads = num_heads
        self.head_dim = d_out // num_heads
        self.causal = causal
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)
        self.dropout = nn.Dropout(dropout)
        if causal and context_length is not None:
            self.register_buffer("mask", causal_mask(context_length), persistent=False)
        else:
            self.mask = None

    def _causal(self, T, device):
        if self.mask is None:
            return causal_mask(T, device=device)
        if T > self.mask.shape[0]:
            raise ValueError(f"sequence length {T} exceeds context_length {self.mask.shape[0]}")
        return self.mask[:T, :T]

    def forward(self, x, context=None, mask=None, return_weights=False):
        source = x if context is None else context
        q = split_heads(self.W_query(x), self.num_heads)  # (B, h, T, d_head)
        k = split_heads(self.W_key(source), self.num_heads)  # (B, h, S, d_head)
        v = split_heads(self.W_value(source), self.num_heads)  # (B, h, S, d_head)
        if self.causal and context is None:
            mask = combine_masks(self._causal(x.shape[1], x.device), mask)
        out, weights = scaled_dot_product_attention(
            q, k, v, mask=mask, dropout_p=self.dropout.p, training=self.training
        )
        out = self.out_proj(merge_heads(out))  # (B, T, d_out)
        return (out, weights) if return_weights else out


def mha_parameter_count(d_model, bias=True):
    """Parameters of multi-head attention with d_in = d_out = d_model.

    Four d_model x d_model matrices (query, key, value, output): 4 d^2, plus 4 d biases.
    The count does not depend on the number of heads.
    """
    return 4 * d_model * d_model + (4 * d_model if bias else 0)


def count_parameters(module):
    """Number of trainable scalars in a module (buffers such as the causal mask do not count)."""
    return sum(p.numel() for p in module.parameters() if p.requires_grad)


@torch.no_grad()
def load_torch_mha(ours, torch_mha):
    """Copy the weights of an nn.MultiheadAttention into our MultiHeadAttention (in place).

    nn.MultiheadAttention packs the three input projections as in_proj_weight = [W_q; W_k; W_v]
    (3d, d) and in_proj_bias (3d,); nn.Linear weights are (out, in) too, so no transpose.
    Returns ours.
    """
    if ours.num_heads != torch_mha.num_heads or ours.d_out != torch_mha.embed_dim:
        raise ValueError("head count or width differs")
    if torch_mha.in_proj_weight is None:
        raise ValueError("needs the packed layout (kdim == vdim == embed_dim)")
    layers = (ours.W_query, ours.W_key, ours.W_value)
    for layer, w in zip(layers, torch_mha.in_proj_weight.chunk(3), strict=True):
        layer.weight.copy_(w)
    if torch_mha.in_proj_bias is not None:
        biases = torch_mha.in_proj_bias.chunk(3)
        for layer, b in zip(layers, biases, strict=True):
            if layer.bias is not None:
                layer.bias.copy_(b)
            elif b.any():
                raise ValueError(
                    "torch module has nonzero in_proj_bias but ours has qkv_bias=False"
                )
    ours.out_proj.weight.copy_(torch_mha.out_proj.weight)
    if torch_mha.out_proj.bias is not None:
        ours.out_proj.bias.copy_(torch_mha.out_proj.bias)
    else:
        ours.out_proj.bias.zero_()
    return ours


@torch.no_grad()
def to_torch_mha(ours):
    """An nn.MultiheadAttention(batch_first=True) with our weights (on our device and dtype).

    Needs d_in == d_out (nn.MultiheadAttention's query width is embed_dim). Without qkv_bias the
    packed in_proj_bias is set to zero. The causal rule is not stored in nn.MultiheadAttention:
    pass attn_mask (True = blocked there, the opposite of our convention) when calling it.
    """
    w = ours.W_query.weight
    d_in = w.shape[1]
    if d_in != ours.d_out:
        raise ValueError("to_torch_mha needs d_in == d_out")
    mha = nn.MultiheadAttention(
        ours.d_out,
        ours.num_heads,
        dropout=ours.dropout.p,
        bias=True,
        batch_first=True,
        device=w.device,
        dtype=w.dtype,
    )
    layers = (ours.W_query, ours.W_key, ours.W_value)
    mha.in_proj_weight.copy_(torch.cat([layer.weight for layer in layers], dim=0))
    if ours.W_query.bias is not None:
        mha.in_proj_bias.copy_(torch.cat([layer.bias for layer in layers]))
    else:
        mha.in_proj_bias.zero_()
    mha.out_proj.weight.copy_(ours.out_proj.weight)
    mha.out_proj.bias.copy_(ours.out_proj.bias)
    return mha


def from_torch_mha_state(state):
    """nn.MultiheadAttention's state_dict -> a state_dict for our MultiHeadAttention.

    state: {"in_proj_weight" (3d, d), optional "in_proj_bias" (3d,), "out_proj.weight" (d, d),
    optional "out_proj.bias" (d,)} (bias=False leaves both biases out). The packed rows are
    [W_q; W_k; W_v]; nn.Linear weights are (out, in) too, so no transpose. Without in_proj_bias
    there are no W_*.bias keys (our qkv_bias=False); a missing out_proj.bias becomes zeros (our
    out_proj always has a bias). Tensors keep the input's device and dtype.
    """
    out = {}
    roles = ("W_query", "W_key", "W_value")
    for role, w in zip(roles, state["in_proj_weight"].chunk(3), strict=True):
        out[f"{role}.weight"] = w
    if state.get("in_proj_bias") is not None:
        for role, b in zip(roles, state["in_proj_bias"].chunk(3), strict=True):
            out[f"{role}.bias"] = b
    w_o = state["out_proj.weight"]
    out["out_proj.weight"] = w_o
    bias = state.get("out_proj.bias")
    out["out_proj.bias"] = bias if bias is not None else w_o.new_zeros(w_o.shape[0])
    return out


def keep_mask_from_torch(attn_mask=None, key_padding_mask=None):
    """nn.MultiheadAttention's bool masks (True = blocked) -> our keep-mask (True = may attend).

    attn_mask (T, S) -> (T, S); key_padding_mask (B, S) -> (B, 1, 1, S); both -> (B, 1, T, S)
    (AND of the two keep-masks); neither -> None.
    """
    keep = None if attn_mask is None else ~attn_mask
    if key_padding_mask is not None:
        pad = ~key_padding_mask[:, None, None, :]
        keep = pad if keep is None else keep & pad
    return keep
