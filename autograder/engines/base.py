"""What a grading engine is: the interface the batch command, ``nbgrader autograde`` and the
grading service program against (:class:`GradingEngine`), the one settings object a run starts
from (:class:`RunSettings`), and what every engine shares (check paths, the unsafe warning,
submitting a notebook). Engines: local.py (judge processes on this machine), cluster.py (the
same on the workers of a Dask scheduler). No torch and no checks are imported here.
"""

import dataclasses
import os
import sys
from concurrent.futures import Future
from pathlib import Path
from typing import Protocol

from autograder import notebook as nbio
from autograder.judge.bwrap import check_bwrap, unsafe_requested
from autograder.judge.sandbox import SandboxLimits
from autograder.seeds import default_run_seed

CHECKS_DIR = Path(__file__).resolve().parents[1] / "checks"
BANG = "!" * 78
UNSAFE_WARNING = f"""
{BANG}
!! UNSAFE: grading WITHOUT the bubblewrap sandbox (--unsafe-no-sandbox).
!! Student code runs with your permissions: it can read solutions/, the hidden checks
!! and the gradebook, write them, and reach the network.
{BANG}"""


@dataclasses.dataclass
class RunSettings:
    """One grading run: which assignments' checks (``checks_dir``, default autograder/checks),
    the sandbox ``limits``, the ``run_seed`` (None: this machine's grader secret, so that the
    same submission always gets the same inputs, verdicts and messages), ``jobs`` (judge
    processes; None: one per core) and ``unsafe`` (grade without bubblewrap)."""

    assignments: list | None = None
    limits: SandboxLimits = dataclasses.field(default_factory=SandboxLimits)
    run_seed: int | None = None
    checks_dir: str | None = None
    jobs: int | None = None
    unsafe: bool = False

    def resolved(self, sandbox_here=True):
        """These settings with the run seed, the judge count and the unsafe flag decided (the
        grader secret, the cores, ``$AUTOGRADER_UNSAFE_NO_SANDBOX``); warns when unsafe, and,
        for judges on this machine (``sandbox_here``), refuses to grade without a working
        bubblewrap."""
        unsafe = unsafe_requested(self.unsafe)
        if unsafe:
            print(UNSAFE_WARNING, file=sys.stderr, flush=True)
        elif sandbox_here:
            check_bwrap()
        return dataclasses.replace(
            self,
            limits=self.limits or SandboxLimits(),
            run_seed=default_run_seed() if self.run_seed is None else int(self.run_seed),
            jobs=max(1, int(self.jobs or os.cpu_count() or 1)),
            unsafe=unsafe,
            checks_dir=str(Path(self.checks_dir).resolve()) if self.checks_dir else None,
            assignments=list(self.assignments) if self.assignments else None,
        )

    def check_paths(self):
        return check_paths(self.checks_dir, self.assignments)


class GradingEngine(Protocol):
    """What the batch command and ``nbgrader autograde`` need of an engine."""

    settings: RunSettings

    def describe(self) -> str:
        """'채점 프로세스 2개(샌드박스)' and where they run, for the batch command's summary."""

    def set_limits(self, limits: SandboxLimits) -> None:
        """Grade the jobs submitted from now on under ``limits``."""

    def submit(self, assignment, grade_ids, cells, solutions=(), name=None, public=None) -> Future:
        """Grade one submission (protocol.py, "grade") -> a future whose result() is a Report;
        a submission the engine could not grade gets a grader-error Report with a reason."""

    def close(self, wait: bool = True) -> None:
        """Stop the judges once their notebooks are done (``wait=False``: at once)."""


def check_paths(checks_dir, assignments=None):
    """Check module paths: <checks_dir>/<assignment>.py for each assignment (default: all)."""
    checks_dir = Path(checks_dir or CHECKS_DIR)
    if assignments is None:
        skip = ("conftest.py", "__init__.py")
        return sorted(str(p) for p in checks_dir.glob("*.py") if p.name not in skip)
    out = []
    for a in assignments:
        if not str(a).isidentifier():
            raise ValueError(f"bad assignment name {a!r}")
        out.append(str(checks_dir / f"{a}.py"))
    return out


def submit_notebook(engine, assignment, template, submission, name=None):
    """``submission`` rebuilt on the trusted ``template``, its job (notebook.grading_job)
    submitted to ``engine`` -> (future of its Report, rebuilt notebook)."""
    nb = nbio.rebuild(template, submission)
    return engine.submit(assignment, name=name, **nbio.grading_job(nb)), nb


def judges_label(jobs, unsafe):
    """'채점 프로세스 2개(샌드박스)' (or 샌드박스 없음, UNSANDBOXED) for the batch command's
    summary."""
    return f"채점 프로세스 {jobs}개({'샌드박스 없음, UNSANDBOXED' if unsafe else '샌드박스'})"
