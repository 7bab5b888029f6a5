"""The Student proxy: the one way a hidden check reaches the student's code, for one check on one
device. It sends plain data to a child, reads the reply as a protocol.ChildReply (results and
hints) plus the judge's own evidence, and turns what they show into CheckFailed messages.
Trusted judge only.
"""

import contextlib
import dataclasses

import torch

from autograder.judge.checking import CheckFailed, describe
from autograder.judge.diagnosis import (
    DEVICE_HINT,
    DEVICE_MIX,
    FORBIDDEN_OP,
    GENERATOR_DEVICE,
    GENERATOR_HINT,
    KNOWN_ERRORS,
    StudentCrashed,
    StudentTimeout,
    cell_of,
    error_meaning,
    input_label,
    line_of,
)
from autograder.judge.sandbox import StudentRaised, WorkerCrashed, WorkerTimeout
from autograder.report import MISCONCEPTION
from autograder.sandboxed import wire
from autograder.sandboxed.tensors import default_dtype


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
    CPU grader the child simulates a GPU (see sandboxed/simulated_gpu.py): the inputs say they are
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
            reply = self._session.request(header, values)
        except WorkerTimeout as e:
            raise StudentTimeout(str(e) + self._load_hint()) from None
        except WorkerCrashed as e:
            raise StudentCrashed(str(e) + self._load_hint()) from None
        return reply

    def on(self, device):
        """This check's student on ``device``, in a child of its own (one device per child):
        for a check that compares the results of two devices."""
        link = self._session
        other = Student(
            link.on(device),
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
        return self._request("has", name=str(name)).values.get("value") is True

    def call(self, name, *args, **kwargs):
        """Call the student's ``name(*args, **kwargs)``; returns tensors/scalars/tuples."""
        self.used.append(name)
        what = call_text(name, args, kwargs)
        values = dict(name=str(name), args=list(args), kwargs=kwargs)
        reply = self._run("call", what, **values)
        out = reply.values
        if "value" not in out:
            raise CheckFailed(f"{what}: 결과가 없습니다")
        self._check_inputs(reply, what, values)
        self._check_device(reply, what, _carries_device([args, kwargs]))
        if self.spec.returns_new and reply.hint("aliases"):
            raise CheckFailed(
                f"{what}: 입력 텐서 자체(또는 입력과 메모리를 함께 쓰는 view)를 돌려주었습니다. "
                "과제는 새 텐서를 돌려주라고 합니다: 그대로 둘 것이 없어도 logits.clone() 처럼 "
                "새 텐서를 만드세요. 그렇지 않으면 결과를 고칠 때 입력도 함께 바뀝니다."
            )
        if reply.hint("global_rng_used"):
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
        reply = self._run("module", what, **values)
        out = reply.values
        if not isinstance(out.get("state"), dict) or "output" not in out:
            raise CheckFailed(f"{what}: 결과 형식이 올바르지 않습니다")
        if grad and not isinstance(out.get("grads"), dict):
            raise CheckFailed(f"{what}: 기울기(gradient)가 없습니다")
        if grad and step_lr is not None and "after_step" not in out:
            raise CheckFailed(f"{what}: 학습 한 단계 뒤의 출력이 없습니다")
        self._check_inputs(reply, what, values)
        self._check_device(reply, what, True)
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
            meaning = f"{MISCONCEPTION} {known}" if known else error_meaning(str(e))
            named = f"{what}: {meaning}\n"
            raise CheckFailed(f"{named}{what} 실행 중 오류: {e}{hint}{self._load_hint()}") from None

    def _check_inputs(self, reply, what, values):
        """Fail when the call changed an input in place: seen by the judge in the shared
        input memory (``reply.evidence.changed``, see sandbox.Session.request), or reported by
        the child (hints, which can only cost the student: ``mutated``, e.g. for inputs copied
        to a GPU; ``relaid``, a dict or list argument whose items changed)."""
        paths = wire.tensor_paths(values)
        changed = [
            input_label(paths[int(k[1:])])
            for k in reply.evidence.changed
            if str(k)[1:].isdigit() and int(k[1:]) < len(paths)
        ]
        changed += [str(c) for c in reply.hint("mutated") or [] if str(c) not in changed]
        relaid = [str(c)[:40] for c in reply.values.get("relaid") or []]
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

    def _check_device(self, reply, what, carries):
        """What the simulated GPU saw (see sandboxed/simulated_gpu.py): a device error the
        student's code swallowed, or a result left on the CPU although the inputs (or the
        device argument) were on the GPU."""
        out = reply.values  # hints of the simulated device only: each can cost, none can earn
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
