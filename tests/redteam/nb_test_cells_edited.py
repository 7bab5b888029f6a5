"""Test cells rewritten: asserts replaced by `pass`, hidden regions removed, grade flags off."""

import json

ASSIGNMENT = "softmax"
CELLS = {"cross_entropy": "__WRONG__"}


def build(nb, ctx):
    for c in nb["cells"]:
        meta = c["metadata"].get("nbgrader", {})
        if meta.get("grade"):
            c["source"] = "pass  # all good\n"
            meta["points"] = 0.0001
    return json.dumps(nb).encode()
