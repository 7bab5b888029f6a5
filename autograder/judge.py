"""Trusted judge: the Student proxy, one submission's grading state, verdicts.

The hidden checks (pytest modules in ``autograder/checks/``) talk to the student's code only
through :class:`Student`, which sends plain data to a worker and returns plain, validated data
(wire.py). A worker is a sandboxed child (sandbox.py/worker.py) or, for the instructor's
``--reference`` run, the same request handler in-process on ``solutions/`` (ReferenceSession).
Every verdict is decided here and in the check; student code never runs in this process.
"""

import ast
import re

import torch

from autograder import wire
from autograder.checking import CheckFailed, describe
from autograder.sandbox import StudentRaised, WorkerCrashed, WorkerTimeout, parse_reply
from autograder.seeds import derive_seed
from autograder.worker import Child

# errors that mean tensors on two devices met (the student made a tensor on the wrong one)
DEVICE_MIX = re.compile(r"same device|expected device|two devices|wrong device", re.I)


class StudentCrashed(CheckFailed):
    """The student's worker died (crash, exit, memory or CPU limit)."""


class StudentTimeout(CheckFailed):
    """The student's worker ran past its wall-clock limit."""


# ----------------------------------------------------------------------------- student code


def _parse(cells):
    trees = []
    for src in cells:
        try:
            trees.append(ast.parse(src))
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            trees.append(ast.Module(body=[], type_ignores=[]))
    return trees


class CodeFacts:
    """What the judge reads from the student's cells without running them (syntax tree only):
    which top-level definitions use which others, and calls the assignment forbids."""

    def __init__(self, cells):
        self.trees = _parse(cells)
        self.uses = {}  # top-level def/class name -> names it references
        self._forbidden = {}  # frozenset of names -> _uses_of's answer
        for tree in self.trees:
            for node in tree.body:
                if isinstance(node, DEFINITIONS):
                    names = {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}
                    self.uses[node.name] = names - {node.name}

    def dependencies(self, name, seen=None):
        """Student-defined names that ``name`` uses, directly or through others."""
        seen = set() if seen is None else seen
        for dep in self.uses.get(name, ()):
            if dep in self.uses and dep not in seen:
                seen.add(dep)
                self.dependencies(dep, seen)
        return seen

    def forbidden(self, names, within):
        """[(expression, cell, line)] where the cells use an attribute, import or getattr
        string in ``names`` (e.g. 'softmax' matches torch.softmax, F.softmax, x.softmax):
        in top-level code, and in the top-level definitions named in ``within``."""
        return [
            hit
            for name, is_definition, hits in self._uses_of(frozenset(names))
            if not is_definition or name in within
            for hit in hits
        ]

    def _uses_of(self, names):
        """[(top-level name, is a definition, hits)] for ``names``, read once per submission
        (every item of a check asks again)."""
        if names not in self._forbidden:
            found = []
            for i, tree in enumerate(self.trees, start=1):
                for top in tree.body:
                    hits = [
                        (text[:80], i, getattr(node, "lineno", 0))
                        for node in ast.walk(top)
                        if (text := _forbidden_use(node, names))
                    ]
                    if hits:
                        found.append(
                            (getattr(top, "name", None), isinstance(top, DEFINITIONS), hits)
                        )
            self._forbidden[names] = found
        return self._forbidden[names]


DEFINITIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


def _forbidden_use(node, names):
    if isinstance(node, ast.Attribute) and node.attr in names:
        return ast.unparse(node)
    if isinstance(node, ast.ImportFrom):
        bad = [a.name for a in node.names if a.name in names]
        return f"from {node.module} import {bad[0]}" if bad else None
    if isinstance(node, ast.Call) and getattr(node.func, "id", "") == "getattr":
        arg = node.args[1:2]
        if arg and isinstance(arg[0], ast.Constant) and arg[0].value in names:
            return ast.unparse(node)
    return None


# ----------------------------------------------------------------------------- sessions


class ReferenceSession:
    """In-process stand-in for a sandboxed child, serving ``namespace`` (e.g. solutions.softmax)
    with the worker's own request handler, through the same wire encoding both ways."""

    wall_s = float("inf")

    def __init__(self, namespace):
        self.child = Child(namespace=dict(namespace))

    def request(self, header, values=None):
        frame = wire.encode(header, values)
        head, blob = wire.read_frame(_reader(frame))
        out = wire.read_frame(_reader(self.child.handle(head, blob)))
        return parse_reply(*out)


def _reader(data):
    view = memoryview(data)
    pos = [0]

    def recv(n):
        chunk = bytes(view[pos[0] : pos[0] + n])
        pos[0] += len(chunk)
        return chunk

    return recv


def call_text(name, args, kwargs):
    """``name(x: (4, 7) float32, dim=0)``: the call with shapes instead of values."""

    def short(v):
        if isinstance(v, torch.Tensor):
            return f"{tuple(v.shape)} {str(v.dtype).removeprefix('torch.')}"
        if isinstance(v, list | tuple) and any(isinstance(t, torch.Tensor) for t in v):
            return "(" + ", ".join(short(t) for t in v[:4]) + ")"
        return describe(v)

    parts = [short(a) for a in args] + [f"{k}={short(v)}" for k, v in kwargs.items()]
    return f"{name}({', '.join(parts)})"


def _carries_device(values):
    if isinstance(values, torch.Tensor | torch.device):
        return True
    if isinstance(values, list | tuple):
        return any(_carries_device(v) for v in values)
    if isinstance(values, dict):
        return any(_carries_device(v) for v in values.values())
    return False


class Student:
    """Proxy to the student's code for one check on one device.

    ``call`` and ``module`` run the student's function or module on the check's device; on a
    CPU grader the worker runs each kind of call once more under its device probe, where a
    tensor made without a device lands on ``meta`` (as it would land on the CPU while the
    inputs live on a GPU). Inputs that the student's code changes in place fail the check.
    """

    def __init__(self, session, device, seed, probe_device=True, probed=None):
        self._session = session
        self.device = torch.device(device)
        self._seed = seed
        self._probe_device = probe_device and self.device.type == "cpu"
        self._probed = set() if probed is None else probed  # call signatures already probed
        self.load_errors = []
        self.used = []  # names of the student's code this check called

    def _request(self, op, probe=False, **values):
        header = {"op": op, "device": self.device.type, "seed": self._seed}
        if probe:
            header["probe"] = True
        try:
            _, out = self._session.request(header, values)
        except WorkerTimeout as e:
            raise StudentTimeout(str(e) + self._load_hint()) from None
        except WorkerCrashed as e:
            raise StudentCrashed(str(e) + self._load_hint()) from None
        return out

    def _load(self, cells):
        self.load_errors = list(self._request("load", cells=list(cells)).get("errors", []))

    def has(self, name):
        """True when the student's code defines ``name``."""
        return self._request("has", name=str(name)).get("value") is True

    def call(self, name, *args, **kwargs):
        """Call the student's ``name(*args, **kwargs)``; returns tensors/scalars/tuples."""
        self.used.append(name)
        what = call_text(name, args, kwargs)
        probe = self._probe_device and _carries_device([args, kwargs])
        probe = probe and self._new_signature("call", name, args, kwargs)
        out = self._run("call", what, probe, name=str(name), args=list(args), kwargs=kwargs)
        if "value" not in out:
            raise CheckFailed(f"{what}: 결과가 없습니다")
        self._check_inputs(out, what)
        self._check_probe(out, what)
        return out["value"]

    def _new_signature(self, op, name, args, kwargs):
        """Probe each kind of call once per test function: the same function with the same
        flags (bools, strings, None) and the same tensor ranks and dtypes takes the same code
        path whatever the sizes (numbers are told apart by type only)."""

        def kind(v):
            if isinstance(v, torch.Tensor):
                return ("tensor", v.dim(), v.dtype)
            if isinstance(v, list | tuple):
                return tuple(kind(x) for x in v[:16])
            if isinstance(v, dict):
                return tuple(sorted((str(k), kind(x)) for k, x in v.items()))
            if isinstance(v, int | float) and not isinstance(v, bool):
                return type(v).__name__
            return repr(v)[:100]

        key = (op, name, kind(list(args)), kind(kwargs))
        if key in self._probed:
            return False
        self._probed.add(key)
        return True

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
        forward_seed=None,
    ):
        """Build ``name(**init_kwargs)`` under manual_seed(seed), load state_dict, set train(),
        then (under manual_seed(forward_seed) when given) run ``method(*inputs)``.

        Returns {"output", "state" (state_dict after init, before loading), "grads"
        ({param name or "input<i>": grad}, only when grad=True)}. The backward objective is
        ``sum(o.float().sum())`` over tensor outputs, or ``sum((o * g).sum())`` with grad_outputs.
        """
        self.used.append(name)
        kwargs = dict(init_kwargs or {})
        what = call_text(name, (), kwargs) + "." + call_text(method, inputs, input_kwargs or {})
        values = dict(
            name=str(name),
            init_kwargs=kwargs,
            state_dict=state_dict,
            inputs=list(inputs),
            input_kwargs=dict(input_kwargs or {}),
            train=bool(train),
            seed=int(seed),
            grad=bool(grad),
            method=str(method),
            grad_outputs=grad_outputs,
            forward_seed=forward_seed,
        )
        signature = (f"{name}.{method}", [list(inputs), dict(input_kwargs or {})], kwargs)
        probe = self._probe_device and self._new_signature("module", *signature)
        out = self._run("module", what, probe, **values)
        if not isinstance(out.get("state"), dict) or "output" not in out:
            raise CheckFailed(f"{what}: 결과 형식이 올바르지 않습니다")
        if grad and not isinstance(out.get("grads"), dict):
            raise CheckFailed(f"{what}: 기울기(gradient)가 없습니다")
        self._check_inputs(out, what)
        self._check_probe(out, what)
        return out

    def _run(self, op, what, probe=False, **values):
        try:
            return self._request(op, probe, **values)
        except StudentRaised as e:
            hint = ""
            if DEVICE_MIX.search(str(e)):
                hint = (
                    "\n서로 다른 장치(device)의 텐서가 섞였습니다. "
                    "새 텐서는 입력과 같은 장치에 만드세요."
                )
            raise CheckFailed(f"{what} 실행 중 오류: {e}{hint}{self._load_hint()}") from None

    def _check_inputs(self, out, what):
        changed = out.get("mutated") or []
        if changed:
            labels = ", ".join(str(c)[:40] for c in list(changed)[:4])
            raise CheckFailed(
                f"{what}: 입력 텐서({labels})의 값을 제자리에서(in-place) 바꾸었습니다. "
                "입력은 읽기만 하고 결과는 새 텐서로 만드세요 (예: x.sub_(m), x[...] = ... 대신 "
                "x - m, torch.where(...))"
            )

    def _check_probe(self, out, what):
        """The worker's device probe (see worker.DefaultDeviceProbe) -> CheckFailed on a device
        mix or a result left on the default device; any other error there gives no verdict
        (e.g. code that reads values of the tensor it made)."""
        probe = out.get("probe")
        if not isinstance(probe, dict):
            return
        if DEVICE_MIX.search(str(probe.get("error", ""))):
            raise CheckFailed(
                f"{what}: 입력이 기본 장치(CPU)가 아닌 장치(device)에 있으면(예: GPU) 오류가 "
                f"납니다{str(probe.get('where', ''))[:200]}.\n"
                "입력과 다른 장치(기본 장치)에 새 텐서를 만들고 있습니다. "
                "torch.arange(T, device=x.device)처럼 입력의 device를 쓰세요."
            )
        if probe.get("stray"):
            raise CheckFailed(
                f"{what}: 입력이 다른 장치(device)에 있을 때도 결과가 기본 장치에 만들어집니다. "
                "새 텐서는 입력(또는 device 인자)과 같은 장치에 만드세요 "
                "(예: torch.eye(n, device=x.device))."
            )

    def _load_hint(self):
        if not self.load_errors:
            return ""
        return (
            "\n(코드 셀 실행 중 오류 / error while running your cells: " + self.load_errors[0] + ")"
        )


# ----------------------------------------------------------------------------- one submission


class SandboxBackend:
    """Sessions in a sandbox: a fresh child per test function."""

    def __init__(self, sandbox):
        self.sandbox = sandbox

    def open(self):
        return self.sandbox.open()

    def finish(self, session):
        return self.sandbox.finish(session)


class ReferenceBackend:
    """In-process sessions on a trusted namespace (the reference solutions)."""

    def __init__(self, namespace):
        self.namespace = namespace

    def open(self):
        return ReferenceSession(self.namespace)

    def finish(self, session):
        return "exit"


class Grading:
    """One submission being graded by one check module.

    ``cells``: the code the worker runs before the checks (trusted given cells and the student's
    solution cells, in notebook order), or None for the reference backend; ``solutions``: the
    student's solution cells alone (read for forbidden calls and dependencies). Each test
    function gets a fresh child (:meth:`student`), ended by :meth:`end_function`.
    """

    def __init__(self, backend, cells, run_seed, solutions=(), probe_device=True):
        self.backend = backend
        self.cells = cells
        self.facts = CodeFacts(solutions)
        self.run_seed = run_seed
        self.probe_device = probe_device
        self.function = None
        self.session = None
        self.broken = None  # message, when loading the cells hung or crashed the worker
        self.students = []
        self.loaded = None  # the device the current child's cells were loaded for
        self.probed = set()  # call signatures the device probe has run in this function
        self.load_errors = []

    def student(self, function, device):
        """The Student for test function ``function`` on ``device``: one fresh child per test
        function, the cells loaded into it once per device (its items share that state)."""
        if self.broken is not None:
            raise self.broken
        if function != self.function:
            self.end_function()
            self.function = function
        if self.session is None:
            self.session = self.backend.open()
        device = torch.device(device)
        seed = derive_seed(self.run_seed, function, device, "worker")
        student = Student(self.session, device, seed, self.probe_device, self.probed)
        if self.cells is not None and self.loaded != device:
            try:
                student._load(self.cells)
            except (StudentTimeout, StudentCrashed) as e:
                msg = f"코드 셀 실행 실패 (your solution cells did not finish running): {e}"
                self.broken = type(e)(msg)
                raise self.broken from None
            self.loaded, self.load_errors = device, student.load_errors
        student.load_errors = self.load_errors
        self.students.append(student)
        return student

    def used(self):
        """The student's definitions the current test function ran, with their dependencies."""
        used = {n for s in self.students for n in s.used}
        for name in list(used):
            used |= self.facts.dependencies(name)
        return used

    def check_forbidden(self, names):
        """Fail when the code this test ran uses a ready-made function the notebook forbids."""
        hits = self.facts.forbidden(names, self.used()) if names else []
        if hits:
            text, cell, line = hits[0]
            raise CheckFailed(
                f"`{text}` (셀 {cell}, {line}행): 이 과제에서는 이 기성 함수를 쓸 수 없습니다. "
                "직접 구현하세요."
            )

    def note(self):
        """Which other functions of the student's own the failed check also ran."""
        direct = {n for s in self.students for n in s.used}
        deps = self.used() - direct
        if not deps:
            return ""
        return (
            f"\n참고: 이 검사는 여러분이 작성한 {', '.join(sorted(deps))}도 함께 사용합니다. "
            "그 함수의 검사도 실패했다면 그것부터 고치세요."
        )

    def end_function(self):
        """Close the current test function's child -> its final status (None if none)."""
        status = None
        if self.session is not None:
            status = self.backend.finish(self.session)
        self.session, self.function, self.students, self.loaded = None, None, [], None
        self.probed = set()
        return status


def feedback(exc):
    """(outcome, message) for an exception raised by a check item (never check source code)."""
    if isinstance(exc, StudentTimeout):
        return "timeout", str(exc)
    if isinstance(exc, StudentCrashed):
        return "crashed", str(exc)
    if isinstance(exc, CheckFailed):
        return "failed", str(exc)
    if isinstance(exc, AssertionError):  # a plain assert: its own message, never its source
        text = str(exc).split("\nassert ", 1)[0]
        if not text or text.startswith("assert "):
            text = "검사 실패 (check failed)"
        return "failed", text
    return "failed", f"결과를 검사할 수 없습니다 ({type(exc).__name__}: {str(exc)[:200]})"
