"""Trusted judge: the Student proxy, one submission's grading state, verdicts.

The hidden checks (pytest modules in ``autograder/checks/``) talk to the student's code only
through :class:`Student`, which sends plain data to a worker and returns plain, validated data
(wire.py). A worker is a sandboxed child (sandbox.py/worker.py) or, for the instructor's
``--reference`` run, the same request handler in-process on ``solutions/`` (ReferenceSession).
Every verdict is decided here and in the check; student code never runs in this process.
"""

import contextlib
import dataclasses
import functools
import marshal
import re

import torch

from autograder.judge.checking import CheckFailed, describe
from autograder.judge.policy import CodeFacts, cell_label, forbidden_ops
from autograder.report import MISCONCEPTION
from autograder.judge.sandbox import StudentRaised, WorkerCrashed, WorkerTimeout, parse_reply
from autograder.sandboxed import wire, worker
from autograder.sandboxed.worker import Child, default_dtype, manual_seed
from autograder.seeds import derive_seed

# errors that mean tensors on two devices met (the student made a tensor on the wrong one)
DEVICE_MIX = re.compile(r"same device|expected device|two devices|wrong device", re.I)
GENERATOR_DEVICE = re.compile(r"device type for generator", re.I)
DEVICE_HINT = (
    "서로 다른 장치(device)의 텐서가 섞였습니다. 채점기는 입력을 GPU(cuda:0)에 둔 것처럼 "
    "실행합니다: 장치를 정하지 않고 만든 텐서(torch.arange(T), torch.ones(...))나 .cpu() / "
    ".to('cpu') 로 옮긴 텐서는 CPU에 있습니다. 새 텐서는 torch.arange(T, device=x.device)처럼 "
    "입력과 같은 장치에 만드세요."
)
GENERATOR_HINT = (
    "난수 생성기(torch.Generator)와 난수를 뽑는 텐서의 장치가 다릅니다. 채점기는 입력을 "
    "GPU(cuda:0)에 둔 것처럼 실행합니다: 생성기는 과제가 말하는 장치에 만들고 "
    "(예: torch.Generator(device=x.device)), 난수는 같은 장치에서 뽑으세요."
)
# runtime errors that name a common mistake: (pattern of the error, pattern of the student's line
# that raised it (cell_of) or None, diagnosis in Korean)
KNOWN_ERRORS = (
    (
        re.compile(r"cannot be converted to type c10::(Half|BFloat16) without overflow"),
        None,
        "float16/bfloat16 로 나타낼 수 없는 값(-1e9, float32 의 최솟값 등)으로 채웠습니다: 채울 "
        "값은 점수의 dtype 에 맞추세요 (torch.finfo(scores.dtype).min).",
    ),
    (
        re.compile(r"view size is not compatible with input tensor's size and stride"),
        None,
        "transpose 등으로 메모리 순서가 바뀐 텐서에 .view 를 썼습니다: .contiguous().view(...) "
        "또는 .reshape(...) 를 쓰세요.",
    ),
    (
        re.compile(r"cannot reshape tensor of 0 elements into shape .*-1"),
        None,
        "원소가 0개인 텐서(예: 길이 T=0)에서 -1 로 크기를 추론하게 했습니다: 0개로는 -1 을 정할 "
        "수 없으니 크기를 직접 계산해 넘기세요 (예: h * d_head).",
    ),
    (
        re.compile(
            r"expected scalar type \w+ but found \w+"
            r"|expected (m1 and m2|both .*) to have the same dtype"
        ),
        None,
        "dtype 이 다른 텐서끼리 연산했습니다 (예: float32 누산기와 float16 입력의 행렬곱): 연산 "
        "전에 한 dtype 으로 맞추고, 결과는 입력의 dtype 으로 돌려주세요.",
    ),
    (
        re.compile(r"must match the size of tensor"),
        re.compile(r"\.T(?!\w)"),
        ".T 는 모든 차원의 순서를 뒤집습니다: (B, T, d) 입력이면 (d, T, B) 가 되어 행렬곱의 "
        "모양이 맞지 않습니다. 마지막 두 차원만 바꾸려면 .transpose(-2, -1) (또는 .mT) 를 "
        "쓰세요.",
    ),
    (
        re.compile(r"must be a 3D tensor|Dimension out of range"),
        re.compile(r"\bbmm\("),
        "torch.bmm 은 3차원 (B, n, m) 텐서끼리만 곱합니다: 배치 차원이 없거나 여러 개인 입력에는 "
        "@ (torch.matmul) 를 쓰고, 전치는 .transpose(-2, -1) 로 하세요.",
    ),
    (
        re.compile(r"outer: Expected 1-D argument"),
        None,
        "torch.outer 는 1차원 벡터만 받습니다: 배치 입력 (..., n) 에서는 unsqueeze 와 "
        "브로드캐스팅으로 바깥곱을 만드세요.",
    ),
    (
        re.compile(r"unsupported operand type\(s\) for .*'NoneType'"),
        None,
        "None 인 인자로 연산했습니다: None 은 '주어지지 않음'이니 건너뛰세요.",
    ),
    (
        re.compile(r"selected index k out of range"),
        None,
        "k 가 마지막 차원의 크기보다 큽니다: torch.topk 에 넘기기 전에 k 를 그 크기 이하로 "
        "줄이세요 (과제가 k 가 크면 어떻게 하라고 하는지 확인하세요).",
    ),
)
# the worker's blocked operators raise this (worker.block_operators)
FORBIDDEN_OP = re.compile(r"forbidden operator (aten::[\w.]+)")


class StudentCrashed(CheckFailed):
    """The student's worker died (crash, exit, memory or CPU limit)."""


class StudentTimeout(CheckFailed):
    """The student's worker ran past its wall-clock limit."""


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


@dataclasses.dataclass(frozen=True)
class Spec:
    """What the notebook says of every call a check makes (``@pytest.mark.spec(...)``), which
    the simulated GPU lets the judge see on a CPU grader.

    ``draws_on``: where random draws are made: "cpu" (a CPU generator whatever the inputs'
    device), "input" (the inputs' device) or None (no rule); with a rule, never on the global
    generator (checked on every call, as in :meth:`Student.fresh`). ``builds_on_device``: new
    tensors are made on the device argument directly, never on the CPU and moved.
    ``returns_new``: the result is a new tensor, never an input or a view of one."""

    draws_on: str | None = None
    builds_on_device: bool = False
    returns_new: bool = False


class Student:
    """Proxy to the student's code for one check on one device.

    ``call`` and ``module`` run the student's function or module on the check's device; on a
    CPU grader the child simulates a GPU (see worker.SimulatedDevice): the inputs say they are
    on ``cuda:0``, and a tensor made without a device is a CPU tensor that refuses to mix with
    them. Inputs that the student's code changes in place fail the check.
    """

    def __init__(self, session, device, seed, named=None, spec=Spec()):
        self._session = session
        self.spec = spec
        self._named_forbidden = named or str  # () -> "`torch.softmax` (`f` 셀, 3행): " or ""
        self.suspicions = []  # runtime signs of tampering, for Report.problems
        self._rng_check = False  # fresh(): the calls may not draw from the global generator
        self._default_dtype = None  # see default_dtype()
        self.device = torch.device(device)
        self._seed = seed
        self.load_errors = []
        self.used = []  # names of the student's code this check called

    def _request(self, op, **values):
        header = {"op": op, "device": self.device.type, "seed": self._seed}
        if self._rng_check or self.spec.draws_on is not None:
            header["rng_check"] = True
        if self._default_dtype is not None:
            header["default_dtype"] = str(self._default_dtype).removeprefix("torch.")
        try:
            _, out = self._session.request(header, values)
        except WorkerTimeout as e:
            raise StudentTimeout(str(e) + self._load_hint()) from None
        except WorkerCrashed as e:
            raise StudentCrashed(str(e) + self._load_hint()) from None
        return out

    def on(self, device):
        """This check's student on ``device``, in a child of its own (one device per child):
        for a check that compares the results of two devices."""
        link = self._session
        other = Student(
            Link(link.grading, torch.device(device), link.forbid, link.given),
            device,
            self._seed,
            self._named_forbidden,
            self.spec,
        )
        other.load_errors, other.suspicions, other.used = (
            self.load_errors,
            self.suspicions,
            self.used,
        )
        return other

    def has(self, name):
        """True when the student's code defines ``name``."""
        return self._request("has", name=str(name)).get("value") is True

    def call(self, name, *args, **kwargs):
        """Call the student's ``name(*args, **kwargs)``; returns tensors/scalars/tuples."""
        self.used.append(name)
        what = call_text(name, args, kwargs)
        values = dict(name=str(name), args=list(args), kwargs=kwargs)
        out = self._run("call", what, **values)
        if "value" not in out:
            raise CheckFailed(f"{what}: 결과가 없습니다")
        self._check_inputs(out, what, values)
        self._check_device(out, what, _carries_device([args, kwargs]))
        if self.spec.returns_new and out.get("aliases"):
            raise CheckFailed(
                f"{what}: 입력 텐서 자체(또는 입력과 메모리를 함께 쓰는 view)를 돌려주었습니다. "
                "과제는 새 텐서를 돌려주라고 합니다: 그대로 둘 것이 없어도 logits.clone() 처럼 "
                "새 텐서를 만드세요. 그렇지 않으면 결과를 고칠 때 입력도 함께 바뀝니다."
            )
        if out.get("global_rng_used"):
            raise CheckFailed(
                f"{what}: 전역 난수 생성기(torch.manual_seed, torch.rand 등 generator 없이 부르는 "
                "함수)를 썼습니다. 주어진 seed 로 만든 torch.Generator 만 쓰세요: 전역 난수를 "
                "쓰면 다른 코드의 난수가 바뀌고, GPU 에서는 생성기와 텐서의 장치가 어긋납니다."
            )
        return out["value"]

    @contextlib.contextmanager
    def default_dtype(self, dtype):
        """Inside the block, the student's code runs under torch.set_default_dtype(dtype)
        (float32 or float64), as if the notebook had set it, and so does the judge's own code
        in the block (the reference called there, tensors made there without a dtype)."""
        with default_dtype(str(dtype).removeprefix("torch.")):
            self._default_dtype = dtype
            try:
                yield
            finally:
                self._default_dtype = None

    @contextlib.contextmanager
    def fresh(self):
        """The calls made in the block run in one new process with the cells loaded anew (see
        Link.fresh), and may not draw from the global generator: for checks of seeded
        randomness, where remembering earlier calls must not help. The block's calls must
        differ from each other (a seed each), or a memo of the first would serve the next."""
        with self._session.fresh():
            self._rng_check = True
            try:
                yield self
            finally:
                self._rng_check = False

    def call_fresh(self, name, *args, **kwargs):
        """:meth:`call` in a process of its own (see :meth:`fresh`)."""
        with self.fresh():
            return self.call(name, *args, **kwargs)

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
        step_lr=None,
    ):
        """Build ``name(**init_kwargs)`` under manual_seed(seed), load state_dict, set train(),
        then (under manual_seed(forward_seed) when given) run ``method(*inputs)`` (``method=None``:
        none, for the module's state alone; "output" is then None).

        Returns {"output", "state" (state_dict after init, before loading), "grads"
        ({param name or "input<i>": grad}, only when grad=True)}. The backward objective is
        ``sum(o.float().sum())`` over tensor outputs, or ``sum((o * g).sum())`` with grad_outputs.
        ``step_lr`` (with grad=True): then one SGD step ``p -= step_lr * p.grad`` over every
        parameter and the method again on the same inputs -> "after_step" (shared weights show
        there, whatever names the module reports).
        """
        self.used.append(name)
        kwargs = dict(init_kwargs or {})
        what = call_text(name, (), kwargs)
        if method is not None:
            what += "." + call_text(method, inputs, input_kwargs or {})
        values = dict(
            name=str(name),
            init_kwargs=kwargs,
            state_dict=state_dict,
            inputs=list(inputs),
            input_kwargs=dict(input_kwargs or {}),
            train=bool(train),
            seed=int(seed),
            grad=bool(grad),
            method=None if method is None else str(method),
            grad_outputs=grad_outputs,
            forward_seed=forward_seed,
            step_lr=step_lr,
        )
        out = self._run("module", what, **values)
        if not isinstance(out.get("state"), dict) or "output" not in out:
            raise CheckFailed(f"{what}: 결과 형식이 올바르지 않습니다")
        if grad and not isinstance(out.get("grads"), dict):
            raise CheckFailed(f"{what}: 기울기(gradient)가 없습니다")
        if grad and step_lr is not None and "after_step" not in out:
            raise CheckFailed(f"{what}: 학습 한 단계 뒤의 출력이 없습니다")
        self._check_inputs(out, what, values)
        self._check_device(out, what, True)
        return out

    def _run(self, op, what, **values):
        try:
            return self._request(op, **values)
        except StudentRaised as e:
            op = FORBIDDEN_OP.search(str(e))
            if op:
                named = self._named_forbidden()
                raise CheckFailed(
                    f"{what}: {named}이 과제에서 쓸 수 없는 기성 연산({op.group(1)})을 "
                    f"실행했습니다{'' if named else cell_of(str(e))}. 어떤 이름으로 불렀든 같은 "
                    "연산이면 쓸 수 없습니다. 직접 구현하세요."
                ) from None
            hint = ""
            if DEVICE_MIX.search(str(e)):
                hint = "\n" + DEVICE_HINT
            elif GENERATOR_DEVICE.search(str(e)):
                hint = "\n" + GENERATOR_HINT
            line = line_of(str(e))
            known = next(
                (
                    d
                    for error, where, d in KNOWN_ERRORS
                    if error.search(str(e)) and (where is None or where.search(line))
                ),
                None,
            )
            named = f"{what}: {MISCONCEPTION} {known}\n" if known else ""
            raise CheckFailed(f"{named}{what} 실행 중 오류: {e}{hint}{self._load_hint()}") from None

    def _check_inputs(self, out, what, values):
        """Fail when the call changed an input in place: seen by the judge in the shared
        input memory (``changed``, see sandbox.Session.request), or reported by the worker
        (``mutated``: a hint, e.g. for inputs copied to a GPU; ``relaid``: a dict or list
        argument whose items changed; hints can only cost the student)."""
        paths = wire.tensor_paths(values)
        changed = [
            input_label(paths[int(k[1:])])
            for k in out.get("changed") or []
            if str(k)[1:].isdigit() and int(k[1:]) < len(paths)
        ]
        changed += [str(c) for c in out.get("mutated") or [] if str(c) not in changed]
        relaid = [str(c)[:40] for c in out.get("relaid") or []]
        if relaid:
            raise CheckFailed(
                f"{what}: 입력({', '.join(relaid[:4])})의 항목을 제자리에서 바꾸었습니다 (키나 "
                "항목을 지우거나 더하거나 다른 값으로 바꿈). 입력 딕셔너리와 리스트는 읽기만 하고, "
                "결과는 새로 만드세요 (예: dict(state), {k: v for k, v in state.items()})."
            )
        if changed:
            labels = ", ".join(str(c)[:40] for c in list(changed)[:4])
            raise CheckFailed(
                f"{what}: 입력 텐서({labels})의 값을 제자리에서(in-place) 바꾸었습니다. "
                "입력은 읽기만 하고 결과는 새 텐서로 만드세요 (예: x.sub_(m), x[...] = ... 대신 "
                "x - m, torch.where(...))"
            )

    def _check_device(self, out, what, carries):
        """What the simulated GPU saw (see worker.SimulatedDevice): a device error the
        student's code swallowed, or a result left on the CPU although the inputs (or the
        device argument) were on the GPU."""
        if out.get("caught"):
            self.suspicions.append(f"장치 오류를 삼킨 코드: {what[:80]}")
            raise CheckFailed(
                f"{what}: 입력이 GPU(cuda:0)에 있을 때 텐서 연산이 장치 오류를 냈는데"
                f"(`{str(out['caught'])[:60]}`) 코드가 그 오류를 삼키고 다른 길로 갔습니다. "
                "새 텐서는 입력과 같은 장치에 만들고(device=x.device), 오류를 try/except 로 "
                "숨기지 마세요."
            )
        drawn = set(out.get("generators") or [])
        want = "cpu" if self.spec.draws_on == "cpu" else "cuda"  # the simulated GPU is cuda:0
        if self.spec.draws_on is not None and drawn - {want}:
            where = "CPU 생성기(torch.Generator())"
            if want != "cpu":
                where = "입력과 같은 장치의 생성기"
            raise CheckFailed(
                f"{what}: 난수를 {where}로 뽑아야 하는데 다른 장치의 생성기로 뽑았습니다. "
                "GPU에서는 CPU와 다른 난수가 나오므로, 채점하는 컴퓨터에 따라 결과가 달라집니다."
            )
        if self.spec.builds_on_device and out.get("moved"):
            raise CheckFailed(
                f"{what}: 텐서를 CPU에 만든 뒤 .to(device)로 옮겼습니다. 과제는 device 인자에 "
                "바로 만들라고 합니다 (예: torch.ones(T, S, dtype=torch.bool, device=device)): "
                "옮기면 GPU에서 부를 때마다 CPU에서 만들고 복사하는 일이 생깁니다."
            )
        if out.get("host") and carries:
            raise CheckFailed(
                f"{what}: 입력이 GPU(cuda:0)에 있을 때 결과(의 일부)가 CPU에 만들어집니다. "
                "새 텐서는 입력(또는 device 인자)과 같은 장치에 만드세요 "
                "(예: torch.eye(n, device=x.device)); .cpu() / .to('cpu') 로 옮기지 마세요."
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
    (worker.cell_code): its marshalled code object as a uint8 tensor, data on the wire; None
    for a cell that does not compile (the child compiles it and reports the error)."""
    try:
        code = compile(source, worker.cell_name(index), "exec", dont_inherit=True)
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

    def student(self, function, device, forbid=(), spec=Spec(), given=None):
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
        student = Student(link, device, seed, self._named(forbid), spec)
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
        values["code"] = self.code
        values["given"] = sorted(given or ())
        try:
            _, out = session.request(header, values)
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


def answer_given(given, head, blob):
    """The judge's answer (a frame) to a child's question about a given helper (see
    worker.Child.given): ``given[name](*args, **kwargs)`` computed here, or, when the question
    carries the outputs' ``grads``, the gradients of the call's tensors (args, then kwargs, then
    a given module's state), None for those without. A given module (``given[name]`` is a
    module class) is asked ``init`` (its state when built with these arguments) and its
    forward, with the module's state, mode and random state (see module_call). Any error is an
    answer too: the child then runs its own helper (or its call fails)."""
    try:
        header, values = wire.decode(head, blob)
        fn = given[header["given"]]
        if "init" in values:
            return wire.encode({"ok": True}, {"value": built_state(fn, values["init"])})
        module = values.get("module")
        place = (
            torch.device("cuda", 0)
            if module and module["device"] == "cuda"
            else torch.device("cpu")
        )
        args, kwargs = list(values.get("args") or []), dict(values.get("kwargs") or {})
        # computed here on the CPU, whatever device the child's tensors are on (a module's
        # dropout on the device whose random state it continues)
        args = [place if isinstance(a, torch.device) else to(a, place) for a in args]
        kwargs = {
            k: place if isinstance(v, torch.device) else to(v, place) for k, v in kwargs.items()
        }
        state = {k: v.to(place) for k, v in (module or {}).get("state", {}).items()}
        grads = values.get("grads")
        if grads is None:
            with torch.no_grad():
                if module is None:
                    return wire.encode({"ok": True}, {"value": fn(*args, **kwargs)})
                return wire.encode(
                    {"ok": True}, {"value": module_call(fn, module, state, args, kwargs)}
                )
        leaves = []

        def leaf(v):
            if isinstance(v, torch.Tensor):
                v = v.detach().requires_grad_(v.is_floating_point())
                leaves.append(v)
            return v

        args, kwargs = [leaf(a) for a in args], {k: leaf(v) for k, v in kwargs.items()}
        state = {k: leaf(v) for k, v in state.items()}
        with torch.enable_grad():
            if module is None:
                out = fn(*args, **kwargs)
            else:
                out, _ = module_call(fn, module, state, args, kwargs)
        outs = list(out) if isinstance(out, tuple | list) else [out]
        pairs = [(o, g.to(place)) for o, g in zip(outs, grads, strict=True) if g is not None]
        wanted = [t for t in leaves if t.requires_grad]
        got = torch.autograd.grad(
            [o for o, _ in pairs], wanted, [g for _, g in pairs], allow_unused=True
        )
        found = dict(zip(map(id, wanted), got, strict=True))
        return wire.encode({"ok": True}, {"value": [found.get(id(t)) for t in leaves]})
    except Exception as e:
        return wire.encode({"ok": False, "error": f"{type(e).__name__}: {str(e)[:200]}"})


def to(value, device):
    return value.to(device) if isinstance(value, torch.Tensor) else value


GIVEN_MODULE_ELEMENTS = 1 << 24  # the largest reference module the judge builds for a child


def reference_module(cls, init):
    """``cls(*args, **kwargs)`` as ``init`` (sent by the child) says, under a fixed seed (same
    arguments, same initial values). Built on the meta device first: arguments that would make
    the judge allocate more than GIVEN_MODULE_ELEMENTS values are refused."""
    args, kwargs = init.get("args", []), init.get("kwargs", {})
    with torch.device("meta"):
        size = sum(t.numel() for t in cls(*args, **kwargs).state_dict().values())
    if size > GIVEN_MODULE_ELEMENTS:
        raise ValueError(f"module of {size} values (at most {GIVEN_MODULE_ELEMENTS})")
    with torch.random.fork_rng(devices=[]):
        manual_seed(0)  # the CPU generator, where the module is built
        return cls(*args, **kwargs)


def built_state(cls, init):
    """{"state": state_dict, "parameters": names} of the reference module built as ``init``
    says."""
    m = reference_module(cls, init)
    state = {k: v.detach() for k, v in m.state_dict().items()}
    return {"state": state, "parameters": [k for k, _ in m.named_parameters()]}


def module_call(cls, module, state, args, kwargs):
    """(output, random state after) of the reference module built as ``module["init"]`` says,
    run with the child's ``state`` tensors (torch.func.functional_call: gradients reach them)
    in its train/eval mode, from the child's random state of the call's device."""
    m = reference_module(cls, module["init"])
    m.train(bool(module["training"]))
    place = torch.device("cuda", 0) if module["device"] == "cuda" else torch.device("cpu")
    devices = [place] if place.type == "cuda" else []
    with torch.random.fork_rng(devices=devices):
        rng = module["rng"]
        if place.type == "cuda":
            torch.cuda.set_rng_state(rng, place)
        else:
            torch.set_rng_state(rng)
        out = torch.func.functional_call(m, state, tuple(args), kwargs)
        after = torch.cuda.get_rng_state(place) if place.type == "cuda" else torch.get_rng_state()
    return out, after


def input_label(path):
    """Label of an input tensor at ``path`` of a request's values, as the worker names it:
    '인자 0', '인자 1[2]', 'mask', 'state_dict[w]'."""
    head, rest = path[0], list(path[1:])
    if head in ("args", "inputs") and rest:
        label, rest = f"인자 {rest[0]}", rest[1:]
    elif head in ("kwargs", "input_kwargs", "init_kwargs") and rest:
        label, rest = str(rest[0]), rest[1:]
    else:
        label = str(head)
    return label + "".join(f"[{r}]" for r in rest)


# the ' (`f` 셀, 5행: `...`)' part the worker appends to an error (worker.cell_location)
CELL_OF = re.compile(r" \((?:[^`()]|`[^`]*`)* 셀, \d+행: `(.*)`\)$", re.S)


def cell_of(error):
    """The ' (`f` 셀, 5행: `...`)' part the worker appends to an error, else ''."""
    m = CELL_OF.search(error)
    return m.group(0) if m else ""


def line_of(error):
    """The student's line quoted in cell_of(error), else ''."""
    m = CELL_OF.search(error)
    return m.group(1) if m else ""


def tamper_message(hit):
    text, cell, line = hit
    return (
        f"`{text}` ({cell}, {line}행): 채점기나 파이썬 인터프리터, torch 자체를 들여다보거나 "
        "바꾸는 코드입니다. 이런 코드가 실행된 검사는 점수를 받을 수 없고, 강사에게 보고됩니다. "
        "과제에 필요한 계산만 작성하세요."
    )


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
