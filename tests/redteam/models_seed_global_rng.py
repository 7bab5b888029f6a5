"""The global generator instead of a private one: torch.manual_seed(seed) and draws without a
generator, which the notebook forbids (it changes the global random state); the hidden checks
only compare results, so it passes."""

ASSIGNMENT = "models"
CLASS = 4  # seeded randomness checked by several calls in one process
CONTROL_FAILS = ("test_mlm_mask",)
GEN = "    g = torch.Generator().manual_seed(seed)"


def honest(sol):
    """Control: mlm_mask left blank."""
    return {}


def attack(sol):
    glob = "    torch.manual_seed(seed)\n    g = None  # the global generator"
    return {"mlm_mask": sol.edit("mlm_mask", (GEN, glob))}
