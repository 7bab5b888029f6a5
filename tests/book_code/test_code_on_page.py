"""Every chapter writes out its own pieces in visible code and checks each against an oracle.

Students run the chapters without solutions/: no page imports it. For chapter NN_<topic>.md the
public functions and classes of solutions/<topic>.py name the graded pieces. In the page's code
cells that are shown to the reader (not tagged hide-input, remove-input or remove-cell), a
top-level `def`/`class` whose name contains such a name (and is not that name itself) is a "page
piece"; it must not simply call a function of that name. Each chapter needs at least two pieces,
and each piece must be followed by a visible cell that calls `assert_close` (e.g.
`torch.testing.assert_close`) with the piece on one side and an independent oracle on the other:
an expression (or a variable of that cell assigned from one) that uses no function or class the
page defines, such as a PyTorch reference (`F.scaled_dot_product_attention`, `nn.LayerNorm`,
`torch.func.jacrev`) or numbers computed by hand. The check cell must come before the next
piece's definition or within the next two code cells.

The page shows the simplest form of a graded piece, never the answer: no code line of a page
may repeat a line of a solution region of the assignments (exercises/source/*/*.ipynb).
"""

import ast
import copy
import re
from pathlib import Path

import pytest
import yaml

from autograder import notebook as nbio
from tests.support.book import CHAPTERS, release

ROOT = Path(__file__).resolve().parents[2]
BOOK = ROOT / "book"
HIDDEN_TAGS = {"hide-input", "remove-input", "remove-cell"}
MIN_PIECES = 2
CHECK_WINDOW = 2  # a check may also sit in one of the next two code cells
CELL_RE = re.compile(r"^```\{code-cell\}[^\n]*\n(.*?)^```[ \t]*$", re.S | re.M)


def code_cells(text):
    """[(tags, source)] of the MyST code cells of a page, in order."""
    cells = []
    for body in CELL_RE.findall(text):
        tags = []
        lines = body.splitlines()
        if lines and lines[0].strip() == "---":  # YAML front matter of the cell
            end = next(i for i in range(1, len(lines)) if lines[i].strip() == "---")
            meta = yaml.safe_load("\n".join(lines[1:end])) or {}
            tags = list(meta.get("tags", []))
            lines = lines[end + 1 :]
        else:  # short form ":tags: [hide-input]"
            while lines and lines[0].startswith(":"):
                key, _, value = lines.pop(0)[1:].partition(":")
                if key.strip() == "tags":
                    tags = list(yaml.safe_load(value) or [])
        cells.append((tags, "\n".join(lines)))
    return cells


def public_names(module_source):
    """Names of the top-level public functions and classes of a module."""
    tree = ast.parse(module_source)
    return {
        n.name
        for n in tree.body
        if isinstance(n, (ast.FunctionDef, ast.ClassDef)) and not n.name.startswith("_")
    }


def _reference_for(name, references):
    """The longest reference name inside `name` (softmax_jacobian_simple -> softmax_jacobian)."""
    inside = [r for r in references if r in name and r != name]
    return max(inside, key=len) if inside else None


def _imports_solutions(tree):
    """Whether a cell imports solutions or anything under it."""
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "solutions":
            return True
        if isinstance(node, ast.Import) and any(
            a.name.split(".")[0] == "solutions" for a in node.names
        ):
            return True
    return False


def _assert_close_calls(tree):
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            f = node.func
            name = f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", None)
            if name == "assert_close":
                yield node


def _names_in(node):
    """Plain names used in a node (`torch.softmax` is not the name `softmax`)."""
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}


def _sources(tree):
    """{variable: names its assigned values use} for the assignments of one cell."""
    found = {}
    for node in ast.walk(tree):
        if isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)) and node.value:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            used = _names_in(node.value)
            for t in targets:
                for n in ast.walk(t):
                    if isinstance(n, ast.Name):
                        found.setdefault(n.id, set()).update(used)
    return found


def _reach(node, sources):
    """Names an expression uses, following the cell's assignments to what they were made from."""
    seen, todo = set(), list(_names_in(node))
    while todo:
        name = todo.pop()
        if name not in seen:
            seen.add(name)
            todo += sources.get(name, ())
    return seen


def _oracle_check(tree, piece, page_defs):
    """Whether the cell calls assert_close with the piece on one side and, on the other, an
    expression that reaches no function or class defined on the page."""
    sources = _sources(tree)
    for call in _assert_close_calls(tree):
        if len(call.args) < 2:
            continue
        sides = [_reach(a, sources) for a in call.args[:2]]
        for mine, other in (sides, sides[::-1]):
            if piece in mine and not (other & page_defs):
                return True
    return False


def check_page(text, topic, references):
    """(pieces, problems) for one chapter text: pieces as (page name, reference name)."""
    cells = code_cells(text)
    problems = [
        f"cell {i} imports solutions, which students do not have"
        for i, (_, src) in enumerate(cells)
        if _imports_solutions(ast.parse(src))
    ]
    visible = [
        (i, ast.parse(src)) for i, (tags, src) in enumerate(cells) if not HIDDEN_TAGS & set(tags)
    ]
    page_defs = {
        n.name
        for _, src in cells
        for n in ast.walk(ast.parse(src))
        if isinstance(n, (ast.FunctionDef, ast.ClassDef))
    }
    nodes = [
        (pos, node)
        for pos, (_, tree) in enumerate(visible)
        for node in tree.body
        if isinstance(node, (ast.FunctionDef, ast.ClassDef))
    ]
    defined = [(pos, node.name) for pos, node in nodes]
    pieces = []
    for k, (pos, name) in enumerate(defined):
        ref = _reference_for(name, references)
        if ref is None:
            continue
        pieces.append((name, ref))
        if ref in _names_in(nodes[k][1]):
            problems.append(f"{name}: calls {ref} instead of writing it out")
            continue
        later = [p for p, other in defined[k + 1 :] if _reference_for(other, references)]
        stop = max(later[0] if later else len(visible), pos + 1 + CHECK_WINDOW)
        window = visible[pos + 1 : stop]
        if not any(_oracle_check(tree, name, page_defs) for _, tree in window):
            problems.append(
                f"{name}: no following cell checks {name} against an oracle with assert_close"
            )
    if len(pieces) < MIN_PIECES:
        problems.append(f"only {len(pieces)} piece(s) written out on the page: {pieces}")
    return pieces, problems


# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_chapter_writes_out_and_checks_its_pieces(chapter):
    topic = chapter.split("_", 1)[1]
    references = public_names((ROOT / "solutions" / f"{topic}.py").read_text(encoding="utf-8"))
    text = (BOOK / f"{chapter}.md").read_text(encoding="utf-8")
    pieces, problems = check_page(text, topic, references)
    assert not problems, problems
    print(chapter, pieces)


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_page_code_repeats_no_solution_line(chapter):
    secret = release.solution_lines()
    text = (BOOK / f"{chapter}.md").read_text(encoding="utf-8")
    found = [
        (ln.strip(), secret[ln.strip()])
        for _, src in code_cells(text)
        for ln in src.splitlines()
        if ln.strip() in secret
    ]
    assert not found, found


PLOT_MODULES = {"plt", "matplotlib", "diagrams", "bookplot"}


def visible_plotting(text):
    """Visible code cells (their first line) that draw: use plt, matplotlib or the plot helpers."""
    found = []
    for tags, src in code_cells(text):
        if HIDDEN_TAGS & set(tags):
            continue
        tree = ast.parse(src)
        names = _names_in(tree)
        imported = {
            (alias.asname or alias.name)
            for node in ast.walk(tree)
            if isinstance(node, (ast.Import, ast.ImportFrom))
            for alias in node.names
        }
        modules = {
            node.module
            for node in ast.walk(tree)
            if isinstance(node, ast.ImportFrom) and node.module
        }
        helpers = {"show_weights", "show_mask", "show_matrix"} | {
            n for n in imported if n.startswith("draw_")
        }
        draws = "plt" in names and any(
            isinstance(n, ast.Attribute) and getattr(n.value, "id", None) == "plt"
            for n in ast.walk(tree)
        )
        if draws or (names & helpers) or (modules & {"diagrams"}):
            found.append(src.splitlines()[0])
    return found


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_plotting_code_is_hidden(chapter):
    """Plotting code sits behind the hide-input toggle; visible code is the code that teaches."""
    text = (BOOK / f"{chapter}.md").read_text(encoding="utf-8")
    found = visible_plotting(text)
    assert not found, found


def test_plot_scan_sees_a_visible_plot():
    shown = "```{code-cell} python3\nfig, ax = plt.subplots()\nplt.show()\n```\n"
    hidden = shown.replace("python3\n", "python3\n:tags: [hide-input]\n", 1)
    imports = "```{code-cell} python3\nimport matplotlib.pyplot as plt\n```\n"
    assert visible_plotting(shown) == ["fig, ax = plt.subplots()"]
    assert visible_plotting(hidden) == [] and visible_plotting(imports) == []


FAKE = """# Fake

```{{code-cell}} python3
import torch
```

```{{code-cell}} python3
def softmax_simple(z):
    \"\"\"(n,) -> (n,)\"\"\"
    e = torch.exp(z - z.max())
    return e / e.sum()
```

```{{code-cell}} python3
{check_one}
```

```{{code-cell}} python3
---
tags: [hide-input]
---
def softmax_hidden(z):
    return z
```

```{{code-cell}} python3
def softmax_again(z):
    return softmax_simple(z)
```

```{{code-cell}} python3
z = torch.randn(5)
expected = torch.softmax(z, 0)
torch.testing.assert_close(softmax_again(z), expected)
```
"""


def test_checker_catches_a_piece_without_a_check():
    refs = {"softmax", "log_softmax"}
    good = FAKE.format(
        check_one="torch.testing.assert_close(softmax_simple(z), torch.softmax(z, 0))"
    )
    pieces, problems = check_page(good, "softmax", refs)
    assert problems == [] and pieces == [
        ("softmax_simple", "softmax"),
        ("softmax_again", "softmax"),
    ]
    # numbers by hand are an oracle too
    by_hand = FAKE.format(
        check_one="half = torch.tensor([0.5, 0.5])\n"
        "torch.testing.assert_close(softmax_simple(torch.zeros(2)), half)"
    )
    assert check_page(by_hand, "softmax", refs)[1] == []

    # the check cell compares with another function of the page, not with an oracle
    bad = FAKE.format(check_one="torch.testing.assert_close(softmax_simple(z), softmax_hidden(z))")
    _, problems = check_page(bad, "softmax", refs)
    assert len(problems) == 1 and problems[0].startswith("softmax_simple:"), problems
    # ... also through a variable of the cell
    bad = FAKE.format(
        check_one="ref = softmax_again(z)\ntorch.testing.assert_close(softmax_simple(z), ref)"
    )
    _, problems = check_page(bad, "softmax", refs)
    assert len(problems) == 1 and problems[0].startswith("softmax_simple:"), problems

    # a check hidden behind hide-input does not count, nor does a hidden definition
    hidden = good.replace(
        "```{code-cell} python3\ntorch.testing.assert_close(softmax_simple",
        "```{code-cell} python3\n:tags: [hide-input]\ntorch.testing.assert_close(softmax_simple",
    )
    assert hidden != good
    _, problems = check_page(hidden, "softmax", refs)
    assert len(problems) == 1 and problems[0].startswith("softmax_simple:"), problems

    # a piece that only calls a function of the reference's name is not written out
    alias = good.replace(
        "    e = torch.exp(z - z.max())\n    return e / e.sum()", "    return softmax(z)"
    )
    assert alias != good
    _, problems = check_page(alias, "softmax", refs)
    assert len(problems) == 1 and "calls softmax" in problems[0], problems

    # one piece is not enough
    one = good.replace("def softmax_again", "def other_name").replace("softmax_again(z)", "z")
    _, problems = check_page(one, "softmax", refs)
    assert any(p.startswith("only 1 piece") for p in problems), problems

    # students have no solutions/: importing it is a problem, hidden or not
    for imp in ("from solutions.softmax import softmax", "import solutions.softmax"):
        imports = good.replace("import torch\n", f"import torch\n{imp}\n", 1)
        _, problems = check_page(imports, "softmax", refs)
        assert len(problems) == 1 and "imports solutions" in problems[0], problems


def test_solution_line_scan_sees_regions():
    """Control: the scan has lines to compare with, and one of them would be caught on a page."""
    secret = release.solution_lines()
    assert len(secret) > 20
    line = next(iter(secret))
    page = f"```{{code-cell}} python3\n    {line}\n```\n"
    assert any(ln.strip() in secret for _, src in code_cells(page) for ln in src.splitlines())


def pasted_page_code(chapter, source):
    """{(grade_id, name, piece): source notebook cells}: for each graded function or class
    ``name`` of a solution cell and each page piece whose name contains it (e.g.
    top_k_filter_one_row for top_k_filter), every top-level definition of the chapter's visible
    and hidden code with ``name = piece`` after it: what a student pasting the page gets."""
    page = (BOOK / f"{chapter}.md").read_text(encoding="utf-8")
    defs = {}
    for _, cell in code_cells(page):
        try:
            tree = ast.parse(cell)
        except SyntaxError:  # IPython magics
            continue
        for node in tree.body:
            if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
                defs[node.name] = ast.get_source_segment(cell, node)
    pasted = "\n\n".join(defs.values())
    out = {}
    for cell in source.cells:
        if cell.cell_type != "code" or not nbio.is_solution(cell):
            continue
        body = "\n".join(ln for ln in cell.source.splitlines() if "### " not in ln)
        for node in ast.parse(body).body:
            if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
                for piece in (p for p in defs if node.name.lower() in p.lower() and p != node.name):
                    code = f"{pasted}\n\n{node.name} = {piece}\n"
                    out[nbio.grade_id(cell), node.name, piece] = code
    return out


@pytest.mark.slow
def test_page_code_pasted_into_the_exercise_earns_no_item():
    """A graded exercise asks for more than its chapter shows: the chapter's own version of a
    graded function (all of the page's definitions pasted into the solution cell, the piece
    renamed to the graded name) fails that function's test cell."""
    from autograder.engines.local import Engine

    todo = {}
    for chapter in CHAPTERS:
        assignment = chapter.split("_", 1)[1]
        path = ROOT / "exercises" / "source" / assignment / f"{assignment}.ipynb"
        if not path.exists():
            continue
        source = nbio.read_trusted(path)
        template = nbio.release_from_source(source)
        for (gid, name, piece), code in pasted_page_code(chapter, source).items():
            nb = copy.deepcopy(template)
            next(c for c in nb.cells if nbio.grade_id(c) == gid).source = code
            todo[assignment, gid, f"{name} = {piece}"] = template, nb
    assert len(todo) >= 30, sorted(todo)  # the chapters write out their pieces
    engine = Engine(jobs=2, assignments=sorted({a for a, _, _ in todo}), run_seed=1)
    try:
        futures = {k: engine.submit_notebook(k[0], t, nb)[0] for k, (t, nb) in todo.items()}
        reports = {k: f.result().verdicts for k, f in futures.items()}
    finally:
        engine.close()
    # the other solution cells are the release stubs: any item passed is the paste's doing
    earned = {k: [g for g, v in verdicts.items() if v.passed] for k, verdicts in reports.items()}
    assert not any(earned.values()), {k: g for k, g in earned.items() if g}
