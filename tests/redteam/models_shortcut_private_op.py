"""Forbidden shortcut by a private entry point of the same operation: the overload
torch.ops.aten._scaled_dot_product_attention_math.default (an additive float mask)."""

ASSIGNMENT = "models"
CLASS = 1  # the forbidden-shortcut rule (F.scaled_dot_product_attention in ModernBlock)
CONTROL_FAILS = ("test_modern_block",)
SCORES = "        scores = q @ k.transpose(-2, -1) / math.sqrt(self.d_head)"
CALL = """        i = torch.arange(T, device=x.device)
        keep = i[None, :] <= i[:, None]
        if mask is not None:
            keep = keep & mask
        return self.out_proj(_attend(q, k, v, keep).transpose(1, 2).reshape(B, T, -1))
"""


def honest(sol):
    """Honest control: grouped-query attention with the attention itself left blank."""
    blank = "        raise NotImplementedError  # the attention itself: left blank"
    return {"modern_block": sol.edit("modern_block", (SCORES, blank))}


def attack(sol):
    return {"modern_block": HELPER + "\n\n" + sol.edit("modern_block", (SCORES, CALL))}

HELPER = r'''
def _attend(q, k, v, keep):
    bias = torch.zeros(keep.shape, dtype=q.dtype, device=q.device).masked_fill(~keep, -math.inf)
    return torch.ops.aten._scaled_dot_product_attention_math.default(q, k, v, bias)[0]
'''
