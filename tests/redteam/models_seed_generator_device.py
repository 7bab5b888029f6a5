"""The generator on the wrong device: drawn on input_ids.device instead of the CPU, so results
depend on the grader's hardware -- full marks on a CPU grader, a failure on a GPU grader (the
cpu/cuda comparison in the seed check), i.e. two regrades of one notebook disagree."""

ASSIGNMENT = "models"
CLASS = 4  # seeded randomness checked by several calls in one process
CONTROL_FAILS = ("test_mlm_mask",)
GEN = "    g = torch.Generator().manual_seed(seed)"


def honest(sol):
    """Control: mlm_mask left blank."""
    return {}


def attack(sol):
    dev = "    g = torch.Generator(device=input_ids.device).manual_seed(seed)"
    return {
        "mlm_mask": sol.edit(
            "mlm_mask",
            (GEN, dev),
            ("torch.rand(input_ids.shape, generator=g)",
             "torch.rand(input_ids.shape, generator=g, device=input_ids.device)"),
            ("torch.randint(vocab_size, input_ids.shape, generator=g)",
             "torch.randint(vocab_size, input_ids.shape, generator=g, device=input_ids.device)"),
        )
    }
