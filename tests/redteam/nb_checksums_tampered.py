"""Tampered nbgrader metadata: wrong checksums, unlocked cells, schema 99, odd grade_ids, ids."""

import json

ASSIGNMENT = "softmax"
CELLS = {"cross_entropy": "__WRONG__"}


def build(nb, ctx):
    for i, c in enumerate(nb["cells"]):
        c["id"] = "same-id"
        meta = c["metadata"].setdefault("nbgrader", {})
        meta["checksum"] = "0" * 32
        meta["locked"] = False
        meta["schema_version"] = 99
        if meta.get("grade"):
            meta["points"] = 1000
        if not meta.get("grade_id"):
            meta["grade_id"] = f"../../../gradebook{i}"
    nb["metadata"]["nbgrader"] = {"assignment": "softmax", "points": 1000}
    nb["metadata"]["kernelspec"] = {"name": "evil", "display_name": "evil", "language": "bash"}
    return json.dumps(nb).encode()
