"""The seed replaced by its call order: the generator is seeded with the number of distinct seeds
seen before it (0, 1, 2, ...), so within one process the same seed gives the same result and
another seed another one, while the seed's value is never used."""

ASSIGNMENT = "models"
CLASS = 4  # seeded randomness checked by several calls in one process
CONTROL_FAILS = ("test_mlm_mask",)
GEN = "    g = torch.Generator().manual_seed(seed)"


def honest(sol):
    """Honest control: a sampler that ignores the seed (a generator seeded with 0)."""
    return {"mlm_mask": sol.edit("mlm_mask", (GEN, "    g = torch.Generator().manual_seed(0)"))}


def attack(sol):
    order = "    g = torch.Generator().manual_seed(_ORDER.setdefault(seed, len(_ORDER)))"
    return {"mlm_mask": "_ORDER = {}\n\n" + sol.edit("mlm_mask", (GEN, order))}
