"""Grading on a Dask cluster: ``python -m autograder grade <assignment> --scheduler ADDRESS``.

The command (on the instructor's machine) reads the submissions, rebuilds each notebook on the
trusted release template and sends one Dask task per notebook, :func:`grade_task`, to the
workers of a ``dask.distributed`` scheduler. Each worker process keeps its own local Engine
(engines/local.py: judges and sandboxes, one per worker thread), created at the
run's first task (or by the command's warm-up call) and kept for the run: the same engine, the
same limits and the same secret run seed as on one machine. The task returns the Report as
plain data; nbgrader's Autograde converter in the command writes the gradebook, exactly as for
local grading (:class:`DaskEngine` has the Engine's interface, its futures a ``result()``).

Trust: the run seed and the hidden checks travel only among the command, the scheduler and the
worker processes (all the instructor's); student code still runs only in the workers'
sandboxes, which receive concrete inputs and never the seed.

Failures: a worker that dies mid-notebook makes the scheduler run that task again on another
worker (Dask's own rescheduling of a lost worker's tasks); a judge that stops inside a worker
raises, and the task is retried once (``retries=1``). A notebook whose grading still fails is
reported as a grader error on every test cell, never dropped. Grading is idempotent: only the
result of the task that finished is used, and the gradebook is written once, by the command.
"""

import dataclasses
import hashlib
import importlib.util
import json
import logging
import sys
import threading
import uuid
from pathlib import Path

from autograder.engines.base import (
    UNSAFE_WARNING,
    RunSettings,
    check_paths,
    judges_label,
    submit_notebook,
)
from autograder.engines.local import Engine
from autograder.judge.sandbox import SandboxLimits
from autograder.report import CLUSTER_FAILED, JUDGE_STOPPED, Report, empty_report

log = logging.getLogger("autograder")
GRADER_FAILED = (
    "채점 오류 (grader error): 채점 클러스터에서 이 노트북의 채점이 두 번 실패했습니다. "
    "강사에게 재채점을 요청하세요. (grading failed twice on the grading cluster)"
)


class ClusterUnavailable(RuntimeError):
    """No usable worker: the scheduler cannot be reached, or a worker cannot grade."""


class JudgeStopped(RuntimeError):
    """A worker's judge process stopped while grading (the task is retried elsewhere)."""


def fingerprint(checks_dir, assignments):
    """sha256 over what a judge loads to grade: the assignments' check modules and the reference
    solutions (``solutions/*.py``), by file name, so that a worker whose repository differs from
    the command's is refused instead of grading with other checks."""
    files = [Path(p) for p in check_paths(checks_dir, assignments)]
    spec = importlib.util.find_spec("solutions")
    for folder in (spec.submodule_search_locations or []) if spec else []:
        files += sorted(Path(folder).glob("*.py"))
    h = hashlib.sha256()
    for f in files:
        h.update(f"{f.parent.name}/{f.name}\0".encode())
        h.update(f.read_bytes() if f.is_file() else b"\0missing\0")
    return h.hexdigest()


class WorkerRun:
    """A run's settings for the workers (run seed, limits, checks, fingerprint) as the argument
    of every task: Dask logs the arguments of a task that fails, and this one shows none."""

    def __init__(self, data):
        self.data = data

    def __repr__(self):
        return "RunSettings(...)"


# ----------------------------------------------------------------------------- worker side
# This worker process's engines, one per grading run (the key holds the run seed). A process-
# local cache: Dask runs every task of a worker process in that process, in its threads.

_ENGINES = {}
_LOCK = threading.Lock()


class _Entry:
    def __init__(self, engine):
        self.engine, self.busy = engine, 0


def _run_key(settings):
    return json.dumps({k: v for k, v in settings.items() if k != "limits"}, sort_keys=True)


def worker_engine(run, jobs):
    """This process's Engine for the run (WorkerRun; started at the first call; engines of
    earlier runs that are idle are closed), marked busy until :func:`release`."""

    settings = run.data
    key = _run_key(settings)
    with _LOCK:
        entry = _ENGINES.get(key)
        if entry is None:
            for old in [k for k, e in _ENGINES.items() if e.busy == 0]:
                _ENGINES.pop(old).engine.close()
            mine = fingerprint(settings["checks_dir"], settings["assignments"])
            if mine != settings["fingerprint"]:
                raise ClusterUnavailable(
                    "this worker's hidden checks or solutions/ differ from the command's "
                    "(update its repository)"
                )
            run_settings = RunSettings(
                jobs=jobs,
                limits=SandboxLimits(**settings["limits"]),
                unsafe=settings["unsafe"],
                checks_dir=settings["checks_dir"],
                run_seed=settings["run_seed"],
                assignments=settings["assignments"],
            )
            engine = Engine(run_settings)
            entry = _ENGINES[key] = _Entry(engine)
        if entry.engine.limits.as_dict() != settings["limits"]:
            entry.engine.set_limits(SandboxLimits(**settings["limits"]))
        entry.busy += 1
    return entry


def release(entry):
    with _LOCK:
        entry.busy -= 1


def _threads(dask_worker=None):
    if dask_worker is None:
        from distributed import get_worker

        dask_worker = get_worker()
    return dask_worker.state.nthreads


def grade_task(run, assignment, grade_ids, cells, solutions, public=None):
    """The Dask task: grade one notebook with this worker process's Engine -> Report data."""
    entry = worker_engine(run, _threads())
    try:
        report = entry.engine.submit(assignment, grade_ids, cells, solutions, public=public)
        report = report.result()
    finally:
        release(entry)
    if report.reason == JUDGE_STOPPED:
        raise JudgeStopped("the judge process stopped while grading this notebook")
    return report.to_data()


def warm_up(run, dask_worker=None):
    """Run on every worker by the command before it sends notebooks: start this run's judges
    now. -> {"jobs", "unsafe"} or {"error"} (a worker that cannot grade)."""
    try:
        entry = worker_engine(run, _threads(dask_worker))
        release(entry)
        return {"jobs": entry.engine.jobs, "unsafe": entry.engine.unsafe}
    except Exception as e:
        return {"error": f"{type(e).__name__}: {e}"}


def finish_run(run, dask_worker=None):
    """Close this run's engine in this worker process (its judges and sandboxes)."""
    key = _run_key(run.data)
    with _LOCK:
        entry = _ENGINES.get(key)
        if entry is None or entry.busy:
            return
        del _ENGINES[key]
    try:
        entry.engine.close()
    except Exception as e:
        log.warning("closing the judges of a run failed: %s", e)


# ----------------------------------------------------------------------------- command side


class ClusterVerdict:
    """A Dask future of Report data, seen as a Future[Report] (``result()``): a task that
    failed (twice, or on every worker it was sent to) becomes a grader-error Report."""

    def __init__(self, future, grade_ids):
        self.future, self.grade_ids = future, list(grade_ids)
        self.report = None

    def result(self, timeout=None):
        if self.report is None:
            try:
                self.report = Report.from_data(self.future.result(timeout=timeout))
            except Exception as e:  # KilledWorker, JudgeStopped twice, a worker's error
                log.error("grading %s failed: %s: %s", self.future.key, type(e).__name__, e)
                self.report = empty_report(self.grade_ids, GRADER_FAILED, reason=CLUSTER_FAILED)
            self.future.release()
        return self.report


class DaskEngine:
    """The Engine's interface (submit, submit_notebook, set_limits, close) on the workers of a
    Dask scheduler at ``address`` (e.g. ``tcp://host:8786``).

    Waits up to ``wait_s`` for a first worker, then starts this run's judges on every worker
    and refuses (ClusterUnavailable) if any cannot grade (no bwrap, other checks). ``client``:
    an existing ``distributed.Client`` instead of an address (tests).
    """

    def __init__(self, settings=None, address=None, wait_s=120, client=None, **fields):
        from distributed import Client

        self.settings = (settings or RunSettings(**fields)).resolved(sandbox_here=False)
        self.unsafe, self.limits = self.settings.unsafe, self.settings.limits
        self.run_seed = self.settings.run_seed
        self.run_id = uuid.uuid4().hex[:12]
        checks_dir, assignments = self.settings.checks_dir, self.settings.assignments
        self.worker_settings = {
            "run_seed": self.run_seed,
            "limits": self.limits.as_dict(),
            "unsafe": self.unsafe,
            "checks_dir": checks_dir,
            "assignments": assignments,
            "fingerprint": fingerprint(checks_dir, assignments),
        }
        self.run = WorkerRun(self.worker_settings)
        self.own_client = client is None
        try:
            self.client = client or Client(address, timeout="30s")
        except OSError as e:
            raise ClusterUnavailable(f"cannot reach the Dask scheduler {address}: {e}") from e
        self.keys = set()
        self.closed = False
        try:
            self.client.wait_for_workers(1, timeout=wait_s)
        except TimeoutError as e:
            self.close()
            raise ClusterUnavailable(f"no Dask worker joined {address} in {wait_s} s") from e
        states = self.client.run(warm_up, self.run)
        bad = {w: s["error"] for w, s in states.items() if "error" in s}
        if bad:
            self.close()
            lines = "\n".join(f"  {w}: {e}" for w, e in sorted(bad.items()))
            raise ClusterUnavailable(f"{len(bad)} Dask worker(s) cannot grade:\n{lines}")
        self.workers = len(states)
        self.jobs = sum(s["jobs"] for s in states.values())
        if any(s["unsafe"] for s in states.values()) and not self.unsafe:
            self.unsafe = True  # a worker runs unsandboxed (its AUTOGRADER_UNSAFE_NO_SANDBOX)
            print(UNSAFE_WARNING, file=sys.stderr, flush=True)

    def describe(self):
        return f"Dask 워커 {self.workers}개(시작할 때)의 {judges_label(self.jobs, self.unsafe)}"

    def set_limits(self, limits):
        """Limits for the tasks submitted from now on (workers apply them before grading)."""
        self.limits = limits
        self.settings = dataclasses.replace(self.settings, limits=limits)
        self.worker_settings["limits"] = limits.as_dict()

    def submit(self, assignment, grade_ids, cells, solutions=(), name=None, public=None):
        """One Dask task grading one notebook -> ClusterVerdict (``result()`` -> Report). The
        task key is ``assignment/name/run`` (``name``: student/notebook)."""
        key = f"{assignment}/{name or 'notebook'}/{self.run_id}"
        if key in self.keys:
            key += f"/{len(self.keys)}"
        self.keys.add(key)
        future = self.client.submit(
            grade_task,
            self.run,
            assignment,
            list(grade_ids),
            list(cells),
            list(solutions),
            dict(public or {}),
            key=key,
            pure=False,
            retries=1,
        )
        return ClusterVerdict(future, grade_ids)

    def submit_notebook(self, assignment, template, submission, name=None):
        return submit_notebook(self, assignment, template, submission, name)

    def close(self, wait=True):
        """Close this run's judges on the workers (``wait`` is Engine.close's: the workers'
        judges stop at once either way)."""
        if self.closed:
            return
        self.closed = True
        try:
            self.client.run(finish_run, self.run)
        except Exception as e:  # workers gone: their engines went with them
            log.warning("could not close the workers' judges: %s", e)
        if self.own_client:
            self.client.close()
