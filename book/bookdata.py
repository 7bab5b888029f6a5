"""Example inputs shared by the book's chapters (import bookdata; the kernel runs in book/, or in
the chapters/ folder of the student bundle, where this file sits next to the notebooks).

Only data lives here: no graded code, nothing a student implements in an assignment.
"""

import torch

# The example sentence of Raschka (2024), chapter 3, one token per row of example_inputs().
TOKENS = ["Your", "journey", "starts", "with", "one", "step"]


def example_inputs(*, device=None, dtype=None):
    """(6, 3) toy embeddings of the tokens of TOKENS, the values printed in Raschka (2024), ch. 3,
    so the pages can reproduce the book's numbers by hand."""
    rows = [  # one row per token: Your, journey, starts, with, one, step
        [0.43, 0.15, 0.89],
        [0.55, 0.87, 0.66],
        [0.57, 0.85, 0.64],
        [0.22, 0.58, 0.33],
        [0.77, 0.25, 0.10],
        [0.05, 0.80, 0.55],
    ]
    return torch.tensor(rows, device=device, dtype=dtype)
