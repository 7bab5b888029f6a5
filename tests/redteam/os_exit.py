"""os._exit(0) while loading and inside calls (a 'clean' exit instead of an error)."""

ASSIGNMENT = "softmax"
CELLS = {
    "softmax": r'''
import os
def softmax(x, dim=-1, temperature=1.0):
    os._exit(0)
''',
    "cross_entropy": r'''
import os
os._exit(0)
''',
}
