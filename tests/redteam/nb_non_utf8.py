"""Latin-1/binary bytes inside a notebook (not valid UTF-8), plus a BOM."""

import json

ASSIGNMENT = "softmax"
CELLS = {"cross_entropy": "__WRONG__\n# caf\u00e9"}


def build(nb, ctx):
    raw = json.dumps(nb, ensure_ascii=False).encode("utf-8")
    return b"\xef\xbb\xbf" + raw.replace("caf\u00e9".encode(), b"caf\xe9\xff\xfe")
