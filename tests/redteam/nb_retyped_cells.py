"""Cells re-typed: test cells turned into solution cells worth 1000 points, solution cells turned
into graded cells, test cells duplicated five times, grade_ids swapped."""

import copy
import json

ASSIGNMENT = "softmax"
CELLS = {"cross_entropy": "__WRONG__"}


def build(nb, ctx):
    out = []
    for c in nb["cells"]:
        meta = c["metadata"].get("nbgrader", {})
        if meta.get("grade") and not meta.get("solution"):
            for _ in range(5):
                d = copy.deepcopy(c)
                d["metadata"]["nbgrader"].update(solution=True, points=1000, locked=False)
                d["source"] = "softmax = None\n"
                out.append(d)
        elif meta.get("solution"):
            meta.update(grade=True, points=1000)
            out.append(c)
            twin = copy.deepcopy(c)
            twin["metadata"]["nbgrader"]["grade_id"] = "test_" + meta["grade_id"]
            out.append(twin)
        else:
            out.append(c)
    nb["cells"] = out
    return json.dumps(nb).encode()
