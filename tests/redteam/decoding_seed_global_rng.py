"""The global generator instead of the notebook's: torch.manual_seed(seed) and
torch.multinomial without a generator give the same tokens as make_generator(seed, "cpu") on a
CPU grader, while changing the global random state, which the notebook forbids (its public test
checks it); the hidden checks only compare tokens."""

ASSIGNMENT = "decoding"
CLASS = 4  # seeded randomness
CONTROL_FAILS = ("test_generate",)
GEN = "    gen = make_generator(seed, idx.device)"
HELPERS = ("top_k_filter", "top_p_filter", "apply_repetition_penalty", "no_repeat_ngram_ban")


def honest(sol):
    """Control: the filters right, generate left blank."""
    return {gid: sol[gid] for gid in HELPERS}


def attack(sol):
    cells = honest(sol)
    cells["generate"] = sol.edit("generate", (GEN, DRAW))
    return cells
DRAW = "    torch.manual_seed(seed)\n    gen = None  # the global generator"
