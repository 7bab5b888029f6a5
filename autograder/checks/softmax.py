"""Hidden checks for assignment ``softmax`` (chapter 1: 소프트맥스).

The student's functions run on random inputs from ``rng`` and on edge cases (logits in the
thousands and near the ends of the dtype's range, -inf entries, all -inf rows, several dims and
dtypes); results are compared with ``solutions.softmax``. Ready-made softmax, log-softmax and
cross-entropy functions may not be used (the notebook says so).
"""

import pytest
import torch

from autograder.judge.checking import HALF_TOL, assert_close, extreme, randn
from solutions import softmax as ref

READY_MADE = (
    "softmax",
    "log_softmax",
    "Softmax",
    "LogSoftmax",
    "logsumexp",
    "cross_entropy",
    "CrossEntropyLoss",
    "nll_loss",
    "NLLLoss",
)
F32, F64, F16, BF16 = torch.float32, torch.float64, torch.float16, torch.bfloat16


def with_neg_inf(x, rng, frac=0.3):
    """Copy of x with about frac of its entries set to -inf (at least one left per row)."""
    drop = torch.rand(x.shape, generator=rng) < frac
    drop[..., 0] = False
    return x.masked_fill(drop.to(x.device), float("-inf"))


def masked_rows(rng, d):
    x = with_neg_inf(randn(rng, 5, 6, scale=10.0, device=d), rng)
    x[2] = float("-inf")
    return x


def almost_all_neg_inf(rng, d):
    x = torch.full((2, 3, 4), float("-inf"), device=d)
    x[0, 1, 2] = 7.0
    return x


def compare(student, name, case, args, kwargs, expected, tol=None):
    """Call the student's ``name`` and compare with ``expected`` (shape, dtype, device, values);
    a wrong result that a known misconception gives is named."""
    inputs = {"x": args[0], **kwargs} if len(args) == 1 else dict(zip("ab", args, strict=False))
    got = student.call(name, *args, **kwargs)
    rtol, atol = tol or (None, None)
    known = MISCONCEPTIONS[name](*args, **kwargs)
    what = f"{name} [{case}]"
    assert_close(got, expected, what, inputs, rtol, atol, misconceptions=known)


# ----------------------------------------------------------------------------- misconceptions
# Known mistakes, and the value each gives on a check's inputs (None where those inputs cannot
# show it): a wrong result that matches one is named in the feedback (checking.diagnose).


def finite_max(x, dim):
    m = x.amax(dim=dim, keepdim=True)
    return torch.where(torch.isfinite(m), m, torch.zeros_like(m))


def normalized_exp(z, dim):
    """exp(z) / sum(exp(z)) along ``dim``, with no guard (overflow, 0/0 rows and all)."""
    e = torch.exp(z)
    return e / e.sum(dim=dim, keepdim=True)


def guarded_exp(z, dim):
    """exp(z) / sum(exp(z)) along ``dim``, rows whose sum is 0 left at 0."""
    e = torch.exp(z)
    s = e.sum(dim=dim, keepdim=True)
    return torch.where(s > 0, e / s, torch.zeros_like(e))


def softmax_misconceptions(x, dim=-1, temperature=1.0):
    t, last = float(temperature), dim in (-1, x.dim() - 1)
    no_inf = torch.where(torch.isneginf(x), -1e9, x.double()) / t  # float64: -1e9 fits
    return {
        "temperature 를 곱했습니다. 로짓을 temperature 로 나눈 뒤 소프트맥스를 적용합니다 "
        "(softmax(x / temperature)): temperature 가 작을수록 분포가 뾰족해집니다": lambda: (
            None if t == 1 else ref.softmax(x * t, dim=dim)
        ),
        "temperature 를 쓰지 않았습니다. 로짓을 temperature 로 나눈 뒤 소프트맥스를 적용합니다 "
        "(softmax(x / temperature))": lambda: None if t == 1 else ref.softmax(x, dim=dim),
        "dim 인자를 쓰지 않고 늘 마지막 차원으로 계산했습니다. 최댓값과 지수의 합을 모두 dim 을 "
        "따라 구하세요 (keepdim=True)": lambda: (
            None if last else ref.softmax(x, dim=-1, temperature=t)
        ),
        "모든 원소가 -inf 인 행이 NaN 이 되었습니다 (0/0). 그런 행은 확률이 모두 0 인 행으로 "
        "돌려주세요: 최댓값이 -inf 이면 0 을 빼고, 합이 0 인 행은 나누지 말고 0 으로 둡니다": (
            lambda: normalized_exp(x / t - (x / t).amax(dim=dim, keepdim=True), dim)
        ),
        "최댓값을 dim 을 따라가 아니라 텐서 전체에서 하나만 구해 뺐습니다: 최댓값이 훨씬 작은 "
        "행은 exp 가 모두 0 으로 언더플로합니다. 최댓값은 dim 을 따라 구하세요 (keepdim=True)": (
            lambda: None if torch.isneginf(x).any() else guarded_exp(x / t - (x / t).max(), dim)
        ),
        "-inf 를 -1e9 같은 큰 음수로 바꾸었습니다: 모든 원소가 -inf 인 행이 0 이 아니라 균등분포가 "
        "됩니다. -inf 는 그대로 두고, 최댓값이 -inf 인 행은 확률이 모두 0 인 행으로 돌려주세요": (
            lambda: normalized_exp(no_inf - no_inf.amax(dim=dim, keepdim=True), dim).to(x.dtype)
        ),
        "최댓값을 빼지 않고 exp 를 계산했습니다: 로짓이 크면 exp 가 inf 로 넘쳐(오버플로) 결과가 "
        "NaN 이 됩니다. exp 전에 dim 을 따라 최댓값을 빼세요": lambda: (
            None
            if torch.isneginf(x).any()  # all -inf rows give NaN with or without the shift
            else normalized_exp(x / t, dim)
        ),
    }


def log_softmax_misconceptions(x, dim=-1):
    last = dim in (-1, x.dim() - 1)
    return {
        "소프트맥스의 로그를 취했습니다. 소프트맥스가 0 으로 언더플로하는 자리에서 -inf 가 "
        "됩니다: (x - max) - log(sum(exp(x - max))) 로 로짓에서 바로 계산하세요": lambda: torch.log(
            ref.softmax(x, dim=dim)
        ),
        "최댓값을 빼서 exp 를 계산한 뒤, 결과에서 최댓값을 빼는 것을 잊었습니다: log_softmax 는 "
        "(x - max) - log(sum(exp(x - max))) 입니다": lambda: (
            ref.log_softmax(x, dim=dim) + finite_max(x, dim)
        ),
        "dim 인자를 쓰지 않고 늘 마지막 차원으로 계산했습니다": lambda: (
            None if last else ref.log_softmax(x, dim=-1)
        ),
        "float64 입력을 float32 로 바꾸어 계산했습니다: 입력의 dtype 그대로 계산하세요 (정밀도를 "
        "잃지 않도록)": lambda: (
            None if x.dtype != torch.float64 else ref.log_softmax(x.float(), dim=dim).double()
        ),
    }


def jacobian_misconceptions(p):
    return {
        "부호가 반대입니다: 소프트맥스의 야코비안은 diag(p) - p pᵀ 입니다 (대각 성분 p_i(1 - p_i) "
        "는 양수)": lambda: -ref.softmax_jacobian(p.double()),
        "p 에 소프트맥스를 한 번 더 적용했습니다. 입력 p 는 이미 확률이므로 diag(p) - p pᵀ 에 "
        "그대로 씁니다": lambda: ref.softmax_jacobian(ref.softmax(p.double())),
    }


def cross_entropy_misconceptions(logits, target, ignore_index=-100, reduction="mean"):
    keep = target != ignore_index
    ignored = not bool(keep.all())
    return {
        "로짓에 소프트맥스를 두 번 적용했습니다. cross_entropy 는 로짓을 받아 log_softmax 를 "
        "한 번만 적용합니다": lambda: ref.cross_entropy(
            ref.softmax(logits, dim=-1), target, ignore_index, reduction
        ),
        'reduction="mean" 의 분모에 무시할 위치(ignore_index)까지 넣었습니다. 평균은 무시하지 '
        "않은 위치의 손실만으로 냅니다": lambda: (
            ref.cross_entropy(logits, target, ignore_index, "sum") / target.numel()
            if reduction == "mean" and ignored
            else None
        ),
        'reduction="none" 에서 무시할 위치의 손실을 0 으로 만들지 않았습니다': lambda: (
            -ref.log_softmax(logits, dim=-1)
            .gather(-1, torch.where(keep, target, torch.zeros_like(target)).unsqueeze(-1))
            .squeeze(-1)
            if reduction == "none" and ignored
            else None
        ),
        "ignore_index 인자 대신 -100 을 그대로 썼습니다": lambda: (
            None if ignore_index == -100 else ref.cross_entropy(logits, target, -100, reduction)
        ),
    }


MISCONCEPTIONS = {
    "softmax": softmax_misconceptions,
    "log_softmax": log_softmax_misconceptions,
    "softmax_jacobian": jacobian_misconceptions,
    "cross_entropy": cross_entropy_misconceptions,
}


# ----------------------------------------------------------------------------- softmax

# case label -> (rng, device) -> (x, kwargs, tolerance); the label says what makes it hard
STABLE = {
    "로짓~3000": lambda rng, d: (randn(rng, 4, 7, scale=3000.0, device=d), {}, None),
    "dim=1": lambda rng, d: (randn(rng, 3, 5, 6, dtype=F64, device=d), {"dim": 1}, None),
    "dim=0": lambda rng, d: (randn(rng, 3, 5, 6, dtype=F64, device=d), {"dim": 0}, None),
    "1차원": lambda rng, d: (torch.tensor([-5000.0, 1000.0, 999.0, 0.0], device=d), {}, None),
    "로짓~+max(float32)": lambda rng, d: (
        randn(rng, 3, 6, scale=1e37, shift=extreme(F32), device=d),
        {},
        None,
    ),
    "로짓~-max(float32)": lambda rng, d: (
        randn(rng, 3, 6, scale=1e37, shift=-extreme(F32), device=d),
        {},
        None,
    ),
    "-inf 원소, 전부 -inf인 행": lambda rng, d: (masked_rows(rng, d), {}, None),
    "거의 전부 -inf, dim=1": lambda rng, d: (almost_all_neg_inf(rng, d), {"dim": 1}, None),
    "float16": lambda rng, d: (
        randn(rng, 3, 8, scale=20.0, dtype=F16, device=d),
        {},
        HALF_TOL[F16],
    ),
    "float16, 전부 -inf인 행": lambda rng, d: (masked_rows(rng, d).half(), {}, HALF_TOL[F16]),
    "bfloat16": lambda rng, d: (
        randn(rng, 3, 8, scale=20.0, dtype=BF16, device=d),
        {},
        HALF_TOL[BF16],
    ),
    "로짓~+max(float16)": lambda rng, d: (
        randn(rng, 2, 5, scale=100.0, shift=extreme(F16), dtype=F16, device=d),
        {},
        HALF_TOL[F16],
    ),
}


@pytest.mark.forbid(*READY_MADE)
@pytest.mark.parametrize("case", list(STABLE))
def test_softmax_stable(student, rng, device, case):
    x, kwargs, tol = STABLE[case](rng, device)
    compare(student, "softmax", case, (x,), kwargs, ref.softmax(x, **kwargs), tol)


TEMPERATURE = {
    "temperature=0.5": lambda rng, d: (randn(rng, 4, 9, scale=3.0, device=d), {"temperature": 0.5}),
    "temperature=10": lambda rng, d: (randn(rng, 4, 9, scale=3.0, device=d), {"temperature": 10.0}),
    "로짓~1000, temperature=0.05, dim=0": lambda rng, d: (
        randn(rng, 3, 5, scale=1000.0, dtype=F64, device=d),
        {"dim": 0, "temperature": 0.05},
    ),
    "-inf 원소, temperature=3": lambda rng, d: (
        with_neg_inf(randn(rng, 2, 6, device=d), rng),
        {"temperature": 3.0},
    ),
}


@pytest.mark.forbid(*READY_MADE)
@pytest.mark.parametrize("case", list(TEMPERATURE))
def test_softmax_temperature(student, rng, device, case):
    x, kwargs = TEMPERATURE[case](rng, device)
    compare(student, "softmax", case, (x,), kwargs, ref.softmax(x, **kwargs))


# ----------------------------------------------------------------------------- Jacobian


def probabilities(rng, shape, dtype, d):
    return ref.softmax(randn(rng, *shape, scale=2.0, dtype=dtype, device=d))


JACOBIAN = {
    "p (5,)": lambda rng, d: probabilities(rng, (5,), F64, d),
    "p (3, 4)": lambda rng, d: probabilities(rng, (3, 4), F32, d),
    "p (2, 3, 6)": lambda rng, d: probabilities(rng, (2, 3, 6), F64, d),
    "0이 있는 p, 원-핫 행": lambda rng, d: torch.tensor(
        [[0.5, 0.0, 0.5], [0.0, 1.0, 0.0]], dtype=F64, device=d
    ),
    "p float16 (2, 5)": lambda rng, d: probabilities(rng, (2, 5), F16, d),
    "p bfloat16 (3, 4)": lambda rng, d: probabilities(rng, (3, 4), BF16, d),
}


@pytest.mark.forbid("jacobian", "jacrev", "jacfwd", "vmap", "backward", "grad")
@pytest.mark.parametrize("case", list(JACOBIAN))
def test_softmax_jacobian(student, rng, device, case):
    p = JACOBIAN[case](rng, device)
    got = student.call("softmax_jacobian", p)
    expected = ref.softmax_jacobian(p.double()).to(p.dtype)
    rtol, atol = HALF_TOL.get(p.dtype, (None, None))
    what = f"softmax_jacobian(p) [{case}]"
    known = jacobian_misconceptions(p)
    assert_close(got, expected, what, {"p": p}, rtol, atol, misconceptions=known)


# ----------------------------------------------------------------------------- log-softmax

LOG_SOFTMAX = {
    "로짓~5000": lambda rng, d: (randn(rng, 4, 7, scale=5000.0, device=d), {}, (1e-5, 1e-3)),
    "dim=1": lambda rng, d: (randn(rng, 3, 4, 5, dtype=F64, device=d), {"dim": 1}, None),
    "소프트맥스가 0으로 언더플로": lambda rng, d: (
        torch.tensor([[0.0, -200.0, 200.0]], device=d),
        {},
        None,
    ),
    "-inf 원소": lambda rng, d: (with_neg_inf(randn(rng, 3, 6, device=d), rng), {}, None),
    "float64, 로짓~30": lambda rng, d: (
        randn(rng, 3, 7, scale=30.0, dtype=F64, device=d),
        {},
        None,
    ),
    "로짓~-max(float32)": lambda rng, d: (
        randn(rng, 2, 5, scale=1e37, shift=-extreme(F32), device=d),
        {},
        (1e-5, 1e-3),
    ),
}


@pytest.mark.forbid(*READY_MADE)
@pytest.mark.parametrize("case", list(LOG_SOFTMAX))
def test_log_softmax(student, rng, device, case):
    x, kwargs, tol = LOG_SOFTMAX[case](rng, device)
    compare(student, "log_softmax", case, (x,), kwargs, ref.log_softmax(x, **kwargs), tol)


# ----------------------------------------------------------------------------- cross-entropy


def classes(rng, n, *shape, d):
    return torch.randint(0, n, shape, generator=rng).to(d)


def ignored(rng, d):
    t = torch.randint(0, 7, (2, 4), generator=rng)
    t[0, 1] = t[1, 3] = -100
    return t.to(d)


CROSS_ENTROPY = {
    'reduction="mean"': lambda rng, d: (
        randn(rng, 6, 5, scale=2.0, device=d),
        classes(rng, 5, 6, d=d),
        {},
    ),
    'reduction="sum"': lambda rng, d: (
        randn(rng, 6, 5, scale=2.0, device=d),
        classes(rng, 5, 6, d=d),
        {"reduction": "sum"},
    ),
    'reduction="none"': lambda rng, d: (
        randn(rng, 6, 5, scale=2.0, device=d),
        classes(rng, 5, 6, d=d),
        {"reduction": "none"},
    ),
    "(B, T, C), target에 -100": lambda rng, d: (
        randn(rng, 2, 4, 7, dtype=F64, device=d),
        ignored(rng, d),
        {},
    ),
    '(B, T, C), -100, reduction="none"': lambda rng, d: (
        randn(rng, 2, 4, 7, dtype=F64, device=d),
        ignored(rng, d),
        {"reduction": "none"},
    ),
    "ignore_index=3, 로짓~1000": lambda rng, d: (
        randn(rng, 5, 4, scale=1000.0, device=d),
        torch.tensor([0, 3, 1, 3, 2], device=d),
        {"ignore_index": 3},
    ),
    'ignore_index=3, reduction="sum"': lambda rng, d: (
        randn(rng, 5, 4, scale=1000.0, device=d),
        torch.tensor([0, 3, 1, 3, 2], device=d),
        {"ignore_index": 3, "reduction": "sum"},
    ),
}


@pytest.mark.given(log_softmax=ref.log_softmax)
@pytest.mark.forbid(*READY_MADE)
@pytest.mark.parametrize("case", list(CROSS_ENTROPY))
def test_cross_entropy(student, rng, device, case):
    logits, target, kwargs = CROSS_ENTROPY[case](rng, device)
    got = student.call("cross_entropy", logits, target, **kwargs)
    expected = ref.cross_entropy(logits, target, **kwargs)
    inputs = {"logits": logits, "target": target, **kwargs}
    what = f"cross_entropy [{case}]"
    known = cross_entropy_misconceptions(logits, target, **kwargs)
    assert_close(got, expected, what, inputs, 1e-5, 1e-5, misconceptions=known)
