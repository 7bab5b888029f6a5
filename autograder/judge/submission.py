"""Grading one submission with a pytest session's collected check items -> Report.

The one grading procedure: the judge process runs it for every job from its engine (the batch
command, ``nbgrader autograde``, a Dask worker), and ``pytest --notebook`` (the appeal path) for
the one notebook it is given, so both give the same verdicts and messages from the same seed
(:func:`autograder.seeds.submission_seed`). Each test cell's check items run with the
``student`` fixture bound to the submission, then the public code of the test cells that passed.
"""

import re
import time

import pytest
from _pytest.runner import runtestprotocol

from autograder.judge.grading import Grading
from autograder.report import Report, Verdict
from autograder.seeds import submission_seed

GRADING = pytest.StashKey()  # the submission being graded (read by the plugin's fixtures)
RESULT = pytest.StashKey()  # item -> (outcome, feedback message) of its failure


def assignment_of(item):
    return item.module.__name__.rsplit(".", 1)[-1]


def skipped(item):
    """True for an item whose skipif condition holds already (e.g. the CUDA variant without a
    GPU): it would only be reported as skipped, so the loop does not run it at all."""
    return any(
        m.args and isinstance(m.args[0], bool) and m.args[0] for m in item.iter_markers("skipif")
    )


class CheckItems:
    """The collected items of a session by test cell: ``items[(assignment, function)]``, and for
    each item a sibling of its module to run next (its module stays set up between items)."""

    def __init__(self, session):
        self.items, self.sibling = {}, {}
        for item in session.items:
            if "student" in item.fixturenames and not skipped(item):
                self.items.setdefault((assignment_of(item), item.originalname), []).append(item)
        by_module = {}
        for item in session.items:
            by_module.setdefault(item.module, []).append(item)
        for items in by_module.values():
            for n, item in enumerate(items):
                self.sibling[item] = items[(n + 1) % len(items)] if len(items) > 1 else None

    def assignments(self):
        return sorted({a for a, _ in self.items})


def grade(session, checks, backend, run_seed, job):
    """Grade ``job`` (assignment, grade_ids, cells, solutions, public; see protocol.py "grade")
    with ``checks`` (CheckItems of ``session``) in ``backend``'s children -> Report."""
    config = session.config
    t0 = time.monotonic()
    seed = submission_seed(run_seed, job["assignment"], job["cells"])
    grading = Grading(backend, job["cells"], seed, job.get("solutions", ()))
    config.stash[GRADING] = grading
    report = Report()
    public, used = job.get("public", {}), {}
    try:
        for gid in job["grade_ids"]:
            t1 = time.monotonic()
            items = checks.items.get((job["assignment"], gid))
            if not items:
                msg = f"채점 설정 오류 (grader error): no hidden check for test cell {gid!r}"
                report.verdicts[gid] = Verdict(gid, "grader-error", msg)
                continue
            outcome, message = "passed", ""
            for item in items:  # a test cell passes when every item of its function does
                # the function's fixtures end with the item; the session and the check module
                # stay set up until the job ends (a sibling of the same module as nextitem),
                # which saves their set-up and teardown on every item
                reports = runtestprotocol(item, nextitem=checks.sibling[item], log=False)
                if any(r.failed for r in reports):
                    default = ("grader-error", "채점 오류 (grader error)")
                    outcome, message = item.stash.get(RESULT, default)
                    break
            used[gid] = {name for s in grading.students for name in s.used}
            status = grading.end_function()
            if outcome != "passed" and status not in ("exit", None):
                message += f"\n[worker: {status}]"
            report.verdicts[gid] = Verdict(gid, outcome, message[:4000], time.monotonic() - t1)
        passed = [g for g, v in report.verdicts.items() if v.passed and public.get(g)]
        results = grading.public_tests({g: public[g] for g in passed})
        public_failed = {g: r for g, r in results.items() if r[0] != "passed"}
        charge_public_failures(report, public, public_failed, used, grading.facts.dependencies)
    finally:
        session._setupstate.teardown_exact(None)  # pytest's own end of a run
        grading.end_function()
        del config.stash[GRADING]
    report.problems = grading.problems()
    report.seconds = time.monotonic() - t0
    return report


def charge_public_failures(report, public, failed, used, dependencies=lambda name: set()):
    """A test cell whose public code fails loses its item, unless that code reaches (directly,
    or through ``dependencies(name)``: the student's own definitions a name uses) a function
    another item already failed on: one mistake costs one item. E.g. a wrong causal_mask fails
    test_causal_mask, not also the combine_masks test that calls it; a wrong merge_heads fails
    test_split_heads, not also MultiHeadAttention's public test, whose hidden checks take
    merge_heads as given."""
    verdicts = report.verdicts
    lost = {name for gid, v in verdicts.items() if not v.passed for name in used.get(gid, ())}
    for gid, (outcome, message) in failed.items():
        names = set(re.findall(r"\w+", public[gid]))
        reached = names.union(*(dependencies(name) for name in names))
        if not lost & reached:
            verdicts[gid] = Verdict(gid, outcome, message[:4000], verdicts[gid].seconds)
