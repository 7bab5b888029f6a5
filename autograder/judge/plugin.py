"""pytest plugin of the course (registered as entry point ``autograder`` in pyproject.toml).

Hidden checks are pytest modules, ``autograder/checks/<assignment>.py``; a notebook test cell's
``grade_id`` is the name of a test function there. Fixtures for check authors:

- ``device``: ``torch.device('cpu')``, and ``'cuda'`` when present (skipped with its reason).
- ``rng``: a ``torch.Generator`` seeded from the run seed and the test item.
- ``student``: the student's code for this test function (autograder.judge.student.Student).

Markers: ``@pytest.mark.forbid("softmax", ...)``: the solution cells may not use these ready-made
functions (attribute, import or getattr name); the check fails with the name and line.
``@pytest.mark.spec(...)``: what the notebook says of every call the check makes (see
autograder.judge.student.Spec), e.g. ``spec(builds_on_device=True)``.

Where ``student`` comes from:

- ``pytest autograder/checks --reference``: the reference solutions in-process
  (``solutions/<assignment>.py`` or the check module's ``REFERENCE``), through the wire encoding,
  on inputs from a new random run seed (``--run-seed N`` to repeat one).
- ``pytest autograder/checks/<assignment>.py --notebook PATH`` (the appeal path): one submitted
  notebook graded exactly as the judge grades it (:class:`Appeal`: the same job, the same
  procedure, judge/submission.py, public tests included, and the same seed: the grader secret
  unless ``--run-seed``), in the sandbox with the limits of the course's nbgrader_config.py
  (``--course``, default exercises/). It prints each test cell's verdict and feedback message,
  byte for byte what the batch command writes into the student's feedback.
- grading (autograder/judge/process.py): each submission in turn, in the sandbox.
"""

import importlib
import json
from pathlib import Path

import pytest
import torch

from autograder.judge.diagnosis import feedback
from autograder.judge.grading import Grading, ReferenceBackend, SandboxBackend
from autograder.judge.sandbox import Sandbox, SandboxLimits
from autograder.judge.student import Spec
from autograder.judge.submission import GRADING, RESULT, CheckItems, assignment_of, grade
from autograder.seeds import default_run_seed, derive_seed, new_run_seed

REFERENCE = pytest.StashKey()  # {assignment: Grading} for --reference
REPO = Path(__file__).resolve().parents[2]

DEVICES = [
    "cpu",
    pytest.param(
        "cuda",
        marks=pytest.mark.skipif(
            not torch.cuda.is_available(), reason="no CUDA device on this machine"
        ),
    ),
]


def pytest_addoption(parser):
    group = parser.getgroup("autograder", "hidden checks (autograder/checks)")
    group.addoption(
        "--reference",
        action="store_true",
        help="run the hidden checks against the reference solutions, in-process",
    )
    group.addoption(
        "--notebook", metavar="PATH", help="grade one submitted notebook through the sandbox"
    )
    group.addoption(
        "--course",
        metavar="DIR",
        default=str(REPO / "exercises"),
        help="course root for --notebook (default: exercises/); its nbgrader_config.py sets the "
        "sandbox limits (c.SandboxLimits), as for grading",
    )
    group.addoption(
        "--run-seed",
        type=int,
        help="run seed of the checks' inputs (default: --notebook, the grader secret, as the "
        "batch command; --reference, a new random one)",
    )
    group.addoption(
        "--report-json", metavar="PATH", help="--notebook: also write the Report as JSON here"
    )


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "forbid(*names): the solution cells may not use these ready-made functions"
    )
    config.addinivalue_line(
        "markers",
        "given(**helpers): the student's helpers of these names are answered by the judge with "
        "these reference functions (a helper's mistake costs only the helper's own item)",
    )
    config.addinivalue_line(
        "markers",
        "spec(**rules): what the notebook says of every call (autograder.judge.student.Spec)",
    )
    if config.getoption("run_seed", None) is None:
        if config.getoption("notebook", None):
            config.option.run_seed = default_run_seed()
        elif config.getoption("reference", False):
            config.option.run_seed = new_run_seed()
    config.stash[REFERENCE] = {}
    if config.getoption("notebook", None):
        config.pluginmanager.register(Appeal(config), "autograder-appeal")


def pytest_report_header(config):
    if config.getoption("reference") or config.getoption("notebook"):
        mode = "reference solutions" if config.getoption("reference") else config.option.notebook
        return f"hidden checks: {mode}; --run-seed {config.option.run_seed}"
    return None


def grading_for(item):
    """The Grading that ``item``'s student fixture talks to: the submission being graded (set by
    judge/submission.py), else the reference solutions of its assignment (--reference)."""
    config = item.config
    current = config.stash.get(GRADING, None)
    if current is not None:
        return current
    if not config.getoption("reference"):
        raise pytest.UsageError(
            "hidden checks need a student: run them with --reference (reference solutions) "
            "or --notebook PATH.ipynb (one submission, sandboxed)"
        )
    gradings = config.stash[REFERENCE]
    assignment = assignment_of(item)
    if assignment not in gradings:
        ref = getattr(item.module, "REFERENCE", None)
        ref = ref if ref is not None else importlib.import_module(f"solutions.{assignment}")
        namespace = ref if isinstance(ref, dict) else vars(ref)
        gradings[assignment] = Grading(ReferenceBackend(namespace), None, config.option.run_seed)
    return gradings[assignment]


class Appeal:
    """``--notebook PATH``: grade that one notebook as a judge does, then print its Report."""

    def __init__(self, config):
        self.config = config
        self.path = config.getoption("notebook")
        self.report = None

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtestloop(self, session):
        # imported here, not at the top: nbformat and its validator cost every judge process
        # about 2 s of CPU at start, and only the appeal path reads a notebook
        from autograder import notebook as nbio

        checks = CheckItems(session)
        if len(checks.assignments()) != 1:
            raise pytest.UsageError(
                "--notebook grades one assignment: name its check module, e.g. "
                "autograder/checks/softmax.py"
            )
        assignment = checks.assignments()[0]
        course = nbio.Course(self.config.getoption("course"))
        submission, problems = nbio.read_submission(self.path)
        for p in problems:
            print(f"{self.path}: {p}")
        template = course.template(assignment, course.notebook_name(assignment, self.path))
        job = dict(nbio.grading_job(nbio.rebuild(template, submission)), assignment=assignment)
        limits = SandboxLimits(config=nbio.course_config(course.root, required=False))
        with Sandbox(limits=limits) as sandbox:
            run_seed = self.config.option.run_seed
            self.report = grade(session, checks, SandboxBackend(sandbox), run_seed, job)
        session.testsfailed = sum(not v.passed for v in self.report.verdicts.values())
        out = self.config.getoption("report_json")
        if out:
            Path(out).write_text(json.dumps(self.report.to_data(), ensure_ascii=False))
        return True

    def pytest_terminal_summary(self, terminalreporter):
        """One line per test cell with its feedback message, as the student's feedback shows."""
        if self.report is None:
            return
        terminalreporter.section(f"grade per test cell: {self.path}")
        for gid, verdict in self.report.verdicts.items():
            terminalreporter.write_line(f"{gid}: {verdict.outcome.upper()}")
            for line in verdict.message.splitlines():
                terminalreporter.write_line("    " + line)
        for problem in self.report.problems:
            terminalreporter.write_line(f"! {problem}")


@pytest.fixture(params=DEVICES)
def device(request):
    """Device: 'cpu' always, 'cuda:0' when available (skipped with its reason otherwise); with
    its index, as a tensor's ``.device`` says it (``torch.device("cuda") != x.device``)."""
    return torch.device(request.param, 0) if request.param == "cuda" else torch.device("cpu")


@pytest.fixture
def grading(request):
    return grading_for(request.node)


@pytest.fixture
def rng(request, grading):
    """CPU generator for the check's inputs, seeded from the run seed and this test item."""
    seed = derive_seed(grading.run_seed, assignment_of(request.node), request.node.name)
    return torch.Generator().manual_seed(seed)


@pytest.fixture
def student(request, device, grading):
    """The student's code for this test function on ``device`` (a fresh worker per function).
    After the test, the code it ran is checked for the ready-made functions ``forbid`` names."""
    key = f"{assignment_of(request.node)}::{request.node.originalname}"
    forbid = [n for m in request.node.iter_markers("forbid") for n in m.args]
    spec = Spec(**{k: v for m in request.node.iter_markers("spec") for k, v in m.kwargs.items()})
    given = {k: v for m in request.node.iter_markers("given") for k, v in m.kwargs.items()}
    yield grading.student(key, device, forbid, spec, given)
    grading.check_policy(forbid)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item, call):
    report = yield
    if call.when == "setup" and RESULT in item.stash:  # items are run again for each submission
        del item.stash[RESULT]
    if report.failed and call.excinfo is not None and "student" in item.fixturenames:
        outcome, message = feedback(call.excinfo.value)
        label = case_label(item)
        if label and label not in message:
            message = f"[{label}] {message}"
        current = item.config.stash.get(GRADING, None)
        grading = current or item.config.stash[REFERENCE].get(assignment_of(item))
        if grading is not None and outcome == "failed":
            message += grading.note()
        # the first failure is the verdict, except that a policy failure found after the test
        # (a forbidden function, tampering: autograder/judge/policy.py) names the root cause of
        # a wrong result (a crash or a timeout stays what it was)
        earlier = item.stash.get(RESULT, None)
        if earlier is None or (call.when == "teardown" and earlier[0] == "failed"):
            item.stash[RESULT] = (outcome, message)
    return report


def case_label(item):
    """What distinguishes this item from the others of its test function (its parameters
    other than the device), e.g. 'logits~3000' or 'T=3,S=7'."""
    params = getattr(getattr(item, "callspec", None), "params", {})
    return ", ".join(
        v if isinstance(v, str) else f"{k}={v}" for k, v in params.items() if k != "device"
    )


def pytest_runtest_teardown(item, nextitem):
    """--reference: end the test function's worker after its last item."""
    if item.config.stash.get(GRADING, None) is not None or "student" not in item.fixturenames:
        return
    same = (
        nextitem is not None
        and nextitem.module is item.module
        and nextitem.originalname == item.originalname
    )
    grading = item.config.stash[REFERENCE].get(assignment_of(item))
    if grading is not None and not same:
        grading.end_function()
