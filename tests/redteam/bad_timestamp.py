"""A garbage timestamp.txt (nbgrader parses it for late penalties)."""

ASSIGNMENT = "softmax"
CELLS = {"cross_entropy": "__WRONG__"}


def extra(folder, ctx):
    (folder / "timestamp.txt").write_text("'; DROP TABLE grade; -- not a date \x00\xff")
