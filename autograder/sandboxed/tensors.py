"""Torch helpers of the child: results as wire data, the tensors in a value, in-place edits seen
from inside, gradients, the default dtype and seeding of a request.

Runs inside the sandbox (imported by child.py) and in the judge (manual_seed, default_dtype).
"""

import contextlib

import numpy as np
import torch

from autograder.sandboxed import wire


def short_error(e):
    text = f"{type(e).__name__}: {e}"
    return text if len(text) <= 400 else text[:400] + "..."


def to_result(value, depth=0):
    """Student value -> value that wire.to_plain accepts (numpy -> tensor), else TypeError."""
    if depth > wire.MAX_DEPTH:
        raise TypeError("result nested too deeply")
    if value is None or type(value) in (bool, int, float, str, torch.device, torch.dtype):
        return value
    if isinstance(value, torch.Tensor):
        return value.detach().as_subclass(torch.Tensor)
    if isinstance(value, np.ndarray | np.generic):
        return torch.as_tensor(np.asarray(value).copy())
    if isinstance(value, list | tuple):
        items = [to_result(v, depth + 1) for v in value]
        return items if isinstance(value, list) else tuple(items)
    if isinstance(value, dict):
        return {str(k): to_result(v, depth + 1) for k, v in value.items()}
    raise TypeError(f"unsupported result type {type(value).__name__}")


def flat_tensors(value, out=None):
    """The tensors in ``value`` (nested lists, tuples and dict values), in order, appended to
    ``out``. Called for every torch call the simulated device sees: one Python call per
    container, none per leaf."""
    out = [] if out is None else out
    if isinstance(value, dict):
        value = value.values()
    elif not isinstance(value, (list, tuple)):
        if isinstance(value, torch.Tensor):
            out.append(value)
        return out
    for v in value:
        if isinstance(v, torch.Tensor):
            out.append(v)
        elif isinstance(v, (list, tuple, dict)):
            flat_tensors(v, out)
    return out


def aliases_input(result, inputs):
    """True when a result tensor is an input tensor or shares its memory (a view of it)."""
    ptrs = {t.untyped_storage().data_ptr() for t in flat_tensors(inputs) if t.numel()}
    return any(t.untyped_storage().data_ptr() in ptrs for t in flat_tensors(result) if t.numel())


def snapshot(args, kwargs):
    """{label: clone} of every tensor argument (to detect in-place changes by the student)."""
    items = [(f"인자 {i}", a) for i, a in enumerate(args)] + [(k, v) for k, v in kwargs.items()]
    out = {}
    for label, value in items:
        for j, t in enumerate(flat_tensors(value)):
            out[label if j == 0 else f"{label}[{j}]"] = (t, t.detach().clone())
    return out


def layout(args, kwargs):
    """{label: (container, its items now)} for every dict and list among the arguments (to
    detect keys removed, added or replaced in place by the student)."""
    out = {}

    def walk(value, label):
        if isinstance(value, dict | list):
            out[label] = (value, items_of(value))
            pairs = value.items() if isinstance(value, dict) else enumerate(value)
            for k, v in pairs:
                walk(v, f"{label}[{k!r}]" if isinstance(value, dict) else f"{label}[{k}]")

    for i, a in enumerate(args):
        walk(a, f"인자 {i}")
    for k, v in kwargs.items():
        walk(v, str(k))
    return out


def items_of(container):
    """What a dict or list holds, by identity: [(key, id(value))] or [id(item)]."""
    if isinstance(container, dict):
        return [(k, id(v)) for k, v in container.items()]
    return [id(v) for v in container]


def relaid(before):
    """Labels of the dict and list arguments whose items changed since ``layout``."""
    return [label for label, (c, items) in before.items() if items_of(c) != items]


def mutated(snap):
    """Labels of the tensor arguments whose values or shape changed since ``snapshot``."""
    out = []
    for label, (t, before) in snap.items():
        same = t.shape == before.shape and t.dtype == before.dtype
        if same:
            now = t.detach()
            eq = now == before
            if now.is_floating_point():
                eq |= now.isnan() & before.isnan()
            same = bool(eq.all())
        if not same:
            out.append(label)
    return out


def gradients(m, inputs, out, grad_outputs):
    """Backward of sum(o.float().sum()) (or sum((o * g).sum()) with grad_outputs) ->
    {parameter name or 'input<i>': grad}."""
    outs = flat_tensors(out)
    gos = flat_tensors(grad_outputs) if grad_outputs is not None else [None] * len(outs)
    if len(gos) != len(outs):
        raise ValueError("number of outputs does not match grad_outputs")
    loss = sum(
        (o.float() * g.float()).sum() if g is not None else o.float().sum()
        for o, g in zip(outs, gos, strict=True)
        if o.requires_grad
    )
    if not isinstance(loss, torch.Tensor):
        raise RuntimeError("output does not require grad")
    loss.backward()
    grads = {n: p.grad for n, p in m.named_parameters() if p.grad is not None}
    for i, x in enumerate(inputs):
        if isinstance(x, torch.Tensor) and x.grad is not None:
            grads[f"input{i}"] = x.grad
    return grads


def sgd_step(m, lr):
    """One plain SGD step (p -= lr * p.grad) over the parameters the module holds, found by
    nn.Module's own walk (not a method the module may override): the method run again on the
    same inputs then shows shared weights (tying), whatever the module says of them."""
    with torch.no_grad():
        for p in torch.nn.Module.parameters(m):
            if p.grad is not None:
                p -= lr * p.grad.to(p.dtype)


@contextlib.contextmanager
def default_dtype(name):
    """The request runs with torch.set_default_dtype(name) ("float32" or "float64"), as if the
    student's notebook had set it; None: unchanged."""
    if name is None:
        yield
        return
    if name not in ("float32", "float64"):
        raise ValueError(f"bad default dtype {name!r}")
    old = torch.get_default_dtype()
    torch.set_default_dtype(getattr(torch, name))
    try:
        yield
    finally:
        torch.set_default_dtype(old)


def manual_seed(seed, device="cpu"):
    """``torch.manual_seed(seed)`` for work on ``device``, without its hidden cost: before CUDA
    (and XPU, MTIA) initialise, torch.manual_seed queues their seeding with a formatted stack
    trace per call (about 2 ms, and the queue only grows). Seeds the CPU generator, and CUDA's
    when the work runs there; returns the CPU generator, as torch.manual_seed does."""
    generator = torch.default_generator.manual_seed(int(seed))
    if torch.device(device).type == "cuda":
        torch.cuda.manual_seed_all(int(seed))
    return generator
