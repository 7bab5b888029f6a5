"""One submission's grading by one check module: the cells loaded once per test function's child,
the source policy applied after each function, the public tests, the notes for the instructor.
Trusted judge only.
"""

import contextlib
import functools
import marshal

import torch

from autograder.judge.checking import CheckFailed
from autograder.judge.diagnosis import StudentCrashed, StudentTimeout, tamper_message
from autograder.judge.given import answer_given
from autograder.judge.policy import CodeFacts, cell_label, forbidden_ops
from autograder.judge.sandbox import StudentRaised, WorkerCrashed, WorkerTimeout, parse_reply
from autograder.judge.student import Spec, Student
from autograder.sandboxed import wire
from autograder.sandboxed.child import Child, cell_name
from autograder.sandboxed.protocol import child_reply
from autograder.seeds import derive_seed

# ----------------------------------------------------------------------------- sessions


class ReferenceSession:
    """In-process stand-in for a sandboxed child, serving ``namespace`` (e.g. solutions.softmax)
    with the worker's own request handler, through the same wire encoding both ways."""

    wall_s = float("inf")

    def __init__(self, namespace):
        self.child = Child(namespace=dict(namespace))

    def request(self, header, values=None, answer=None):
        frame = wire.encode(header, values)
        head, blob = wire.read_frame(_reader(frame))
        _, values = parse_reply(*wire.read_frame(_reader(self.child.handle(head, blob))))
        return child_reply(header["op"], values)


def _reader(data):
    view = memoryview(data)
    pos = [0]

    def recv(n):
        chunk = bytes(view[pos[0] : pos[0] + n])
        pos[0] += len(chunk)
        return chunk

    return recv


# ----------------------------------------------------------------------------- one submission


class SandboxBackend:
    """Sessions in a sandbox: a fresh child per test function."""

    def __init__(self, sandbox):
        self.sandbox = sandbox

    def open(self, block=()):
        return self.sandbox.open(block=block)

    def finish(self, session):
        return self.sandbox.finish(session)


class ReferenceBackend:
    """In-process sessions on a trusted namespace (the reference solutions)."""

    def __init__(self, namespace):
        self.namespace = namespace

    def open(self, block=()):
        return ReferenceSession(self.namespace)

    def finish(self, session):
        return "exit"


def wire_code(index, source):
    """Cell ``index`` compiled here, once per submission, for every child that loads it
    (child.cell_code): its marshalled code object as a uint8 tensor, data on the wire; None
    for a cell that does not compile (the child compiles it and reports the error)."""
    try:
        code = compile(source, cell_name(index), "exec", dont_inherit=True)
    except (SyntaxError, ValueError, RecursionError, MemoryError, OverflowError):
        return None
    return torch.frombuffer(bytearray(marshal.dumps(code)), dtype=torch.uint8)


class Grading:
    """One submission being graded by one check module.

    ``cells``: the code the worker runs before the checks (trusted given cells and the student's
    solution cells, in notebook order), or None for the reference backend; ``solutions``: the
    student's solution cells alone (read for forbidden calls and dependencies). Each test
    function gets a fresh child (:meth:`student`), ended by :meth:`end_function`.
    """

    def __init__(self, backend, cells, run_seed, solutions=(), simulate_gpu=True):
        self.backend = backend
        self.cells = cells
        self.labels = None if cells is None else [cell_label(src) for src in cells]
        # the student's own cells: a runtime error is located in them, never in a given cell
        own = set(solutions)
        self.editable = None if cells is None else [src in own for src in cells]
        self.code = None if cells is None else [wire_code(i, src) for i, src in enumerate(cells)]
        self.facts = CodeFacts(solutions)
        self.run_seed = run_seed
        self.simulate_gpu = simulate_gpu  # a CPU grader runs the student's code on a "GPU"
        self.function = None
        self.session = None
        self.broken = None  # message, when loading the cells hung or crashed the worker
        self.students = []
        self.given = set()  # the helpers the current test function takes as given
        self.loaded = None  # the device the current child's cells were loaded for
        self.load_errors = []
        self.suspicions = []  # runtime signs of tampering (see Student._check_device)

    def student(self, function, device, forbid=(), spec=None, given=None):
        """The Student for test function ``function`` on ``device``: one fresh child per test
        function, the cells loaded into it once per device (its items share that state), with
        the operators of the forbidden names ``forbid`` blocked before any cell runs, the
        notebook's rules ``spec`` applied to every call, and the student's helpers named in
        ``given`` ({name: reference function}) answered by the judge (see answer_given)."""
        if self.broken is not None:  # the cells hung or crashed once: not waited for again
            raise self.broken
        if function != self.function:
            self.end_function()
            self.function = function
        device = torch.device(device)
        seed = derive_seed(self.run_seed, function, device, "worker")
        self.given |= set(given or ())
        link = Link(self, device, forbid, given)
        link.session()  # load now: a cell that hangs fails the item here
        student = Student(link, device, seed, self._named(forbid), spec or Spec())
        student.load_errors = self.load_errors
        student.suspicions = self.suspicions
        self.students.append(student)
        return student

    def session_for(self, device, forbid, given=None):
        """The test function's child, opened and its cells loaded for ``device`` if needed."""
        if self.broken is not None:
            raise self.broken
        if self.loaded is not None and self.loaded != device:
            # one device per child: a CPU call's simulated GPU (and whatever the cells left in
            # the process) must not reach the calls on a real GPU (seen on an H100: CUDA calls
            # made under the simulation returned CPU tensors)
            self.close_session()
        if self.session is None:
            self.session, self.loaded = self.backend.open(forbidden_ops(forbid)), None
        if self.loaded != device:
            self.load(self.session, device, forbid, given)
            self.loaded = device
        return self.session

    def load(self, session, device, forbid, given=None):
        """Run the cells in ``session``'s child, the forbidden operators blocked first, then
        replace the helpers named in ``given`` by the judge's answers."""
        if self.cells is None:
            return
        header = {"op": "load", "device": device.type, "seed": 0}
        if self.simulate_gpu and device.type == "cpu":
            header["simulate"] = True
        values = {"cells": list(self.cells), "block": forbidden_ops(forbid)}
        values["labels"] = self.labels
        values["editable"] = self.editable
        values["code"] = self.code
        values["given"] = sorted(given or ())
        try:
            out = session.request(header, values).values
        except (WorkerTimeout, WorkerCrashed) as e:
            kind = StudentTimeout if isinstance(e, WorkerTimeout) else StudentCrashed
            self.broken = kind(f"코드 셀 실행 실패 (셀을 실행하다 멈추거나 죽었습니다): {e}")
            raise self.broken from None
        self.load_errors = [str(x) for x in out.get("errors", [])]

    def _named(self, forbid):
        """() -> where the student's code names one of the forbidden ``forbid`` ('' if
        nowhere), for the message of a blocked operator."""

        def named():
            hits = self.facts.forbidden(forbid, set(self.facts.uses)) if forbid else []
            return f"`{hits[0][0]}` ({hits[0][1]}, {hits[0][2]}행): " if hits else ""

        return named

    def used(self):
        """The student's definitions the current test function ran, with their dependencies
        (not those of the helpers it takes as given: the judge answered those calls)."""
        used = {n for s in self.students for n in s.used}
        for name in list(used):
            used |= self.facts.dependencies(name, skip=self.given)
        return used

    def check_policy(self, names):
        """After a test function ran: fail it when the code it ran (the student's definitions
        it called, their dependencies and top-level code) uses a ready-made function the check
        forbids (``names``), code the forbidden-name rule cannot follow (only when ``names``:
        fail closed), or code that inspects or patches the grader (always)."""
        used = self.used()
        hits = self.facts.tampering(used)
        if hits:
            raise CheckFailed(tamper_message(hits[0]))
        if not names:
            return
        if self.facts.unreadable:
            cell, reason = self.facts.unreadable[0]
            raise CheckFailed(
                f"{cell}의 코드를 채점기가 분석할 수 없습니다 ({reason}). 이 검사는 기성 함수 "
                "금지 규칙이 적용되므로 분석할 수 없는 코드에는 점수를 줄 수 없습니다. 중첩을 "
                "줄이는 등 평범한 파이썬 코드로 다시 쓰세요."
            )
        hits = self.facts.forbidden(names, used)
        if hits:
            text, cell, line = hits[0]
            raise CheckFailed(
                f"`{text}` ({cell}, {line}행): 이 과제에서는 이 기성 함수를 쓸 수 없습니다. "
                "직접 구현하세요."
            )
        hits = self.facts.dynamic(used)
        if hits:
            text, cell, line = hits[0]
            raise CheckFailed(
                f"`{text}` ({cell}, {line}행): 이름을 실행 중에 만들어 찾는 코드(getattr에 "
                "계산한 이름, exec, globals(), __dict__ 등)는 채점기가 따라갈 수 없습니다. 이 "
                "검사는 기성 함수 금지 규칙이 적용되므로 점수를 줄 수 없습니다. 함수와 속성의 "
                "이름을 코드에 그대로 쓰세요."
            )

    def public_tests(self, public):
        """Run the public code of test cells (``{grade_id: code}``, in notebook order: what the
        student saw in the notebook) one after another in one child, the cells loaded once,
        with nothing blocked -> {grade_id: (outcome, message)}. A submission that fails its
        notebook's own test cannot keep the item, whatever the hidden checks said; passing it
        earns nothing. A test cell that times out or crashes a child that others ran in first
        runs again alone in a new one, so that only its own time and memory count."""
        results = {}
        self.end_function()
        self.function = "public tests"
        for grade_id, source in public.items():
            shared = self.session is not None
            results[grade_id] = self._public_test(grade_id, source)
            if results[grade_id][0] in ("timeout", "crash"):
                self.close_session()  # a child that hung or died is not used again
                if shared:
                    results[grade_id] = self._public_test(grade_id, source)
                    self.close_session()
        self.end_function()
        return results

    def _public_test(self, grade_id, source):
        """One test cell's public code in the current child (opened if needed) -> (outcome,
        message)."""
        device = torch.device("cpu")
        seed = derive_seed(self.run_seed, f"{grade_id} (public test)", device, "worker")
        student = Student(Link(self, device, ()), device, seed)
        try:
            student._session.session()  # the cells, loaded once per child
            student.load_errors = self.load_errors
            student._request("exec", source=str(source))
        except StudentTimeout as e:
            return "timeout", f"공개 테스트(노트북의 테스트 셀)가 끝나지 않습니다: {e}"
        except StudentCrashed as e:
            return "crash", f"공개 테스트(노트북의 테스트 셀) 실행 중 작업자가 죽었습니다: {e}"
        except StudentRaised as e:
            return "failed", (
                "노트북에 있는 이 항목의 공개 테스트 셀이 실패합니다. 노트북에서 그 셀을 실행해 "
                f"오류를 확인하세요:\n{e}{student._load_hint()}"
            )
        return "passed", ""

    def problems(self):
        """Notes for the instructor about the whole submission (Report.problems): code that
        inspects or patches the grader (read from the source), and runtime signs of it."""
        notes = [
            f"채점기 조작 의심: `{text}` ({cell}, {line}행)"
            for text, cell, line in self.facts.tampering()[:5]
        ]
        return notes + [f"채점기 조작 의심: {s}" for s in dict.fromkeys(self.suspicions)][:5]

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

    def close_session(self):
        """Close the current child (a later request opens another) -> its final status."""
        status = None
        if self.session is not None:
            status = self.backend.finish(self.session)
        self.session, self.loaded = None, None
        return status

    def end_function(self):
        """Close the current test function's child -> its final status (None if none)."""
        status = self.close_session()
        self.function, self.students, self.given = None, [], set()
        return status


class Link:
    """The child a Student talks to: the test function's child (see Grading.session_for), or,
    inside :meth:`fresh`, a child of its own started for the requests made there."""

    def __init__(self, grading, device, forbid, given=None):
        self.grading, self.device, self.forbid = grading, device, forbid
        self.given = dict(given or {})
        self.pinned = None

    def session(self):
        return self.pinned or self.grading.session_for(self.device, self.forbid, self.given)

    def on(self, device):
        """A link like this one to a child on ``device`` (one device per child)."""
        return Link(self.grading, torch.device(device), self.forbid, self.given)

    def request(self, header, values=None):
        answer = functools.partial(answer_given, self.given) if self.given else None
        return self.session().request(header, values, answer=answer)

    @contextlib.contextmanager
    def fresh(self):
        """Requests in a new process with the cells loaded anew: nothing the student's code
        remembers from earlier calls (a memo, a counter, its random state) reaches them."""
        grading = self.grading
        grading.close_session()
        if grading.broken is not None:
            raise grading.broken
        session = grading.backend.open(forbidden_ops(self.forbid))
        try:
            grading.load(session, self.device, self.forbid, self.given)
            self.pinned = session
            yield
        finally:
            self.pinned = None
            grading.backend.finish(session)
