"""Wrong-implementation suites: every plausible student mistake loses points where it should.

``tests/mistakes/<assignment>.py`` lists MISTAKES, each replacing one solution cell of the
source notebook with code a student might write. Every such notebook is graded by the engine
the batch command uses (judge processes, bubblewrap sandboxes, the hidden pytest checks), and:

- the test cells that fail are exactly the mistake's ``fails`` (so a check neither misses the
  mistake nor blames an unrelated cell), and the feedback of the first one contains ``says``
  (the message names the mistake);
- the unmodified source notebook gets full marks and the release stub zero (controls).
"""

import copy
import importlib.util
from pathlib import Path

import pytest

from autograder import notebook as nbio
from autograder.engine import Engine

REPO = Path(__file__).resolve().parents[1]
SOURCE = REPO / "exercises" / "source"
KINDS = {"logic", "in-place", "device", "randomness", "constant", "forbidden"}


def load(path):
    spec = importlib.util.spec_from_file_location(f"mistakes_{path.stem}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)  # data only: mistakes are source strings
    return module


SUITES = {p.stem: load(p) for p in sorted((REPO / "tests" / "mistakes").glob("*.py"))}
CASES = [(a, m) for a, suite in SUITES.items() for m in suite.MISTAKES]


def source_notebook(assignment):
    return nbio.read_trusted(SOURCE / assignment / f"{assignment}.ipynb")


def with_cell(nb, grade_id, source):
    """Copy of ``nb`` whose solution cell ``grade_id`` holds ``source``."""
    out = copy.deepcopy(nb)
    cells = [c for c in out.cells if nbio.is_solution(c) and nbio.grade_id(c) == grade_id]
    assert cells, f"no solution cell {grade_id!r}"
    cells[0].source = source
    return out


@pytest.fixture(scope="module")
def engine():
    engine = Engine(jobs=2, assignments=list(SUITES))
    yield engine
    engine.close()


@pytest.fixture(scope="module")
def graded(engine):
    """graded(assignment) -> {mistake name, 'source' or 'release': Report}; every notebook of
    an assignment is submitted at once (graded in parallel) the first time it is asked for."""
    done = {}

    def get(assignment):
        if assignment not in done:
            src = source_notebook(assignment)
            template = nbio.release_from_source(src)
            notebooks = {"source": src, "release": template}
            for m in SUITES[assignment].MISTAKES:
                notebooks[m["name"]] = with_cell(src, m["cell"], m["source"])
            futures = {
                name: engine.submit_notebook(assignment, template, nb)[0]
                for name, nb in notebooks.items()
            }
            done[assignment] = {name: f.result() for name, f in futures.items()}
        return done[assignment]

    return get


@pytest.mark.parametrize("assignment", list(SUITES))
def test_suite_is_large_and_well_formed(assignment):
    suite = SUITES[assignment]
    assert suite.ASSIGNMENT == assignment
    names = [m["name"] for m in suite.MISTAKES]
    assert len(names) >= 12 and len(set(names)) == len(names)
    grade_ids = {gid for gid, _ in nbio.test_cells(source_notebook(assignment))}
    cells = {nbio.grade_id(c) for c in source_notebook(assignment).cells if nbio.is_solution(c)}
    for m in suite.MISTAKES:
        assert m["kind"] in KINDS, m["name"]
        assert m["cell"] in cells, m["name"]
        assert set(m["fails"]) <= grade_ids and m["fails"], m["name"]
        assert m["says"], m["name"]


def test_softmax_and_masking_cover_every_kind():
    kinds = {m["kind"] for a in ("softmax", "masking") for m in SUITES[a].MISTAKES}
    assert kinds == KINDS


@pytest.mark.parametrize("assignment", list(SUITES))
def test_source_full_marks_release_zero(graded, assignment):
    source = graded(assignment)["source"].verdicts
    assert all(v.passed for v in source.values()), {g: v.message for g, v in source.items()}
    release = graded(assignment)["release"].verdicts
    assert not any(v.passed for v in release.values())


@pytest.mark.parametrize("assignment, mistake", CASES, ids=[f"{a}-{m['name']}" for a, m in CASES])
def test_mistake_loses_points(graded, assignment, mistake):
    verdicts = graded(assignment)[mistake["name"]].verdicts
    failed = {gid for gid, v in verdicts.items() if not v.passed}
    messages = {gid: v.message[:600] for gid, v in verdicts.items() if not v.passed}
    assert failed == set(mistake["fails"]), messages
    target = verdicts[mistake["fails"][0]]
    assert mistake["says"] in target.message, target.message
