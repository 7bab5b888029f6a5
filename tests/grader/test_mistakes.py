"""Wrong-implementation suites: every plausible student mistake loses points where it should.

``tests/mistakes/<assignment>.py`` lists MISTAKES, each replacing one solution cell of the
source notebook with code a student might write. Every such notebook is graded by the engine
the batch command uses (judge processes, bubblewrap sandboxes, the hidden pytest checks), and:

- the test cells that fail are exactly the mistake's ``fails`` (so a check neither misses the
  mistake nor blames an unrelated cell), and the feedback of the first one contains ``says``
  (the message names the mistake); where that feedback names a misconception (its first line),
  ``says`` is in that line: the feedback never names another mistake than the entry's own;
- the unmodified source notebook gets full marks and the release stub zero (controls).
"""

import os
import zlib

import pytest

from autograder import notebook as nbio
from autograder.engines.local import Engine
from autograder.report import MISCONCEPTION
from tests.support import paste
from tests.support.catalogue import KINDS, SUITES, notebooks, source_notebook

CASES = [(a, m) for a, suite in SUITES.items() for m in suite.MISTAKES]
# correct solutions written another way (other loop order, einsum, float64 inside, ...)
VARIANTS = [(a, c) for a, suite in SUITES.items() for c in getattr(suite, "CORRECT", [])]


# run seeds: the first decides the tests below; all must give the same per-item verdicts. A
# mistake that only some inputs reveal gets a hand-built case that reveals it on every seed
# (e.g. decoding's "EOS ranked second"), so make test grades under two seeds to stay within its
# time, the second one a third of the notebooks; MISTAKES_SEEDS=5 MISTAKES_RESEED_EVERY=1 grades
# every notebook under seeds 1-5 (about 6 min a seed on 2 cores), and tests/grade_mistakes.py
# and tests/grade_open.py grade one assignment under any seed
SEEDS = tuple(range(1, 1 + max(2, int(os.environ.get("MISTAKES_SEEDS", "2")))))
# the later seeds grade one notebook in RESEED_EVERY (a fixed choice, by a hash of the name) and
# the controls: make test's time; MISTAKES_RESEED_EVERY=1 regrades every notebook under each seed
RESEED_EVERY = max(1, int(os.environ.get("MISTAKES_RESEED_EVERY", "3")))


def regraded(key):
    """True for the notebooks the later run seeds grade again (see RESEED_EVERY)."""
    return key[1] in ("source", "release") or zlib.crc32("/".join(key).encode()) % RESEED_EVERY == 0


@pytest.fixture(scope="module")
def graded_under():
    """graded_under(run_seed) -> {(assignment, name): Report}: the notebooks graded at once (in
    parallel) by an engine with that run seed, the first time it is asked for: those that
    ``regraded`` picks, and under the first seed every other notebook but the red-team ones
    (which only the run-seed test compares)."""
    todo, done = notebooks(redteam=True), {}

    def get(seed):
        if seed not in done:
            engine = Engine(jobs=2, assignments=list(SUITES), run_seed=seed)
            first = seed == SEEDS[0]  # red-team notebooks serve the run-seed test alone
            keys = [k for k in todo if regraded(k) or (first and not k[1].startswith("redteam:"))]
            try:
                futures = {key: engine.submit_notebook(key[0], *todo[key])[0] for key in keys}
                done[seed] = {key: f.result() for key, f in futures.items()}
            finally:
                engine.close()
        return done[seed]

    return get


@pytest.fixture(scope="module")
def graded(graded_under):
    """graded(assignment) -> {mistake name, 'source' or 'release': Report} (first run seed;
    some red-team notebooks are graded along, for the run-seed test)."""
    runs = graded_under(SEEDS[0])
    return lambda assignment: {name: r for (a, name), r in runs.items() if a == assignment}


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
    # a misconception the feedback names (its first line) is the entry's own
    first = target.message.split("\n", 1)[0]
    assert MISCONCEPTION not in first or mistake["says"] in first, first


@pytest.mark.parametrize(
    "assignment, variant", VARIANTS, ids=[f"{a}-{c['name']}" for a, c in VARIANTS]
)
def test_correct_variant_keeps_full_marks(graded, assignment, variant):
    verdicts = graded(assignment)[variant["name"]].verdicts
    lost = {gid: v.message[:600] for gid, v in verdicts.items() if not v.passed}
    assert not lost, lost


def test_verdicts_do_not_depend_on_the_run_seed(graded_under):
    """The notebooks (mistakes, controls, red-team attacks and their honest controls) get the
    same per-item verdicts under each run seed of SEEDS: a check that catches a mistake only for
    some inputs must draw enough of them to catch it every time. Compared: the notebooks the
    later seeds regrade (``regraded``: a third of them, all with MISTAKES_RESEED_EVERY=1)."""
    runs = [graded_under(seed) for seed in SEEDS]
    compared = list(runs[-1])
    assert any(k[1].startswith("redteam:") for k in compared)
    assert len(compared) > len(notebooks(redteam=True)) // (RESEED_EVERY + 1), len(compared)
    unstable = {}
    for key in compared:
        seen = [{gid: v.passed for gid, v in run[key].verdicts.items()} for run in runs]
        if any(s != seen[0] for s in seen):
            unstable["/".join(key)] = {
                gid: [s.get(gid) for s in seen]
                for gid in seen[0]
                if len({s.get(gid) for s in seen}) > 1
            }
    assert not unstable, unstable


def test_regrade_reproduces_verdicts_and_messages(tmp_path, monkeypatch):
    """Default settings (the grader secret as run seed): the same notebooks graded by two
    engines get byte-identical verdicts and feedback messages."""
    monkeypatch.setenv("AUTOGRADER_SECRET_FILE", str(tmp_path / "secret"))
    # decoding (sampling, beam search: the most seed-dependent checks): the controls and every
    # third mistake or variant, so that many messages are compared in about a minute
    todo = {key: value for key, value in notebooks().items() if key[0] == "decoding"}
    todo = {key: value for n, (key, value) in enumerate(todo.items()) if n < 2 or n % 3 == 0}
    runs = []
    for _ in range(2):
        engine = Engine(jobs=2, assignments=["decoding"])
        try:
            futures = {k: engine.submit_notebook(k[0], t, nb)[0] for k, (t, nb) in todo.items()}
            runs.append(
                {
                    k: [(v.grade_id, v.outcome, v.message) for v in f.result().verdicts.values()]
                    for k, f in futures.items()
                }
            )
        finally:
            engine.close()
    assert (tmp_path / "secret").stat().st_mode & 0o077 == 0  # the secret is the owner's
    assert runs[0] == runs[1]
    assert any(m for verdicts in runs[0].values() for _, _, m in verdicts)  # messages compared


@pytest.mark.parametrize("assignment", list(SUITES))
def test_counterexamples_reproduce_when_pasted(graded, assignment, tmp_path):
    """Each mistake's feedback that calls its inputs paste-runnable, pasted with the entry's cells
    into a fresh Python and the function it names called on them, gives the result it printed
    (a value at the position it names, a shape, a scalar). A module's counterexample is not
    replayed (its weights are the grader's and the feedback does not print them yet), nor one
    whose inputs do not bind to the function it names (a composition of two functions)."""
    todo = notebooks()
    jobs, claimed = {}, 0
    for m in SUITES[assignment].MISTAKES:
        cells = nbio.graded_code(todo[(assignment, m["name"])][1])
        for gid, verdict in graded(assignment)[m["name"]].verdicts.items():
            claimed += not verdict.passed and paste.CLAIM in verdict.message
            job = None if verdict.passed else paste.counterexample(verdict.message, cells)
            if job is not None:
                jobs[f"{m['name']}/{gid}"] = job
    if not claimed:  # e.g. normalization: modules only, whose feedback claims no paste
        return
    assert jobs, "feedback claims paste-runnable inputs, but none was read as a counterexample"
    results = paste.reproduce(jobs, tmp_path)
    wrong = {
        k: (results[k], jobs[k]["printed"]) for k in jobs if not paste.matches(jobs[k], results[k])
    }
    assert not wrong, wrong
