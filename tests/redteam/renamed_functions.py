"""Correct-looking code under the wrong names (and the graded names deleted)."""

ASSIGNMENT = "softmax"
CELLS = {
    "cross_entropy": r'''
def my_softmax(x, dim=-1, temperature=1.0):
    return torch.softmax(x / temperature, dim=dim)
def jacobian(p):
    return torch.diag_embed(p) - p.unsqueeze(-1) * p.unsqueeze(-2)
for _name in ("softmax", "softmax_jacobian", "log_softmax", "cross_entropy"):
    globals().pop(_name, None)
'''
}
