"""The catalogue of student mistakes (tests/mistakes/<assignment>.py) and the notebooks made
from it.

Each suite lists MISTAKES (and CORRECT variants, and OPEN grader gaps), each replacing one
solution cell of the assignment's source notebook. tests/grader/test_mistakes.py grades them
all; tests/grade_mistakes.py and tests/grade_open.py grade one assignment now.
"""

import copy
import importlib.util
from pathlib import Path

from autograder import notebook as nbio
from tests.support.redteam_specs import SPEC, Solutions, is_controlled, spec_cells, substitute

REPO = Path(__file__).resolve().parents[2]
SOURCE = REPO / "exercises" / "source"
KINDS = {"logic", "in-place", "device", "randomness", "constant", "forbidden"}


def load(path):
    spec = importlib.util.spec_from_file_location(f"mistakes_{path.stem}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)  # data only: mistakes are source strings
    return module


SUITES = {p.stem: load(p) for p in sorted((REPO / "tests" / "mistakes").glob("*.py"))}


def source_notebook(assignment):
    return nbio.read_trusted(SOURCE / assignment / f"{assignment}.ipynb")


def with_cell(nb, grade_id, source):
    """Copy of ``nb`` whose solution cell ``grade_id`` holds ``source``."""
    out = copy.deepcopy(nb)
    cells = [c for c in out.cells if nbio.is_solution(c) and nbio.grade_id(c) == grade_id]
    assert cells, f"no solution cell {grade_id!r}"
    cells[0].source = source
    return out


def notebooks(redteam=False):
    """{(assignment, name): (template, notebook)}: the source notebook ('source'), the release
    stub ('release') and every mistake of every suite; with ``redteam``, also every hostile
    submission of tests/redteam/ that is made of solution cells, and its honest control."""
    out = {}
    for assignment, suite in SUITES.items():
        src = source_notebook(assignment)
        template = nbio.release_from_source(src)
        out[assignment, "source"] = template, src
        out[assignment, "release"] = template, template
        for m in suite.MISTAKES + getattr(suite, "CORRECT", []):
            out[assignment, m["name"]] = template, with_cell(src, m["cell"], m["source"])
    return {**out, **redteam_notebooks()} if redteam else out


def redteam_notebooks():
    """{(assignment, 'redteam:<spec>' or 'redteam:<spec>:honest'): (template, notebook)}, built
    the way tests/adversarial/test_redteam.py builds them (its placeholders point nowhere useful
    here)."""
    ctx = {"repo": REPO, "course": REPO / "exercises", "port": 9, "mark": REPO / "no-such-dir"}
    out = {}
    for path, spec in SPEC.items():
        a = spec.ASSIGNMENT
        if a not in SUITES or any(hasattr(spec, k) for k in ("build", "extra", "SYMLINK")):
            continue
        src = source_notebook(a)
        template = nbio.release_from_source(src)
        sol = Solutions(
            (nbio.grade_id(c), "\n".join(ln for ln in c.source.splitlines() if "### " not in ln))
            for c in src.cells
            if nbio.is_solution(c)
        )
        kinds = ["attack", "honest"] if is_controlled(path) else ["attack"]
        for kind in kinds:
            nb = copy.deepcopy(template)
            for gid, code in spec_cells(spec, kind, sol).items():
                nb = with_cell(nb, gid, substitute(code, a, ctx))
            name = f"redteam:{path.stem}" + (":honest" if kind == "honest" else "")
            out[a, name] = template, nb
    return out
