"""Shared fixtures: every device test runs on CPU, and on CUDA when one is present."""

import pytest
import torch

DEVICES = [
    "cpu",
    pytest.param(
        "cuda",
        marks=pytest.mark.skipif(
            not torch.cuda.is_available(), reason="no CUDA device on this machine"
        ),
    ),
]


@pytest.fixture(params=DEVICES)
def device(request):
    """Device name: 'cpu' always, 'cuda' when available (skipped with its reason otherwise)."""
    return torch.device(request.param)
