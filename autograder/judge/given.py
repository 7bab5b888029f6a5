"""The judge's answers to a child's questions about a given helper (sandboxed/given.py): the
reference function or module class computed here, on data only. Trusted judge only.
"""

import torch

from autograder.sandboxed import wire
from autograder.sandboxed.tensors import manual_seed


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
