"""An nbformat v3 notebook (worksheets) carrying nbgrader metadata and wrong code."""

import json

ASSIGNMENT = "softmax"
CELLS = {}


def build(nb, ctx):
    cells = []
    for c in nb["cells"]:
        meta = c["metadata"]
        if c["cell_type"] == "code":
            src = "def softmax(x, dim=-1, temperature=1.0):\n    return x * 0\n" if meta.get(
                "nbgrader", {}).get("solution") else c["source"]
            cells.append({"cell_type": "code", "input": src, "language": "python",
                          "metadata": meta, "outputs": [], "collapsed": False})
        else:
            cells.append({"cell_type": "markdown", "source": c["source"], "metadata": meta})
    v3 = {"nbformat": 3, "nbformat_minor": 0, "metadata": {"name": "softmax"},
          "worksheets": [{"cells": cells, "metadata": {}}]}
    return json.dumps(v3).encode()
