"""MultiHeadAttention that refuses the judge's weights: load_state_dict/state_dict/train/to
overridden, nn.Module and nn.Linear patched globally, outputs made from nothing."""

ASSIGNMENT = "multihead"
CELLS = {
    "multihead_attention": r'''
__WRONG__
nn.Module.load_state_dict = lambda self, *a, **k: None
nn.Module.eval = lambda self: self
nn.Linear.forward = lambda self, x: x[..., :1].expand(*x.shape[:-1], self.out_features) * 0


class MultiHeadAttention(nn.Module):
    def __init__(self, d_in, d_out, *args, **kwargs):
        super().__init__()
        self.W_query = nn.Linear(d_in, d_out)
        self.d_out = d_out

    def load_state_dict(self, *a, **k):
        return None

    def state_dict(self, *a, **k):
        return {"W_query.weight": torch.zeros(1), "out_proj.weight": "not a tensor"}

    def train(self, mode=True):
        return self

    def to(self, *a, **k):
        return self

    def forward(self, x, *args, **kwargs):
        return torch.zeros(*x.shape[:-1], self.d_out)
'''
}
