"""Solution grade_ids carried by markdown/raw cells placed first, and metadata that is not a dict."""

import json

ASSIGNMENT = "softmax"
CELLS = {}


def build(nb, ctx):
    fake = [
        {"cell_type": "markdown", "metadata": {"nbgrader": {"grade_id": "softmax", "solution": True}},
         "source": "def softmax(x, dim=-1, temperature=1.0):\n    return x * 0\n"},
        {"cell_type": "raw", "metadata": {"nbgrader": "not a dict"}, "source": "x"},
        {"cell_type": "code", "metadata": ["weird"], "source": ["import os\n", 1, None],
         "outputs": [], "execution_count": None},
        {"cell_type": "evil", "metadata": {}, "source": {"a": 1}},
        "not a cell",
    ]
    nb["cells"] = fake + nb["cells"]
    return json.dumps(nb).encode()
