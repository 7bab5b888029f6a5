"""Extra files in the submission folder: symlinks to the solutions, checks and gradebook, which
nbgrader copies into autograded/ and feedback/."""

import os

ASSIGNMENT = "softmax"
CELLS = {"cross_entropy": "__WRONG__"}


def extra(folder, ctx):
    os.symlink(ctx["repo"] / "solutions" / "softmax.py", folder / "notes.py")
    os.symlink(ctx["repo"] / "autograder" / "checks" / "softmax.py", folder / "checks.txt")
    os.symlink(ctx["course"] / "source" / "softmax" / "softmax.ipynb", folder / "copy.ipynb")
    os.symlink(ctx["repo"] / "solutions", folder / "solutions_dir")
