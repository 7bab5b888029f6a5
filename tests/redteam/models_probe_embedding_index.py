"""A device bug the device probe misses without any trick: GPTModel makes its positions without a
device (`torch.arange(T)`). Under the probe they land on 'meta', but F.embedding accepts a meta
index with a CPU weight and returns a CPU tensor, so no device mix shows; on a GPU grader the
same notebook fails (two regrades disagree)."""

ASSIGNMENT = "models"
CLASS = 2  # probes inside the student's process: the device probe (coverage)
CONTROL_FAILS = ("test_gpt_model", "test_gpt_causal")
POS = "        pos = torch.arange(idx.shape[1], device=idx.device)"


def honest(sol):
    """Control: GPTModel left blank."""
    return {}


def attack(sol):
    return {"gpt_model": sol.edit("gpt_model", (POS, "        pos = torch.arange(idx.shape[1])"))}
