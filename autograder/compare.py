"""Validation and comparison of student results (runs in the trusted judge only).

Every value that comes back from the worker is a plain ``torch.Tensor`` built by safetensors or
a plain scalar (see wire.py). :func:`assert_close` still checks type, dtype, shape and
finiteness before it compares numbers, and raises :class:`CheckFailed` with a short message and
a small counterexample that goes into the student's feedback.
"""

import math

import torch

MAX_SHOW = 6  # elements shown per tensor in a counterexample
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


def describe(value):
    """Short, safe text for a value (never calls student-defined methods: values are plain)."""
    if isinstance(value, torch.Tensor):
        return _fmt_tensor(value)
    if isinstance(value, list | tuple):
        inner = ", ".join(describe(v) for v in list(value)[:4])
        return (
            ("[" if isinstance(value, list) else "(")
            + inner
            + (", ...)" if len(value) > 4 else ")")
        )
    if isinstance(value, float):
        return f"{value:.6g}"
    text = repr(value) if isinstance(value, int | bool | str | type(None)) else type(value).__name__
    return text if len(text) < 200 else text[:200] + "..."


def _inputs_text(inputs):
    if not inputs:
        return ""
    parts = [f"  {k} = {describe(v)}" for k, v in inputs.items()]
    return "\n입력 (input):\n" + "\n".join(parts)


def fail(message, inputs=None):
    raise CheckFailed(message + _inputs_text(inputs))


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


def assert_close(got, expected, what="result", inputs=None, rtol=None, atol=None, check_dtype=True):
    """Raise CheckFailed unless ``got`` matches ``expected`` (tensor, scalar or nested tuple/list).

    Tensors: exact type ``torch.Tensor``, same shape, same dtype (unless check_dtype=False),
    non-finite entries only where the reference has the same ones, then
    ``|got - expected| <= atol + rtol * |expected|`` (defaults from the dtype as in
    torch.testing.assert_close). The message names the first mismatching position.
    """
    if isinstance(expected, list | tuple):
        if not isinstance(got, list | tuple) or len(got) != len(expected):
            n = len(got) if isinstance(got, list | tuple) else type(got).__name__
            fail(f"{what}: 길이 {len(expected)}의 tuple/list가 필요한데 {n}입니다", inputs)
        for i, (g, e) in enumerate(zip(got, expected, strict=True)):
            assert_close(g, e, f"{what}[{i}]", inputs, rtol, atol, check_dtype)
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
    expected = expected.detach().cpu()
    expect_tensor(
        got, what, tuple(expected.shape), expected.dtype if check_dtype else None, False, inputs
    )
    got = got.detach().cpu()
    if not expected.is_floating_point() and not got.is_floating_point():
        diff = got != expected
        if diff.any():
            idx = diff.nonzero()[0].tolist()
            fail(
                f"{what}: 위치 {idx}에서 {expected[tuple(idx)].item()}이어야 하는데 "
                f"{got[tuple(idx)].item()}입니다\n  결과: {describe(got)}",
                inputs,
            )
        return
    g, e = got.double(), expected.double()
    if rtol is None or atol is None:
        default = {torch.float16: (1e-3, 1e-5), torch.bfloat16: (1.6e-2, 1e-5)}
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
            f"{e[at].item():.6g}, 결과 {g[at].item():.6g}\n  결과: {describe(got)}\n"
            f"  기대: {describe(expected)}",
            inputs,
        )
