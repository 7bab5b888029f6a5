"""Hidden checks of the softmax and masking assignments, driven in-process (no sandbox).

A tiny fake Student proxy calls plain Python implementations the way the worker would:
(a) the reference solutions and the source notebooks' own solution cells pass every check,
(b) the blank release code fails every check, and
(c) each deliberately wrong implementation fails exactly the checks that target its mistake.
"""

import json
import re
from pathlib import Path

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

from autograder.compare import CheckFailed
from autograder.judge import load_checks
from solutions import masking as ref_masking
from solutions import softmax as ref_softmax

ROOT = Path(__file__).resolve().parents[1]
SOURCE = ROOT / "exercises" / "source"


# ------------------------------------------------------------------ fake Student proxy


def _plain(value):
    """Mimic the wire: detached plain tensors (kept on their device), tuples/lists, scalars."""
    if isinstance(value, torch.Tensor):
        return torch.Tensor(value.detach()) if type(value) is not torch.Tensor else value.detach()
    if isinstance(value, list | tuple):
        return type(value)(_plain(v) for v in value)
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    return value


class FakeStudent:
    """Same interface as autograder.judge.Student, running ``namespace`` in this process."""

    def __init__(self, namespace, device):
        self.ns = namespace
        self.device = torch.device(device)

    def has(self, name):
        return name in self.ns

    def _get(self, name):
        if name not in self.ns:
            raise CheckFailed(f"{name}이(가) 정의되지 않았습니다")
        return self.ns[name]

    def call(self, name, *args, **kwargs):
        fn = self._get(name)
        try:
            return _plain(fn(*args, **kwargs))
        except Exception as e:
            raise CheckFailed(f"{name}(...) 실행 실패: {type(e).__name__}: {e}") from None

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
        cls = self._get(name)
        try:
            torch.manual_seed(seed)
            m = cls(**(init_kwargs or {}))
            state = {k: v.detach().clone() for k, v in m.state_dict().items()}
            m = m.to(self.device)
            if state_dict is not None:
                m.load_state_dict(state_dict, strict=True)
            m.train(train)
            xs = [x.clone().requires_grad_(grad and x.is_floating_point()) for x in inputs]
            out = getattr(m, method)(*xs, **(input_kwargs or {}))
            result = {"output": _plain(out), "state": state}
            if grad:
                outs = out if isinstance(out, tuple | list) else (out,)
                sum(o.float().sum() for o in outs).backward()
                grads = {n: p.grad for n, p in m.named_parameters() if p.grad is not None}
                grads.update({f"input{i}": x.grad for i, x in enumerate(xs) if x.grad is not None})
                result["grads"] = _plain(grads)
            return result
        except CheckFailed:
            raise
        except Exception as e:
            raise CheckFailed(f"{name} 모듈 실행 실패: {type(e).__name__}: {e}") from None


def run_checks(assignment, namespace, device, seed=0):
    """Run every check of ``assignment``; return {grade_id: failure message or None}."""
    out = {}
    for gid, spec in load_checks(assignment).items():
        rng = torch.Generator().manual_seed(seed)
        try:
            spec.fn(FakeStudent(namespace, device), rng, device)
            out[gid] = None
        except CheckFailed as e:
            out[gid] = str(e)
    return out


def failed(results):
    return {gid for gid, msg in results.items() if msg is not None}


# ------------------------------------------------------------------ notebooks


def _cells(assignment):
    nb = json.loads((SOURCE / assignment / f"{assignment}.ipynb").read_text(encoding="utf-8"))
    return nb["cells"]


def _solution_sources(assignment, blank=False):
    srcs = []
    for cell in _cells(assignment):
        meta = cell.get("metadata", {}).get("nbgrader", {})
        if cell["cell_type"] == "code" and (
            meta.get("solution") or meta.get("grade_id") == "setup"
        ):
            src = "".join(cell["source"])
            if blank:  # what nbgrader generate_assignment leaves in the release
                src = re.sub(
                    r"( *)### BEGIN SOLUTION.*?### END SOLUTION",
                    r"\1# YOUR CODE HERE\n\1raise NotImplementedError()",
                    src,
                    flags=re.S,
                )
            srcs.append(src)
    return srcs


def _exec(sources):
    ns = {}
    for src in sources:
        exec(compile(src, "<student>", "exec"), ns)
    return ns


def _test_grade_ids(assignment):
    return {
        c["metadata"]["nbgrader"]["grade_id"]
        for c in _cells(assignment)
        if c.get("metadata", {}).get("nbgrader", {}).get("grade")
    }


@pytest.mark.parametrize("assignment", ["softmax", "masking"])
def test_every_test_cell_has_a_check(assignment):
    assert set(load_checks(assignment)) == _test_grade_ids(assignment)
    points = [
        c["metadata"]["nbgrader"]["points"]
        for c in _cells(assignment)
        if c.get("metadata", {}).get("nbgrader", {}).get("grade")
    ]
    assert sum(points) == 10 and all(p > 0 for p in points)


@pytest.mark.parametrize("assignment", ["softmax", "masking"])
def test_hidden_regions_hold_no_code(assignment):
    for cell in _cells(assignment):
        src = "".join(cell["source"])
        for region in re.findall(r"### BEGIN HIDDEN TESTS(.*?)### END HIDDEN TESTS", src, re.S):
            lines = [ln.strip() for ln in region.splitlines() if ln.strip()]
            assert lines and all(ln.startswith("#") for ln in lines)
        if cell["cell_type"] == "code":
            assert "import solutions" not in src and "from solutions" not in src


# ------------------------------------------------------------------ softmax

SOFTMAX_REF = {
    "softmax": ref_softmax.softmax,
    "softmax_jacobian": ref_softmax.softmax_jacobian,
    "log_softmax": ref_softmax.log_softmax,
    "cross_entropy": ref_softmax.cross_entropy,
}


@pytest.mark.parametrize("seed", [0, 1])
def test_softmax_reference_passes(device, seed):
    results = run_checks("softmax", dict(SOFTMAX_REF), device, seed)
    assert failed(results) == set(), results


@pytest.mark.parametrize("seed", range(6))
def test_softmax_notebook_solution_passes(device, seed):
    results = run_checks("softmax", _exec(_solution_sources("softmax")), device, seed)
    assert failed(results) == set(), results


def test_softmax_blank_release_fails(device):
    ns = _exec(_solution_sources("softmax", blank=True))
    results = run_checks("softmax", ns, device)
    assert failed(results) == set(results)
    assert all("NotImplementedError" in msg for msg in results.values())


def _naive_softmax(x, dim=-1, temperature=1.0):
    e = torch.exp(x / temperature)
    return e / e.sum(dim=dim, keepdim=True)


def _softmax_no_temperature(x, dim=-1, temperature=1.0):
    return ref_softmax.softmax(x, dim=dim)


def _softmax_nan_rows(x, dim=-1, temperature=1.0):
    return torch.softmax(x / temperature, dim=dim)


def _softmax_on_meta(x, dim=-1, temperature=1.0):
    return ref_softmax.softmax(x, dim=dim, temperature=temperature).to("meta")


def _softmax_float32_out(x, dim=-1, temperature=1.0):
    return ref_softmax.softmax(x.float(), dim=dim, temperature=temperature)


def _jacobian_wrong_sign(p):
    return p.unsqueeze(-1) * p.unsqueeze(-2) - torch.diag_embed(p)


def _jacobian_from_logits(p):  # applies softmax again, as if p were logits
    return ref_softmax.softmax_jacobian(torch.softmax(p, dim=-1))


def _jacobian_unbatched(p):
    return torch.diag(p) - torch.outer(p, p)


def _log_of_softmax(x, dim=-1):
    return torch.log(ref_softmax.softmax(x, dim=dim))


def _ce_mean_over_all(logits, target, ignore_index=-100, reduction="mean"):
    none = ref_softmax.cross_entropy(logits, target, ignore_index, "none")
    return (
        none.mean()
        if reduction == "mean"
        else ref_softmax.cross_entropy(logits, target, ignore_index, reduction)
    )


def _ce_double_softmax(logits, target, ignore_index=-100, reduction="mean"):
    return ref_softmax.cross_entropy(torch.softmax(logits, -1), target, ignore_index, reduction)


def _ce_ignores_ignore_index(logits, target, ignore_index=-100, reduction="mean"):
    return ref_softmax.cross_entropy(logits, target, -100, reduction)


@pytest.mark.parametrize(
    "overrides, expected",
    [
        ({"softmax": _naive_softmax}, {"test_softmax_stable", "test_softmax_temperature"}),
        ({"softmax": _softmax_no_temperature}, {"test_softmax_temperature"}),
        ({"softmax": _softmax_nan_rows}, {"test_softmax_stable"}),
        ({"softmax": _softmax_on_meta}, {"test_softmax_stable", "test_softmax_temperature"}),
        ({"softmax": _softmax_float32_out}, {"test_softmax_stable", "test_softmax_temperature"}),
        ({"softmax_jacobian": _jacobian_wrong_sign}, {"test_softmax_jacobian"}),
        ({"softmax_jacobian": _jacobian_from_logits}, {"test_softmax_jacobian"}),
        ({"softmax_jacobian": _jacobian_unbatched}, {"test_softmax_jacobian"}),
        ({"log_softmax": _log_of_softmax}, {"test_log_softmax"}),
        ({"cross_entropy": _ce_mean_over_all}, {"test_cross_entropy"}),
        ({"cross_entropy": _ce_double_softmax}, {"test_cross_entropy"}),
        ({"cross_entropy": _ce_ignores_ignore_index}, {"test_cross_entropy"}),
        ({"softmax": None}, {"test_softmax_stable", "test_softmax_temperature"}),
    ],
    ids=lambda v: (
        ",".join(f.__name__ if f else "missing" for f in v.values())
        if isinstance(v, dict)
        else None
    ),
)
def test_softmax_wrong_implementations_fail(device, overrides, expected):
    ns = dict(SOFTMAX_REF)
    for name, fn in overrides.items():
        if fn is None:
            del ns[name]
        else:
            ns[name] = fn
    results = run_checks("softmax", ns, device)
    assert failed(results) == expected, results


def test_softmax_failure_message_is_korean_with_counterexample(device):
    results = run_checks("softmax", dict(SOFTMAX_REF, softmax=_naive_softmax), device)
    msg = results["test_softmax_stable"]
    assert "softmax" in msg and "입력" in msg and "tensor(shape=" in msg
    assert "solutions" not in msg and "ref." not in msg


# ------------------------------------------------------------------ masking

MASKING_REF = {
    name: getattr(ref_masking, name)
    for name in (
        "causal_mask",
        "padding_mask",
        "combine_masks",
        "masked_softmax",
        "masked_softmax_renorm",
        "CausalAttention",
    )
}


@pytest.mark.parametrize("seed", [0, 1])
def test_masking_reference_passes(device, seed):
    results = run_checks("masking", dict(MASKING_REF), device, seed)
    assert failed(results) == set(), results


@pytest.mark.parametrize("seed", range(6))
def test_masking_notebook_solution_passes(device, seed):
    results = run_checks("masking", _exec(_solution_sources("masking")), device, seed)
    assert failed(results) == set(), results


def test_masking_blank_release_fails(device):
    results = run_checks("masking", _exec(_solution_sources("masking", blank=True)), device)
    assert failed(results) == set(results)


def _causal_excludes_diagonal(T, S=None, device=None):
    S = T if S is None else S
    return torch.ones(T, S, dtype=torch.bool, device=device).tril(diagonal=S - T - 1)


def _causal_no_offset(T, S=None, device=None):
    S = T if S is None else S
    return torch.ones(T, S, dtype=torch.bool, device=device).tril()


def _causal_wrong_device(T, S=None, device=None):  # ignores `device`; meta stands in for cpu/cuda
    return ref_masking.causal_mask(T, S, device="meta")


def _causal_blocked_is_true(T, S=None, device=None):
    return ~ref_masking.causal_mask(T, S, device=device)


def _causal_float(T, S=None, device=None):
    return ref_masking.causal_mask(T, S, device=device).float()


def _padding_2d(lengths, S=None):
    return ref_masking.padding_mask(lengths, S)[:, 0, 0, :]


def _padding_off_by_one(lengths, S=None):
    S = int(lengths.max()) if S is None else S
    return (torch.arange(S, device=lengths.device) <= lengths[:, None])[:, None, None, :]


def _padding_on_meta(lengths, S=None):
    return ref_masking.padding_mask(lengths, S).to("meta")


def _combine_or(*masks):
    out = None
    for m in masks:
        if m is not None:
            out = m if out is None else out | m
    return out


def _combine_no_none(*masks):
    out = masks[0]
    for m in masks[1:]:
        out = out & m
    return out


def _masked_softmax_1e9(scores, mask, dim=-1):
    return torch.softmax(scores.masked_fill(~mask, -1e9), dim=dim) * mask


def _masked_softmax_uniform_rows(scores, mask, dim=-1):
    return torch.softmax(scores.masked_fill(~mask, torch.finfo(scores.dtype).min), dim=dim)


def _masked_softmax_neg_inf(scores, mask, dim=-1):
    return torch.softmax(scores.masked_fill(~mask, float("-inf")), dim=dim)


def _renorm_nan_rows(scores, mask, dim=-1):
    w = torch.softmax(scores, dim=dim) * mask
    return w / w.sum(dim=dim, keepdim=True)


def _renorm_no_renorm(scores, mask, dim=-1):
    return torch.softmax(scores, dim=dim) * mask


def _masked_softmax_ignores_dim(scores, mask, dim=-1):
    return ref_masking.masked_softmax(scores, mask)


class _AttentionBase(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, qkv_bias=False):
        super().__init__()
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.dropout = nn.Dropout(dropout)
        self.p = dropout
        self.register_buffer("mask", torch.triu(torch.ones(context_length, context_length), 1))

    def weights(self, x, scale=True, offset=1):
        T = x.shape[1]
        q, k = self.W_query(x), self.W_key(x)
        s = q @ k.transpose(1, 2)
        if scale:
            s = s / k.shape[-1] ** 0.5
        blocked = torch.triu(torch.ones(T, T, dtype=torch.bool, device=x.device), offset)
        return torch.softmax(s.masked_fill(blocked, float("-inf")), dim=-1)


class AttentionDropoutInEval(_AttentionBase):
    def forward(self, x):
        return F.dropout(self.weights(x), self.p, training=True) @ self.W_value(x)


class AttentionNoDropout(_AttentionBase):
    def forward(self, x):
        return self.weights(x) @ self.W_value(x)


class AttentionNoScale(_AttentionBase):
    def forward(self, x):
        return self.dropout(self.weights(x, scale=False)) @ self.W_value(x)


class AttentionSeesFuture(_AttentionBase):
    def forward(self, x):
        return self.dropout(self.weights(x, offset=2)) @ self.W_value(x)


class AttentionPersistentFloatMask(_AttentionBase):
    """002's listing: persistent float buffer with 1 = blocked. Correct, must pass."""

    def forward(self, x):
        T = x.shape[1]
        q, k, v = self.W_query(x), self.W_key(x), self.W_value(x)
        s = (q @ k.transpose(1, 2)).masked_fill(self.mask.bool()[:T, :T], -torch.inf)
        return self.dropout(torch.softmax(s / k.shape[-1] ** 0.5, dim=-1)) @ v


class AttentionWrongNames(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, qkv_bias=False):
        super().__init__()
        self.qkv = nn.Linear(d_in, 3 * d_out, bias=qkv_bias)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x):
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        return F.scaled_dot_product_attention(q, k, v, is_causal=True)


class AttentionTransposedWeights(nn.Module):
    """W_* as nn.Parameter(d_in, d_out) like SelfAttention_v1: wrong shapes for the judge."""

    def __init__(self, d_in, d_out, context_length, dropout, qkv_bias=False):
        super().__init__()
        self.W_query = nn.Parameter(torch.rand(d_in, d_out))
        self.W_key = nn.Parameter(torch.rand(d_in, d_out))
        self.W_value = nn.Parameter(torch.rand(d_in, d_out))

    def forward(self, x):
        q, k, v = x @ self.W_query, x @ self.W_key, x @ self.W_value
        return F.scaled_dot_product_attention(q, k, v, is_causal=True)


@pytest.mark.parametrize(
    "overrides, expected",
    [
        ({"causal_mask": _causal_excludes_diagonal}, {"test_causal_mask"}),
        ({"causal_mask": _causal_no_offset}, {"test_causal_mask"}),
        ({"causal_mask": _causal_wrong_device}, {"test_causal_mask"}),
        ({"causal_mask": _causal_blocked_is_true}, {"test_causal_mask"}),
        ({"causal_mask": _causal_float}, {"test_causal_mask"}),
        ({"padding_mask": _padding_2d}, {"test_padding_mask"}),
        ({"padding_mask": _padding_off_by_one}, {"test_padding_mask"}),
        ({"padding_mask": _padding_on_meta}, {"test_padding_mask"}),
        ({"combine_masks": _combine_or}, {"test_combine_masks"}),
        ({"combine_masks": _combine_no_none}, {"test_combine_masks"}),
        ({"masked_softmax": _masked_softmax_1e9}, {"test_masked_softmax"}),
        ({"masked_softmax": _masked_softmax_uniform_rows}, {"test_masked_softmax"}),
        ({"masked_softmax": _masked_softmax_neg_inf}, {"test_masked_softmax"}),
        ({"masked_softmax": _masked_softmax_ignores_dim}, {"test_masked_softmax"}),
        ({"masked_softmax_renorm": _renorm_nan_rows}, {"test_masked_softmax"}),
        ({"masked_softmax_renorm": _renorm_no_renorm}, {"test_masked_softmax"}),
        ({"CausalAttention": AttentionDropoutInEval}, {"test_causal_attention"}),
        ({"CausalAttention": AttentionNoDropout}, {"test_causal_attention"}),
        ({"CausalAttention": AttentionNoScale}, {"test_causal_attention"}),
        ({"CausalAttention": AttentionSeesFuture}, {"test_causal_attention"}),
        ({"CausalAttention": AttentionWrongNames}, {"test_causal_attention"}),
        ({"CausalAttention": AttentionTransposedWeights}, {"test_causal_attention"}),
        ({"CausalAttention": AttentionPersistentFloatMask}, set()),
        ({"CausalAttention": None}, {"test_causal_attention"}),
    ],
    ids=lambda v: (
        ",".join(getattr(f, "__name__", "missing") for f in v.values())
        if isinstance(v, dict)
        else None
    ),
)
def test_masking_wrong_implementations_fail(device, overrides, expected):
    ns = dict(MASKING_REF)
    for name, fn in overrides.items():
        if fn is None:
            del ns[name]
        else:
            ns[name] = fn
    results = run_checks("masking", ns, device)
    assert failed(results) == expected, results


def test_masking_messages_name_the_problem(device):
    results = run_checks("masking", dict(MASKING_REF, causal_mask=_causal_wrong_device), device)
    assert "장치" in results["test_causal_mask"]
    results = run_checks(
        "masking", dict(MASKING_REF, CausalAttention=AttentionDropoutInEval), device
    )
    assert "eval" in results["test_causal_attention"]
    results = run_checks("masking", dict(MASKING_REF, CausalAttention=AttentionWrongNames), device)
    assert "W_query" in results["test_causal_attention"]
