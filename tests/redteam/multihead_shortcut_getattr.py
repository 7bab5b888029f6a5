"""Forbidden shortcut by a name built at run time: getattr(F, "scaled_dot_" + ...)."""

ASSIGNMENT = "multihead"
CLASS = 1  # the forbidden-shortcut rule (F.scaled_dot_product_attention, nn.MultiheadAttention)
CONTROL_FAILS = ("test_multihead_attention", "test_mha_mask_cross")
ATTENTION = "        weights = self.dropout(masked_softmax(scores, mask))"


def honest(sol):
    """Honest control: MultiHeadAttention with the attention itself left blank."""
    blank = "        raise NotImplementedError  # the attention itself: left blank"
    return {
        "split_heads": sol["split_heads"],
        "multihead_attention": sol.edit("multihead_attention", (ATTENTION, blank)),
        "torch_mha": sol["torch_mha"],
    }


def attack(sol):
    call = "        return self.out_proj(merge_heads(_attend(q, k, v, mask, self)))"
    cells = honest(sol)
    cells["multihead_attention"] = HELPER + "\n\n" + sol.edit("multihead_attention", (ATTENTION, call))
    return cells

HELPER = r'''
def _attend(q, k, v, mask, m):
    fn = getattr(F, "scaled_dot_" + "product_" + "attention")
    out = fn(q, k, v, attn_mask=mask, dropout_p=m.dropout.p if m.training else 0.0)
    return torch.nan_to_num(out)  # a fully blocked row: zeros, as masked_softmax gives
'''
