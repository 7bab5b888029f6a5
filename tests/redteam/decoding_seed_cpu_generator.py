"""The generator on the wrong device: a CPU generator whatever idx.device is (the notebook says
make_generator(seed, idx.device)); identical on a CPU grader, an error on a GPU grader, so two
regrades of one notebook disagree."""

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
DRAW = "    gen = torch.Generator().manual_seed(seed)"
