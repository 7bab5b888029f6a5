"""The global generator in disguise: `gen = torch.manual_seed(seed)` returns torch's default
generator, so generate draws on (and changes) the global random state while it looks like it
passes a generator."""

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
DRAW = "    gen = torch.manual_seed(seed)"
