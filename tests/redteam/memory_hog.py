"""Allocate (and touch) far more memory than allowed: 8 GiB at once, then 256 MiB chunks."""

ASSIGNMENT = "softmax"
CELLS = {
    "softmax": r'''
import torch
def softmax(x, dim=-1, temperature=1.0):
    hog = []
    try:
        hog.append(bytearray(8 << 30))
    except MemoryError:
        pass
    try:
        hog.append(torch.ones(2 ** 31))  # 8 GiB of float32
    except (RuntimeError, MemoryError):
        pass
    for _ in range(40):  # at most 10 GiB, touched page by page
        hog.append(torch.ones(64 << 20))
    return x * 0
''',
    "log_softmax": r'''
def log_softmax(x, dim=-1):
    return x.new_ones(1 << 33)  # 32 GiB result
''',
}
