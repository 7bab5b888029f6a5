"""Every test cell deleted from the submission (nothing left to fail)."""

import json

ASSIGNMENT = "softmax"
CELLS = {"cross_entropy": "__WRONG__"}


def build(nb, ctx):
    nb["cells"] = [c for c in nb["cells"] if not c["metadata"].get("nbgrader", {}).get("grade")]
    return json.dumps(nb).encode()
