"""Syntax errors and an IndentationError in every solution cell."""

ASSIGNMENT = "softmax"
CELLS = {
    "softmax": "def softmax(x, dim=-1, temperature=1.0)\n    return x",
    "softmax_jacobian": "def softmax_jacobian(p):\nreturn p",
    "log_softmax": "def log_softmax(x, dim=-1): return (x",
    "cross_entropy": "lambda: yield from",
}
