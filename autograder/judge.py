"""Trusted judge: check registry, Student proxy, grading of one submission.

The judge holds the hidden checks (``autograder.checks.<assignment>``) and the reference code
(``solutions``). Student code runs only in sandboxed workers (sandbox.py/worker.py); the judge
only sends them inputs and receives data (wire.py), which it validates (compare.py).
The verdict of every check is decided here.
"""

import hashlib
import importlib
import logging
import os
import secrets
import time
from dataclasses import dataclass, field

import torch

from autograder import wire
from autograder.compare import CheckFailed
from autograder.sandbox import Sandbox, WorkerError

log = logging.getLogger("autograder")
REGISTRY = {}  # assignment -> {grade_id: CheckSpec}


@dataclass
class CheckSpec:
    grade_id: str
    fn: object
    wall_s: float | None = None


def check(grade_id, wall_s=None):
    """Decorator: register ``fn(student, rng, device)`` as the check of test cell ``grade_id``."""

    def register(fn):
        assignment = fn.__module__.rsplit(".", 1)[-1]
        REGISTRY.setdefault(assignment, {})[grade_id] = CheckSpec(grade_id, fn, wall_s)
        return fn

    return register


def load_checks(assignment, package=None):
    """Import ``<package>.<assignment>`` (default package ``autograder.checks``, or the env var
    AUTOGRADER_CHECKS_PACKAGE) and return its {grade_id: CheckSpec}."""
    if not assignment.isidentifier():
        raise ValueError(f"bad assignment name {assignment!r}")
    package = package or os.environ.get("AUTOGRADER_CHECKS_PACKAGE") or "autograder.checks"
    importlib.import_module(f"{package}.{assignment}")
    return dict(REGISTRY.get(assignment, {}))


def new_run_seed():
    """Secret per-run seed (never sent to a worker; only concrete inputs are)."""
    return secrets.randbits(63) ^ int.from_bytes(os.urandom(8), "little") >> 1


def derive_seed(run_seed, *parts):
    h = hashlib.sha256(str(run_seed).encode())
    for p in parts:
        h.update(b"\0" + str(p).encode())
    return int.from_bytes(h.digest()[:8], "little") >> 1


def devices():
    out = [torch.device("cpu")]
    if torch.cuda.is_available():
        out.append(torch.device("cuda"))
    return out


class Student:
    """Proxy to the student's code in one sandboxed child (one per check).

    Every method sends plain data to the worker and returns plain, validated data.
    """

    def __init__(self, session, device, seed):
        self._session = session
        self.device = torch.device(device)
        self._seed = seed
        self.load_errors = []

    def _request(self, op, **values):
        header = {"op": op, "device": self.device.type, "seed": self._seed}
        _, out = self._session.request(header, values)
        return out

    def _load(self, cells):
        self.load_errors = list(self._request("load", cells=list(cells)).get("errors", []))

    def has(self, name):
        """True when the student's code defines ``name``."""
        value = self._request("has", name=str(name)).get("value")
        return value is True

    def call(self, name, *args, **kwargs):
        """Call the student's ``name(*args, **kwargs)``; returns tensors/scalars/tuples."""
        try:
            return self._request("call", name=str(name), args=list(args), kwargs=kwargs)["value"]
        except WorkerError as e:
            raise CheckFailed(f"{name}(...) 실행 실패: {e}{self._load_hint()}") from None
        except KeyError:
            raise CheckFailed(f"{name}(...): 결과가 없습니다") from None

    def module(
        self,
        name,
        init_kwargs=None,
        state_dict=None,
        inputs=(),
        input_kwargs=None,
        train=False,
        seed=0,
        grad=False,
        method="forward",
        grad_outputs=None,
    ):
        """Build ``name(**init_kwargs)`` under manual_seed(seed), load state_dict, run method.

        Returns {"output", "state" (state_dict after init, before loading), "grads"
        ({param name or "input<i>": grad}, only when grad=True)}. The backward objective is
        ``sum(o.float().sum())`` over tensor outputs, or ``sum((o * g).sum())`` with grad_outputs.
        """
        try:
            out = self._request(
                "module",
                name=str(name),
                init_kwargs=dict(init_kwargs or {}),
                state_dict=state_dict,
                inputs=list(inputs),
                input_kwargs=dict(input_kwargs or {}),
                train=bool(train),
                seed=int(seed),
                grad=bool(grad),
                method=str(method),
                grad_outputs=grad_outputs,
            )
        except WorkerError as e:
            raise CheckFailed(f"{name} 모듈 실행 실패: {e}{self._load_hint()}") from None
        if not isinstance(out.get("state"), dict) or "output" not in out:
            raise CheckFailed(f"{name}: 결과 형식이 올바르지 않습니다")
        if grad and not isinstance(out.get("grads"), dict):
            raise CheckFailed(f"{name}: 기울기(gradient)가 없습니다")
        return out

    def _load_hint(self):
        if not self.load_errors:
            return ""
        return (
            "\n(코드 셀 실행 중 오류 / error while running your cells: " + self.load_errors[0] + ")"
        )


@dataclass
class Verdict:
    grade_id: str
    passed: bool
    message: str = ""
    seconds: float = 0.0
    load_failed: bool = False  # the worker died or hung while running the solution cells


@dataclass
class Report:
    """Verdicts of one notebook: {grade_id: Verdict}."""

    verdicts: dict = field(default_factory=dict)
    seconds: float = 0.0


def run_check(sandbox, spec, cells, run_seed):
    """Run one check in a fresh child; every failure mode becomes a failed Verdict."""
    t0 = time.monotonic()
    message = ""
    loading = False
    try:
        session = sandbox.open(spec.wall_s)
    except Exception as e:  # sandbox could not start: not the student's fault, but no points
        log.error("sandbox failure on %s: %s", spec.grade_id, e)
        return Verdict(spec.grade_id, False, f"채점 환경 오류 (grader error): {e}", 0.0)
    try:
        for device in devices():
            seed = derive_seed(run_seed, spec.grade_id, device.type)
            rng = torch.Generator().manual_seed(seed)
            student = Student(session, device, derive_seed(seed, "worker"))
            loading = True
            student._load(cells)
            loading = False
            spec.fn(student, rng, device)
        passed = True
    except CheckFailed as e:
        passed, message = False, str(e)
    except WorkerError as e:
        passed, message = False, f"실행 실패 (run failed): {e}"
        if loading:
            message = f"코드 셀 실행 실패 (your solution cells did not finish running): {e}"
    except wire.WireError as e:
        passed, message = False, f"잘못된 형식의 결과 (malformed result): {e}"
    except AssertionError as e:
        passed, message = False, str(e) or "검사 실패 (check failed)"
    except Exception as e:  # e.g. the student returned a value of an unexpected kind
        log.warning("check %s raised %s: %s", spec.grade_id, type(e).__name__, e)
        passed, message = False, f"결과를 검사할 수 없습니다 ({type(e).__name__}: {str(e)[:200]})"
    finally:
        status = sandbox.finish(session)
    if not passed and status not in ("exit", None):
        message += f"\n[worker: {status}]"
    return Verdict(spec.grade_id, passed, message[:4000], time.monotonic() - t0, loading)


def grade_cells(sandbox, checks, grade_ids, cells, run_seed):
    """Grade one notebook: ``cells`` = the student's solution-cell sources in notebook order,
    ``grade_ids`` = the test cells to score (from the trusted source). Returns a Report."""
    t0 = time.monotonic()
    report = Report()
    broken = None  # a verdict whose worker hung/died while loading the cells
    for gid in grade_ids:
        spec = checks.get(gid)
        if broken is not None:  # loading is the same for every check: do not wait again
            report.verdicts[gid] = Verdict(gid, False, broken.message, 0.0, True)
            continue
        if spec is None:
            msg = f"no hidden check registered for test cell {gid!r}"
            log.error(msg)
            report.verdicts[gid] = Verdict(gid, False, f"채점 설정 오류 (grader error): {msg}")
            continue
        report.verdicts[gid] = run_check(sandbox, spec, cells, run_seed)
        if report.verdicts[gid].load_failed:
            broken = report.verdicts[gid]
    report.seconds = time.monotonic() - t0
    return report


def new_sandbox(slot=0, limits=None, unsafe=False):
    return Sandbox(slot=slot, limits=limits, unsafe=unsafe)
