"""Plausible student mistakes for assignment ``softmax`` (graded by tests/test_mistakes.py)."""

ASSIGNMENT = "softmax"
STABLE, TEMP = "test_softmax_stable", "test_softmax_temperature"
JAC, LOG, CE = "test_softmax_jacobian", "test_log_softmax", "test_cross_entropy"

MISTAKES = [
    {
        "name": "naive_exp",
        "kind": "constant",
        "cell": "softmax",
        "source": """def softmax(x, dim=-1, temperature=1.0):
    e = torch.exp(x / temperature)
    return e / e.sum(dim=dim, keepdim=True)
""",
        "fails": [STABLE, TEMP],
        "says": "logits~3000",
    },
    {
        "name": "no_temperature",
        "kind": "logic",
        "cell": "softmax",
        "source": """def softmax(x, dim=-1, temperature=1.0):
    m = x.amax(dim=dim, keepdim=True)
    m = torch.where(torch.isfinite(m), m, torch.zeros_like(m))
    e = torch.exp(x - m)
    s = e.sum(dim=dim, keepdim=True)
    return torch.where(s > 0, e / s, torch.zeros_like(e))
""",
        "fails": [TEMP],
        "says": "temperature",
    },
    {
        "name": "torch_softmax_shortcut",
        "kind": "forbidden",
        "cell": "softmax",
        "source": """def softmax(x, dim=-1, temperature=1.0):
    p = torch.softmax(x / temperature, dim=dim)
    return torch.nan_to_num(p, nan=0.0)
""",
        "fails": [STABLE, TEMP],
        "says": "torch.softmax",
    },
    {
        "name": "zeros_on_default_device",
        "kind": "device",
        "cell": "softmax",
        "source": """def softmax(x, dim=-1, temperature=1.0):
    z = x / temperature
    m = z.amax(dim=dim, keepdim=True)
    m = torch.where(torch.isfinite(m), m, torch.zeros(m.shape, dtype=m.dtype))
    e = torch.exp(z - m)
    s = e.sum(dim=dim, keepdim=True)
    return torch.where(s > 0, e / s, torch.zeros(e.shape, dtype=e.dtype))
""",
        "fails": [STABLE, TEMP],
        "says": "장치",
    },
    {
        "name": "shift_in_place",
        "kind": "in-place",
        "cell": "softmax",
        "source": """def softmax(x, dim=-1, temperature=1.0):
    m = x.amax(dim=dim, keepdim=True)
    m = torch.where(torch.isfinite(m), m, torch.zeros_like(m))
    x -= m
    e = torch.exp(x / temperature)
    s = e.sum(dim=dim, keepdim=True)
    return torch.where(s > 0, e / s, torch.zeros_like(e))
""",
        "fails": [STABLE, TEMP],
        "says": "제자리",
    },
    {
        "name": "float32_result",
        "kind": "logic",
        "cell": "softmax",
        "source": """def softmax(x, dim=-1, temperature=1.0):
    z = x.float() / temperature
    m = z.amax(dim=dim, keepdim=True)
    m = torch.where(torch.isfinite(m), m, torch.zeros_like(m))
    e = torch.exp(z - m)
    s = e.sum(dim=dim, keepdim=True)
    return torch.where(s > 0, e / s, torch.zeros_like(e))
""",
        "fails": [STABLE, TEMP],
        "says": "dtype",
    },
    {
        "name": "nan_for_masked_rows",
        "kind": "logic",
        "cell": "softmax",
        "source": """def softmax(x, dim=-1, temperature=1.0):
    z = x / temperature
    e = torch.exp(z - z.amax(dim=dim, keepdim=True))
    return e / e.sum(dim=dim, keepdim=True)
""",
        "fails": [STABLE],
        "says": "-inf",
    },
    {
        "name": "jacobian_wrong_sign",
        "kind": "logic",
        "cell": "softmax_jacobian",
        "source": """def softmax_jacobian(p):
    return p.unsqueeze(-1) * p.unsqueeze(-2) - torch.diag_embed(p)
""",
        "fails": [JAC],
        "says": "softmax_jacobian(p)",
    },
    {
        "name": "jacobian_treats_p_as_logits",
        "kind": "logic",
        "cell": "softmax_jacobian",
        "source": """def softmax_jacobian(p):
    q = softmax(p, dim=-1)
    return torch.diag_embed(q) - q.unsqueeze(-1) * q.unsqueeze(-2)
""",
        "fails": [JAC],
        "says": "softmax도 함께 사용",
    },
    {
        "name": "jacobian_unbatched",
        "kind": "logic",
        "cell": "softmax_jacobian",
        "source": """def softmax_jacobian(p):
    return torch.diag(p) - torch.outer(p, p)
""",
        "fails": [JAC],
        "says": "softmax_jacobian",
    },
    {
        "name": "jacobian_by_autograd",
        "kind": "forbidden",
        "cell": "softmax_jacobian",
        "source": """def softmax_jacobian(p):
    logits = torch.log(p)
    flat = logits.reshape(-1, p.shape[-1])
    rows = [
        torch.autograd.functional.jacobian(lambda z: softmax(z, dim=-1), row) for row in flat
    ]
    return torch.stack(rows).reshape(*p.shape, p.shape[-1])
""",
        "fails": [JAC],
        "says": "jacobian",
    },
    {
        "name": "log_of_softmax",
        "kind": "constant",
        "cell": "log_softmax",
        "source": """def log_softmax(x, dim=-1):
    return torch.log(softmax(x, dim=dim))
""",
        "fails": [LOG, CE],
        "says": "log_softmax",
    },
    {
        "name": "log_softmax_clamped",
        "kind": "constant",
        "cell": "log_softmax",
        "source": """def log_softmax(x, dim=-1):
    return torch.log(softmax(x, dim=dim).clamp_min(1e-30))
""",
        "fails": [LOG, CE],
        "says": "log_softmax [logits~5000]",
    },
    {
        "name": "ce_mean_over_ignored",
        "kind": "logic",
        "cell": "cross_entropy",
        "source": """def cross_entropy(logits, target, ignore_index=-100, reduction="mean"):
    logp = log_softmax(logits, dim=-1)
    keep = target != ignore_index
    safe = torch.where(keep, target, torch.zeros_like(target))
    nll = -logp.gather(-1, safe.unsqueeze(-1)).squeeze(-1)
    nll = torch.where(keep, nll, torch.zeros_like(nll))
    if reduction == "none":
        return nll
    if reduction == "sum":
        return nll.sum()
    return nll.mean()
""",
        "fails": [CE],
        "says": "-100",
    },
    {
        "name": "ce_softmax_twice",
        "kind": "logic",
        "cell": "cross_entropy",
        "source": """def cross_entropy(logits, target, ignore_index=-100, reduction="mean"):
    logp = log_softmax(softmax(logits, dim=-1), dim=-1)
    keep = target != ignore_index
    safe = torch.where(keep, target, torch.zeros_like(target))
    nll = -logp.gather(-1, safe.unsqueeze(-1)).squeeze(-1)
    nll = torch.where(keep, nll, torch.zeros_like(nll))
    if reduction == "none":
        return nll
    if reduction == "sum":
        return nll.sum()
    return nll.sum() / keep.sum()
""",
        "fails": [CE],
        "says": "cross_entropy [mean]",
    },
    {
        "name": "ce_overwrites_target",
        "kind": "in-place",
        "cell": "cross_entropy",
        "source": """def cross_entropy(logits, target, ignore_index=-100, reduction="mean"):
    logp = log_softmax(logits, dim=-1)
    keep = target != ignore_index
    target[~keep] = 0
    nll = -logp.gather(-1, target.unsqueeze(-1)).squeeze(-1) * keep
    if reduction == "none":
        return nll
    if reduction == "sum":
        return nll.sum()
    return nll.sum() / keep.sum()
""",
        "fails": [CE],
        "says": "제자리",
    },
    {
        "name": "ce_zeros_on_default_device",
        "kind": "device",
        "cell": "cross_entropy",
        "source": """def cross_entropy(logits, target, ignore_index=-100, reduction="mean"):
    logp = log_softmax(logits, dim=-1)
    keep = target != ignore_index
    safe = torch.where(keep, target, torch.zeros_like(target))
    picked = -logp.gather(-1, safe.unsqueeze(-1)).squeeze(-1)
    nll = torch.where(keep, picked, torch.zeros(picked.shape, dtype=picked.dtype))
    if reduction == "none":
        return nll
    if reduction == "sum":
        return nll.sum()
    return nll.sum() / keep.sum()
""",
        "fails": [CE],
        "says": "장치",
    },
    {
        "name": "ce_library_call",
        "kind": "forbidden",
        "cell": "cross_entropy",
        "source": """def cross_entropy(logits, target, ignore_index=-100, reduction="mean"):
    C = logits.shape[-1]
    out = F.cross_entropy(
        logits.reshape(-1, C), target.reshape(-1), ignore_index=ignore_index, reduction=reduction
    )
    return out.reshape(target.shape) if reduction == "none" else out
""",
        "fails": [CE],
        "says": "F.cross_entropy",
    },
]
