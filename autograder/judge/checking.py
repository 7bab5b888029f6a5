"""What hidden-check authors import: comparisons, inputs, shared seeds (trusted judge only).

A check module (``autograder/checks/<assignment>.py``) is a pytest module whose test functions
are named after the notebook's test cells and take the fixtures ``student``, ``rng`` and
``device`` (see autograder/judge/plugin.py). Everything else it needs is here:

- :func:`assert_close`, :func:`expect_tensor`, :func:`expect_device`, :func:`fail`: validate a
  student's result (type, dtype, shape, device, finiteness, values) and raise
  :class:`CheckFailed` with a Korean message and a small counterexample for the feedback.
- :func:`randn`, :func:`extreme`: inputs drawn from the check's ``rng``.
- :func:`seeded`: run reference code under the same torch seed the student's code gets.

Every value that comes back from the worker is a plain ``torch.Tensor`` built by safetensors or
a plain scalar (see wire.py); nothing here calls student code.
"""

import contextlib
import math
import re
import threading

import torch

from autograder.report import MISCONCEPTION
from autograder.sandboxed.tensors import manual_seed
from autograder.sandboxed.wire import dim_order

MAX_SHOW = 6  # elements shown per tensor in a summary
PASTE_CHARS = 2500  # a counterexample's inputs are printed as Python up to this many characters
# (rtol, atol) for half-precision results compared with a float32/64 reference
HALF_TOL = {torch.float16: (2e-3, 2e-3), torch.bfloat16: (1.6e-2, 8e-3)}


class CheckFailed(AssertionError):
    """A check did not pass; ``str(exc)`` is the feedback shown to the student."""


def _fmt_tensor(t, limit=MAX_SHOW):
    t = t.detach().cpu()
    flat = t.reshape(-1)
    if t.is_floating_point():
        items = [f"{v:.4g}" for v in flat[:limit].tolist()]
    else:
        items = [str(v) for v in flat[:limit].tolist()]
    more = ", ..." if flat.numel() > limit else ""
    dtype = str(t.dtype).replace("torch.", "")
    return f"tensor(shape={tuple(t.shape)}, dtype={dtype}, [{', '.join(items)}{more}])"


def neighbourhood(got, expected, idx, radius=3):
    """Both tensors around position ``idx`` along the last dimension (the first difference)."""
    if not idx:
        return f"  결과: {describe(got)}\n  기대: {describe(expected)}"
    lo = max(0, idx[-1] - radius)
    hi = idx[-1] + radius + 1
    lead = tuple(idx[:-1])
    where = "".join(f"{i}, " for i in lead) + f"{lo}:{min(hi, got.shape[-1])}"

    def row(t):
        vals = t[lead][lo:hi].tolist()
        return "[" + ", ".join(f"{v:.4g}" if isinstance(v, float) else str(v) for v in vals) + "]"

    return f"  결과[{where}]: {row(got)}\n  기대[{where}]: {row(expected)}"


def describe(value):
    """Short, safe text for a value (never calls student-defined methods: values are plain)."""
    if isinstance(value, torch.Tensor):
        return _fmt_tensor(value)
    if isinstance(value, list | tuple):
        opening, closing = "[]" if isinstance(value, list) else "()"
        inner = ", ".join(describe(v) for v in list(value)[:4])
        return opening + inner + (", ..." if len(value) > 4 else "") + closing
    if isinstance(value, float):
        return _number(value, torch.float64)  # all its digits: two floats shown differ
    if isinstance(value, torch.device | torch.dtype):
        return repr(str(value).removeprefix("torch."))
    text = repr(value) if isinstance(value, int | bool | str | type(None)) else type(value).__name__
    return text if len(text) < 200 else text[:200] + "..."


def _number(v, dtype):
    """The shortest Python source for one element that gives back the same value in ``dtype``:
    0.7, not 0.69999999999999996 (float64) or 0.699999988 (float32)."""
    if isinstance(v, bool) or not isinstance(v, float):
        return str(v)
    if math.isnan(v):
        return 'float("nan")'
    if math.isinf(v):
        return 'float("inf")' if v > 0 else 'float("-inf")'
    if dtype not in HALF_TOL and dtype != torch.float32:
        return repr(v)  # float64: Python's repr is the shortest that round-trips
    for digits in range(1, 10):
        text = f"{v:.{digits}g}"
        if torch.tensor(float(text), dtype=dtype).item() == v:
            plain = repr(float(text))  # 10.0, not 1e+01
            return plain if "e" in text and "e" not in plain else text
    return repr(v)


def source(value):
    """Python source that rebuilds ``value`` exactly (a tensor as torch.tensor([...], dtype=...),
    a transposed view as the permuted values with .permute(...) after them, the layout the
    student's code received), so that the student can paste a counterexample and run it."""
    if isinstance(value, torch.Tensor):
        order = dim_order(value)
        if order != list(range(value.dim())):
            back = [order.index(i) for i in range(value.dim())]
            return f"{source(value.permute(order).contiguous())}.permute{tuple(back)}"
        t = value.detach().cpu()
        dtype = str(t.dtype).removeprefix("torch.")
        if 0 in t.shape:
            return f"torch.empty({tuple(t.shape)}, dtype=torch.{dtype})"

        def nested(v):
            if isinstance(v, list):
                return "[" + ", ".join(nested(x) for x in v) + "]"
            return _number(v, t.dtype)

        return f"torch.tensor({nested(t.tolist())}, dtype=torch.{dtype})"
    if isinstance(value, list | tuple):
        inner = ", ".join(source(v) for v in value)
        return (
            f"[{inner}]"
            if isinstance(value, list)
            else f"({inner}{',' if len(value) == 1 else ''})"
        )
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k!r}: {source(v)}" for k, v in value.items()) + "}"
    if isinstance(value, float):
        return _number(value, torch.float64)
    if isinstance(value, torch.dtype):
        return str(value)
    if isinstance(value, torch.device):
        return repr(value.type)
    return repr(value) if isinstance(value, int | bool | str | type(None)) else type(value).__name__


# a module's check (the message names a class: ModernBlock(...), [case] LayerNorm(...)): its
# inputs paste, but the weights the grader loaded into the module are not among them
MODULE_CASE = re.compile(r"(?:\[[^\]]*\] )?[A-Z]\w*(?:\(| \[)")


def _inputs_text(inputs, message=""):
    """The inputs as Python the student can paste (``x = torch.tensor(...)``), within
    PASTE_CHARS; past that, a short summary of each (shape, dtype, first values). For a
    module's check (``message`` names a class) the paste gives the inputs, not the weights."""
    if not inputs:
        return ""
    names = [k for k in inputs if str(k).isidentifier()]
    small = (
        sum(v.numel() for v in inputs.values() if isinstance(v, torch.Tensor)) <= PASTE_CHARS // 2
    )
    code = [f"  {k} = {source(inputs[k])}" for k in names] if small else []
    if small and len(names) == len(inputs) and sum(len(c) for c in code) <= PASTE_CHARS:
        if MODULE_CASE.match(message):
            claim = (
                "입력 (붙여 넣으면 같은 입력이 만들어집니다. 모듈의 가중치는 채점기가 정한 값이라 "
            )
            claim += "여기에 없으므로, 여러분의 모듈로는 다른 값이 나옵니다):\n"
            return "\n" + claim + "\n".join(code)
        return "\n입력 (그대로 붙여 넣어 실행할 수 있습니다):\n" + "\n".join(code)
    parts = [f"  {k} = {describe(v)}" for k, v in inputs.items()]
    return "\n입력 (요약: 모양, dtype, 앞쪽 값):\n" + "\n".join(parts)


def fail(message, inputs=None):
    raise CheckFailed(message + _inputs_text(inputs, message))


def expect_tensor(got, what="result", shape=None, dtype=None, finite=True, inputs=None):
    """Validate that ``got`` is a plain tensor with the given shape/dtype and finite values."""
    if type(got) is not torch.Tensor:
        fail(
            f"{what}: 텐서(Tensor)를 반환해야 하는데 {type(got).__name__}을(를) 반환했습니다",
            inputs,
        )
    if dtype is not None and got.dtype != dtype:
        fail(f"{what}: dtype이 {dtype}이어야 하는데 {got.dtype}입니다", inputs)
    if shape is not None and tuple(got.shape) != tuple(shape):
        fail(f"{what}: shape이 {tuple(shape)}이어야 하는데 {tuple(got.shape)}입니다", inputs)
    if finite and got.is_floating_point() and not torch.isfinite(got).all():
        bad = (~torch.isfinite(got)).nonzero()[0].tolist()
        fail(f"{what}: NaN/inf가 있습니다 (예: 위치 {bad}) -> {describe(got)}", inputs)
    return got


def expect_device(got, device, what="result", inputs=None):
    """The result must live on the device of the inputs (cpu, or cuda when graded on a GPU)."""
    want = torch.device(device).type
    if isinstance(got, torch.Tensor) and got.device.type != want:
        fail(
            f"{what}: 결과가 입력과 다른 장치(device) {got.device.type}에 있습니다 "
            f"(기대: {want}). 텐서를 처음부터 그 장치에 만드세요",
            inputs,
        )


def raised(student, error, name, *args, **kwargs):
    """True when the student's call ``name(*args, **kwargs)`` raised ``error`` (e.g.
    'ValueError'), as the notebook asks for bad arguments."""
    try:
        student.call(name, *args, **kwargs)
    except CheckFailed as e:
        return f"{error}:" in str(e)
    return False


def assert_close(
    got,
    expected,
    what="result",
    inputs=None,
    rtol=None,
    atol=None,
    check_dtype=True,
    misconceptions=None,
):
    """Raise CheckFailed unless ``got`` matches ``expected`` (tensor, scalar or nested tuple/list).

    Tensors: exact type ``torch.Tensor``, same shape, same dtype (unless check_dtype=False),
    non-finite entries only where the reference has the same ones, then
    ``|got - expected| <= atol + rtol * |expected|`` (defaults from the dtype as in
    torch.testing.assert_close). The message names the first mismatching position.

    ``misconceptions``: the check's catalogue of known mistakes for these inputs, {Korean
    diagnosis: () -> the value that mistake gives (None where these inputs cannot show it)},
    computed here in the judge. When ``got`` is wrong and matches one of them, the message
    starts with its diagnosis (see :func:`diagnose`); the counterexample follows.
    """
    try:
        _assert_close(got, expected, what, inputs, rtol, atol, check_dtype)
    except CheckFailed as e:
        diagnosis = diagnose(got, expected, misconceptions, rtol, atol)
        if diagnosis is None:
            raise
        raise CheckFailed(f"{what}: {MISCONCEPTION} {diagnosis}\n{e}") from None


def diagnose(got, expected, misconceptions, rtol=None, atol=None):
    """The first diagnosis of ``misconceptions`` (see :func:`assert_close`) whose value ``got``
    matches (dtype aside) while that value differs from ``expected``: a mistake these inputs
    cannot tell from the right answer is never named (e.g. for a result wrong only in dtype).
    Both comparisons are made at the result's precision: a mistake whose value rounds to the
    right answer there is not what made this result wrong."""
    dtype = got.dtype if isinstance(got, torch.Tensor) else None
    for diagnosis, value in (misconceptions or {}).items():
        try:
            wrong = value()
            if wrong is None or _close(wrong, expected, rtol, atol, dtype):
                continue
            if _close(got, wrong, rtol, atol, dtype):
                return diagnosis
        except Exception:  # noqa: BLE001 (not this misconception, whatever the reason)
            continue
    return None


def _close(a, b, rtol, atol, dtype=None):
    """``a`` matches ``b`` as assert_close would judge it, dtype aside: two tensors are both
    compared in ``dtype`` (default: ``b``'s)."""
    if isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor):
        a, b = a.to(dtype or b.dtype), b.to(dtype or b.dtype)
    try:
        _assert_close(a, b, "", None, rtol, atol, False)
    except CheckFailed:
        return False
    return True


def _assert_close(got, expected, what, inputs, rtol, atol, check_dtype):
    if isinstance(expected, list | tuple):
        if not isinstance(got, list | tuple) or len(got) != len(expected):
            n = len(got) if isinstance(got, list | tuple) else type(got).__name__
            fail(f"{what}: 길이 {len(expected)}의 tuple/list가 필요한데 {n}입니다", inputs)
        for i, (g, e) in enumerate(zip(got, expected, strict=True)):
            _assert_close(g, e, f"{what}[{i}]", inputs, rtol, atol, check_dtype)
        return
    if isinstance(expected, bool | int) and not isinstance(expected, torch.Tensor):
        if type(got) is not type(expected) or got != expected:
            fail(f"{what}: {describe(expected)}이어야 하는데 {describe(got)}입니다", inputs)
        return
    if isinstance(expected, float):
        if type(got) not in (float, int) or not math.isclose(
            float(got), expected, rel_tol=rtol or 1e-6, abs_tol=atol or 1e-8
        ):
            fail(f"{what}: {describe(expected)}이어야 하는데 {describe(got)}입니다", inputs)
        return
    if not isinstance(expected, torch.Tensor):
        raise TypeError(f"assert_close: unsupported reference type {type(expected).__name__}")
    expected_device = expected.device
    expected = expected.detach().cpu()
    expect_tensor(
        got, what, tuple(expected.shape), expected.dtype if check_dtype else None, False, inputs
    )
    if got.device.type != expected_device.type:
        expect_device(got, expected_device, what, inputs)
    got = got.detach().cpu()
    if not expected.is_floating_point() and not got.is_floating_point():
        diff = got != expected
        if diff.any():
            idx = diff.nonzero()[0].tolist()
            fail(
                f"{what}: {diff.numel()}개 중 {int(diff.sum())}개 값이 다릅니다. 위치 {idx}에서 "
                f"{expected[tuple(idx)].item()}이어야 하는데 {got[tuple(idx)].item()}입니다\n"
                + neighbourhood(got, expected, idx),
                inputs,
            )
        return
    g, e = got.double(), expected.double()
    if rtol is None or atol is None:
        # float64 results are held to float64 accuracy: computing them in float32 inside
        # (errors ~1e-7) is a mistake the spec's "same dtype" rules out
        default = {
            torch.float16: (1e-3, 1e-5),
            torch.bfloat16: (1.6e-2, 1e-5),
            torch.float64: (1e-9, 1e-10),
        }
        r, a = default.get(expected.dtype, (1.3e-6, 1e-5))
        rtol = r if rtol is None else rtol
        atol = a if atol is None else atol
    fin_e, fin_g = torch.isfinite(e), torch.isfinite(g)
    same_special = (~fin_e & ~fin_g) & ((e == g) | (e.isnan() & g.isnan()))
    ok = (fin_e & fin_g & ((g - e).abs() <= atol + rtol * e.abs())) | same_special
    if not ok.all():
        idx = (~ok).nonzero()[0].tolist()
        at = tuple(idx)
        n_bad = int((~ok).sum())
        fail(
            f"{what}: {ok.numel()}개 중 {n_bad}개 값이 다릅니다. 위치 {idx}: 기대값 "
            f"{e[at].item():.6g}, 결과 {g[at].item():.6g}\n" + neighbourhood(got, expected, idx),
            inputs,
        )


# ----------------------------------------------------------------------------- inputs


def randn(rng, *shape, scale=1.0, shift=0.0, dtype=torch.float32, device="cpu"):
    """``shift + scale * N(0, 1)`` of ``shape`` drawn (in float64) from the check's generator."""
    x = torch.randn(*shape, generator=rng, dtype=torch.float64) * scale + shift
    return x.to(device, dtype)


def extreme(dtype, fraction=0.5):
    """A magnitude near the end of ``dtype``'s range (``fraction`` of its largest finite value):
    inputs shifted or scaled by it catch fragile constants such as a -1e4 or -1e9 fill."""
    return float(torch.finfo(dtype).max) * fraction


# ----------------------------------------------------------------------------- seeds

_SEED_LOCK = threading.Lock()


@contextlib.contextmanager
def seeded(seed, device="cpu"):
    """Run the reference under ``torch.manual_seed(seed)`` -- the seed the worker sets before the
    student's forward (``student.module(..., forward_seed=seed)``) -- without disturbing the
    judge's own random state. Train-mode outputs (dropout) can then be compared exactly."""
    devices = [torch.device(device)] if torch.device(device).type == "cuda" else []
    with _SEED_LOCK, torch.random.fork_rng(devices=devices):
        manual_seed(seed, device)
        yield
