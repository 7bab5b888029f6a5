"""The grader's layout says its architecture: imports point down the layers, none in a circle (lazy
imports inside functions included), the sandboxed side imports nothing trusted, and no module of
the course's code outgrows one job (about 500 lines: at most 520; the hidden checks and the book's
diagram catalogue are long lists by design)."""

import ast
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
# lowest first: a module may import its own layer and the layers before it, never a later one
LAYERS = (
    ("sandboxed", ("autograder.sandboxed",)),
    ("data", ("autograder.report", "autograder.seeds", "autograder.notebook")),
    ("judge", ("autograder.judge",)),
    ("checks", ("autograder.checks",)),
    ("engines", ("autograder.engines",)),
    ("nbgrader", ("autograder.nbgrader",)),
    ("reporting", ("autograder.reporting",)),
    ("service", ("autograder.service",)),
    ("cli", ("autograder.cli", "autograder.__main__")),
)
LONG_BY_DESIGN = ("autograder/checks/", "book/diagrams.py")
MAX_LINES = 520  # about 500


def module_name(path):
    parts = list(path.relative_to(REPO).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def modules():
    return {module_name(p): p for p in sorted((REPO / "autograder").rglob("*.py"))}


def layer(name):
    for rank, (_, prefixes) in enumerate(LAYERS):
        if any(name == p or name.startswith(p + ".") for p in prefixes):
            return rank
    return None


def imports(path, known):
    """{module of ours that ``path`` imports, anywhere in the file: line}."""
    out = {}
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
        else:
            continue
        for name in names:
            if name in known:
                out.setdefault(name, node.lineno)
    return out


def graph():
    known = modules()
    return {name: imports(path, known) for name, path in known.items()}


def test_every_grader_module_has_a_layer_and_a_first_line_saying_its_job():
    for name, path in modules().items():
        assert layer(name) is not None or name == "autograder", f"{name}: add it to LAYERS"
        if path.name != "__init__.py" or path.stat().st_size:
            doc = ast.get_docstring(ast.parse(path.read_text()))
            assert doc and doc.strip(), f"{name}: its first lines should say its one job"


def test_imports_point_down_the_layers():
    wrong = []
    for name, targets in graph().items():
        for target, line in targets.items():
            if layer(target) is not None and layer(name) < layer(target):
                wrong.append(f"{name}:{line} imports {target} (a later layer)")
    assert not wrong, "\n".join(wrong)


def test_the_sandboxed_side_imports_nothing_trusted():
    for name, targets in graph().items():
        if name.startswith("autograder.sandboxed"):
            outside = [t for t in targets if not t.startswith("autograder.sandboxed")]
            assert not outside, f"{name} imports {outside}"


def test_no_import_circle():
    edges = {name: set(targets) for name, targets in graph().items()}
    done, stack = set(), []

    def visit(node):
        if node in stack:
            pytest.fail("import circle: " + " -> ".join(stack[stack.index(node) :] + [node]))
        if node in done:
            return
        stack.append(node)
        for nxt in sorted(edges.get(node, ())):
            visit(nxt)
        stack.pop()
        done.add(node)

    for node in sorted(edges):
        visit(node)


def test_no_module_outgrows_one_job():
    roots = ("autograder", "solutions", "tools", "bench", "book", "hub")
    long = []
    for root in roots:
        for path in sorted((REPO / root).rglob("*.py")):
            rel = path.relative_to(REPO).as_posix()
            if rel.startswith(LONG_BY_DESIGN) or "/_build/" in rel:
                continue
            n = len(path.read_text().splitlines())
            if n > MAX_LINES:
                long.append(f"{rel}: {n} lines")
    assert not long, "\n".join(long)


def test_the_layers_catch_what_they_forbid(tmp_path):
    """The checks above can fail: a wrong-way and a circular import are found."""
    known = {"autograder.judge.x": None, "autograder.cli": None, "autograder.sandboxed.y": None}
    src = tmp_path / "x.py"
    src.write_text("def f():\n    from autograder.cli import main\n")
    found = imports(src, known)
    assert found == {"autograder.cli": 2}
    assert layer("autograder.judge.x") < layer("autograder.cli")
