"""A truncated, invalid JSON file."""

ASSIGNMENT = "softmax"
CELLS = {}


def build(nb, ctx):
    return b'{"cells": [{"cell_type": "code", "source": "def softmax(x): return x'
