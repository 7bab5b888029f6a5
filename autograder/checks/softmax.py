"""Hidden checks for assignment ``softmax`` (chapter 1: 소프트맥스).

Each check calls the student's function in the sandboxed worker on random inputs drawn from
``rng`` and on edge cases (huge logits, -inf entries, all -inf rows, several dims and dtypes),
and compares the results with ``solutions.softmax``.
"""

import torch

from autograder.compare import HALF_TOL, assert_close, expect_device, expect_tensor, fail
from autograder.judge import check
from solutions import softmax as ref


def _randn(rng, *shape, scale=1.0, dtype=torch.float32, device="cpu"):
    """Standard normal tensor drawn from the check's generator, then moved/cast."""
    return (torch.randn(*shape, generator=rng, dtype=torch.float64) * scale).to(device, dtype)


def _compare(student, name, x, expected, what, device, kwargs=None, tol=None, inputs=None):
    kwargs = kwargs or {}
    inputs = inputs if inputs is not None else {"x": x, **kwargs}
    got = student.call(name, x, **kwargs)
    expect_tensor(
        got, what, shape=expected.shape, dtype=expected.dtype, finite=False, inputs=inputs
    )
    expect_device(got, device, what, inputs)
    rtol, atol = tol if tol else (None, None)
    assert_close(got, expected, what=what, inputs=inputs, rtol=rtol, atol=atol)
    return got


def _with_neg_inf(x, rng, frac=0.3):
    """Copy of x with about frac of its entries set to -inf (at least one left per row)."""
    drop = torch.rand(x.shape, generator=rng) < frac
    drop[..., 0] = False
    return x.masked_fill(drop.to(x.device), float("-inf"))


@check("test_softmax_stable")
def softmax_stable(student, rng, device):
    if not student.has("softmax"):
        fail("softmax이(가) 정의되지 않았습니다 (함수 이름을 바꾸지 마세요)")
    # huge logits (thousands), last dim
    x = _randn(rng, 4, 7, scale=3000.0, device=device)
    _compare(student, "softmax", x, ref.softmax(x), "softmax(x) (값이 수천 단위)", device)
    # small magnitudes, several dims, float64
    x = _randn(rng, 3, 5, 6, dtype=torch.float64, device=device)
    for dim in (1, 0, -1):
        _compare(
            student,
            "softmax",
            x,
            ref.softmax(x, dim=dim),
            f"softmax(x, dim={dim})",
            device,
            {"dim": dim},
        )
    # 1-D input with large positive and negative values
    x = torch.tensor([-5000.0, 1000.0, 999.0, 0.0], device=device)
    _compare(student, "softmax", x, ref.softmax(x), "softmax(x) (1차원 입력)", device)
    # -inf entries and an all -inf row -> zeros, not NaN
    x = _with_neg_inf(_randn(rng, 5, 6, scale=10.0, device=device), rng)
    x[2] = float("-inf")
    _compare(
        student,
        "softmax",
        x,
        ref.softmax(x),
        "softmax(x) (-inf 항목, 2번 줄 전체가 -inf -> 0)",
        device,
    )
    x = torch.full((2, 3, 4), float("-inf"), device=device)
    x[0, 1, 2] = 7.0
    _compare(
        student,
        "softmax",
        x,
        ref.softmax(x, dim=1),
        "softmax(x, dim=1) (거의 모두 -inf)",
        device,
        {"dim": 1},
    )
    # half precision: the student's result must be close to the float32 reference, cast
    for dtype in (torch.float16, torch.bfloat16):
        x = _randn(rng, 3, 8, scale=20.0, dtype=dtype, device=device)
        _compare(
            student,
            "softmax",
            x,
            ref.softmax(x),
            f"softmax(x) ({dtype})",
            device,
            tol=HALF_TOL[dtype],
        )


@check("test_softmax_temperature")
def softmax_temperature(student, rng, device):
    x = _randn(rng, 4, 9, scale=3.0, device=device)
    for t in (0.5, 2.0, 10.0):
        _compare(
            student,
            "softmax",
            x,
            ref.softmax(x, temperature=t),
            f"softmax(x, temperature={t})",
            device,
            {"temperature": t},
        )
    # low temperature on large logits: x / t is in the tens of thousands
    x = _randn(rng, 3, 5, scale=1000.0, dtype=torch.float64, device=device)
    _compare(
        student,
        "softmax",
        x,
        ref.softmax(x, dim=0, temperature=0.05),
        "softmax(x, dim=0, temperature=0.05)",
        device,
        {"dim": 0, "temperature": 0.05},
    )
    # temperature with -inf entries
    x = _with_neg_inf(_randn(rng, 2, 6, device=device), rng)
    _compare(
        student,
        "softmax",
        x,
        ref.softmax(x, temperature=3.0),
        "softmax(x, temperature=3.0) (-inf 항목)",
        device,
        {"temperature": 3.0},
    )


@check("test_softmax_jacobian")
def softmax_jacobian(student, rng, device):
    for shape, dtype in (
        ((5,), torch.float64),
        ((3, 4), torch.float32),
        ((2, 3, 6), torch.float64),
    ):
        p = ref.softmax(_randn(rng, *shape, scale=2.0, dtype=dtype, device=device))
        _compare(
            student,
            "softmax_jacobian",
            p,
            ref.softmax_jacobian(p),
            f"softmax_jacobian(p) (p.shape={shape})",
            device,
            inputs={"p": p},
        )
    # probabilities with exact zeros (masked entries) and a one-hot row
    p = torch.tensor([[0.5, 0.0, 0.5], [0.0, 1.0, 0.0]], dtype=torch.float64, device=device)
    _compare(
        student,
        "softmax_jacobian",
        p,
        ref.softmax_jacobian(p),
        "softmax_jacobian(p) (0 이 있는 확률)",
        device,
        inputs={"p": p},
    )


@check("test_log_softmax")
def log_softmax(student, rng, device):
    x = _randn(rng, 4, 7, scale=5000.0, device=device)
    _compare(
        student,
        "log_softmax",
        x,
        ref.log_softmax(x),
        "log_softmax(x) (값이 수천 단위)",
        device,
        tol=(1e-5, 1e-3),
    )
    x = _randn(rng, 3, 4, 5, dtype=torch.float64, device=device)
    for dim in (1, -1):
        _compare(
            student,
            "log_softmax",
            x,
            ref.log_softmax(x, dim=dim),
            f"log_softmax(x, dim={dim})",
            device,
            {"dim": dim},
        )
    # probabilities that underflow to 0 in float32 still have a finite log
    x = torch.tensor([[0.0, -200.0, 200.0]], device=device)
    _compare(
        student,
        "log_softmax",
        x,
        ref.log_softmax(x),
        "log_softmax(x) (softmax 가 0 으로 언더플로)",
        device,
    )
    x = _with_neg_inf(_randn(rng, 3, 6, device=device), rng)
    _compare(student, "log_softmax", x, ref.log_softmax(x), "log_softmax(x) (-inf 항목)", device)


def _ce(student, logits, target, device, **kwargs):
    what = "cross_entropy(logits, target" + "".join(f", {k}={v!r}" for k, v in kwargs.items()) + ")"
    inputs = {"logits": logits, "target": target, **kwargs}
    got = student.call("cross_entropy", logits, target, **kwargs)
    expected = ref.cross_entropy(logits, target, **kwargs)
    expect_tensor(got, what, finite=False, inputs=inputs)
    expect_device(got, device, what, inputs)
    assert_close(got, expected, what=what, inputs=inputs, rtol=1e-5, atol=1e-5)


@check("test_cross_entropy")
def cross_entropy(student, rng, device):
    logits = _randn(rng, 6, 5, scale=2.0, device=device)
    target = torch.randint(0, 5, (6,), generator=rng).to(device)
    _ce(student, logits, target, device)
    _ce(student, logits, target, device, reduction="sum")
    _ce(student, logits, target, device, reduction="none")
    # (B, T, C) logits with ignored positions
    logits = _randn(rng, 2, 4, 7, dtype=torch.float64, device=device)
    target = torch.randint(0, 7, (2, 4), generator=rng)
    target[0, 1] = target[1, 3] = -100
    target = target.to(device)
    _ce(student, logits, target, device)
    _ce(student, logits, target, device, reduction="none")
    # another ignore_index value, and huge logits that overflow a naive exp
    logits = _randn(rng, 5, 4, scale=1000.0, device=device)
    target = torch.tensor([0, 3, 1, 3, 2], device=device)
    _ce(student, logits, target, device, ignore_index=3)
    _ce(student, logits, target, device, ignore_index=3, reduction="sum")
