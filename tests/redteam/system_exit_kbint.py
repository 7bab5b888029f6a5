"""SystemExit, KeyboardInterrupt, GeneratorExit and BaseException subclasses everywhere."""

ASSIGNMENT = "softmax"
CELLS = {
    "softmax": r'''
def softmax(x, dim=-1, temperature=1.0):
    raise SystemExit(0)
''',
    "softmax_jacobian": r'''
def softmax_jacobian(p):
    raise KeyboardInterrupt
''',
    "log_softmax": r'''
class Sneaky(BaseException):
    pass
def log_softmax(x, dim=-1):
    raise Sneaky("passed")
''',
    "cross_entropy": r'''
def cross_entropy(logits, target, ignore_index=-100, reduction="mean"):
    raise GeneratorExit
raise SystemExit("all tests passed")
''',
}
