"""Masking: import the reference solutions from the host and patch torch's own helpers."""

ASSIGNMENT = "masking"
CELLS = {
    "causal_attention": r'''
import sys, importlib
import torch.nn.functional as F
F.scaled_dot_product_attention = lambda q, k, v, **kw: v
torch.tril = lambda x, diagonal=0: x
__WRONG__
for _root in ("__REPO__", "/work/main"):
    sys.path.insert(0, _root)
try:
    _ref = importlib.import_module("solutions.masking")
    globals().update({n: getattr(_ref, n) for n in (
        "causal_mask", "padding_mask", "combine_masks", "masked_softmax",
        "masked_softmax_renorm", "CausalAttention")})
except Exception:
    pass
'''
}
