"""CausalAttention that refuses the judge's weights: load_state_dict/state_dict/eval/train/to
overridden, nn.Module patched globally, output computed from nothing."""

ASSIGNMENT = "masking"
CELLS = {
    "causal_attention": r'''
__WRONG__
import torch.nn as nn

nn.Module.load_state_dict = lambda self, *a, **k: None
nn.Module.eval = lambda self: self
nn.Linear.forward = lambda self, x: x[..., :1].expand(*x.shape[:-1], self.out_features) * 0

class CausalAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, qkv_bias=False):
        super().__init__()
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.d_out = d_out

    def load_state_dict(self, *a, **k):
        return None

    def state_dict(self, *a, **k):
        return {"W_query.weight": torch.zeros(1), "mask": "not a tensor"}

    def train(self, mode=True):
        return self

    def to(self, *a, **k):
        return self

    def forward(self, x):
        return torch.zeros(*x.shape[:-1], self.d_out)
'''
}
