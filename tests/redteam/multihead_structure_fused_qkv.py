"""A module with one fused q/k/v projection (the notebook fixes one nn.Linear per role) that
claims the notebook's structure: state_dict() reports W_query/W_key/W_value as slices,
load_state_dict() fuses them back and named_parameters() hands out per-role parameters whose
gradients are slices of the fused one."""

ASSIGNMENT = "multihead"
CLASS = 3  # structure taken at the module's word
CONTROL_FAILS = ("test_multihead_attention", "test_mha_mask_cross")

FUSED = r'''
class MultiHeadAttention(nn.Module):
    def __init__(
        self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False, causal=True
    ):
        super().__init__()
        self.num_heads = num_heads
        self.head_dim = d_out // num_heads
        self.causal = causal
        self.qkv = nn.Linear(d_in, 3 * d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)
        self.dropout = nn.Dropout(dropout)
        if causal:
            self.register_buffer("mask", causal_mask(context_length), persistent=False)
__DISGUISE__
    def forward(self, x, context=None, mask=None):
        source = x if context is None else context
        w = self.qkv.weight.chunk(3)
        b = self.qkv.bias.chunk(3) if self.qkv.bias is not None else (None, None, None)
        q = split_heads(F.linear(x, w[0], b[0]), self.num_heads)
        k = split_heads(F.linear(source, w[1], b[1]), self.num_heads)
        v = split_heads(F.linear(source, w[2], b[2]), self.num_heads)
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.head_dim)
        if self.causal and context is None:
            T = x.shape[1]
            causal = self.mask[:T, :T]
            mask = causal if mask is None else mask & causal
        weights = self.dropout(masked_softmax(scores, mask))
        return self.out_proj(merge_heads(weights @ v))
'''

DISGUISE = r'''
    ROLES = ("W_query", "W_key", "W_value")

    def state_dict(self, *args, destination=None, prefix="", keep_vars=False):
        sd = super().state_dict(destination=destination, prefix=prefix, keep_vars=keep_vars)
        for kind in ("weight", "bias"):
            t = sd.pop(f"{prefix}qkv.{kind}", None)
            if t is not None:
                for role, part in zip(self.ROLES, t.chunk(3)):
                    sd[f"{prefix}{role}.{kind}"] = part
        return sd

    def load_state_dict(self, state_dict, strict=True, assign=False):
        sd = dict(state_dict)
        for kind in ("weight", "bias"):
            parts = [sd.pop(f"{role}.{kind}", None) for role in self.ROLES]
            if parts[0] is not None:
                sd[f"qkv.{kind}"] = torch.cat(parts)
        return super().load_state_dict(sd, strict, assign)

    def named_parameters(self, prefix="", recurse=True, remove_duplicate=True):
        for name, p in super().named_parameters(prefix, recurse, remove_duplicate):
            head, _, kind = name.rpartition(".")
            if head.endswith("qkv"):
                base = head[: -len("qkv")]
                grads = p.grad.chunk(3) if p.grad is not None else (None, None, None)
                for role, part, g in zip(self.ROLES, p.detach().chunk(3), grads):
                    fake = nn.Parameter(part.clone())
                    fake.grad = g
                    yield f"{base}{role}.{kind}", fake
                continue
            yield name, p
'''


def honest(sol):
    """Honest control: one fused q/k/v projection, named as such (outputs right)."""
    return {
        "split_heads": sol["split_heads"],
        "multihead_attention": FUSED.replace("__DISGUISE__", ""),
        "torch_mha": sol["torch_mha"],
    }


def attack(sol):
    cells = honest(sol)
    cells["multihead_attention"] = FUSED.replace("__DISGUISE__", DISGUISE)
    return cells
