"""100 MB on stdout/stderr, a 100 MB exception message, an 80 MB tensor, 10^6-item results."""

ASSIGNMENT = "softmax"
CELLS = {
    "softmax": r'''
import sys
def softmax(x, dim=-1, temperature=1.0):
    chunk = "A" * (1 << 20)
    for _ in range(100):
        sys.stdout.write(chunk)
        sys.stderr.write(chunk)
    raise RuntimeError("B" * (100 << 20))
''',
    "softmax_jacobian": r'''
import torch
def softmax_jacobian(p):
    return torch.zeros(20 << 20)  # 80 MB, above the reply limit
''',
    "log_softmax": r'''
def log_softmax(x, dim=-1):
    return [0.0] * 1_000_000
''',
    "cross_entropy": r'''
def cross_entropy(logits, target, ignore_index=-100, reduction="mean"):
    out = 0.0
    for _ in range(500):
        out = [out]
    return out
print("C" * (100 << 20))
''',
}
