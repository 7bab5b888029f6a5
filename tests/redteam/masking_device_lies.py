"""Masks returned as int/float tensors, on 'meta', as numpy arrays, as nested lists, as strings."""

ASSIGNMENT = "masking"
CELLS = {
    "causal_attention": r'''
import numpy as np

def causal_mask(T, S=None, device=None):
    return torch.ones(T, S or T, device="meta")

def padding_mask(lengths, S=None):
    return np.ones((len(lengths), 1, 1, S or 3), dtype=bool).tolist()

def combine_masks(*masks):
    return "True"

def masked_softmax(scores, mask, dim=-1):
    return np.zeros(tuple(scores.shape), dtype=np.float32)

def masked_softmax_renorm(scores, mask, dim=-1):
    return {"weights": scores * 0}

class CausalAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, qkv_bias=False):
        super().__init__()
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)

    def forward(self, x):
        return self.W_value(x).to(torch.float16)
'''
}
