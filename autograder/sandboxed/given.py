"""The given-helper proxy: a student's helper that a check takes as given is answered by the
judge over the child's socket (only data crosses), as one autograd node, and a given module
class holds the reference module's state. Runs inside the sandbox.
"""

import torch

from autograder.sandboxed.simulated_gpu import SIM
from autograder.sandboxed.tensors import to_result


class GivenRefused(Exception):
    """The judge could not answer a given helper's call (see Child.given)."""


class Given(torch.autograd.Function):
    """A given helper's call as one autograd node: forward and backward are the judge's answers
    (``{"args", "kwargs"}``, then with ``"grads"``: the gradients of the outputs, answered with
    those of the call's tensors, in the order they appear in args then kwargs). For a given
    module's forward (``module``: see given_module), the question also carries the module's
    state, its train/eval mode and the random state of the call's device, and the answer the
    random state after it: dropout inside draws what the student's own module would have."""

    @staticmethod
    def forward(ctx, child, name, args, kwargs, module, *tensors):
        ctx.child, ctx.name, ctx.args, ctx.kwargs = child, name, args, kwargs
        where = Given.device(child, args, kwargs, tensors)
        values = {"args": to_result(list(args)), "kwargs": to_result(kwargs)}
        if module is not None:
            # the state's tensors are the last ones; the random state is the real device's
            # (a simulating child's "GPU" draws from the CPU generator)
            state = dict(
                zip(module["names"], tensors[len(tensors) - len(module["names"]) :], strict=True)
            )
            real = torch.device("cpu") if child.sim is not None else where
            values["module"] = {
                "init": module["init"],
                "state": to_result(state),
                "training": module["training"],
                "rng": rng_state(real),
                "device": real.type,
            }
        ctx.values = values
        out = child.ask(name, values)
        if module is not None:
            out, after = out
            set_rng_state(real, after)
        if isinstance(out, list):
            out = tuple(out)
        if child.sim is not None:
            child.sim.mark(out, where.type != SIM.type)
        else:  # the judge's answer is on the CPU
            out = tuple(o.to(where) for o in out) if isinstance(out, tuple) else out.to(where)
        return out

    @staticmethod
    def device(child, args, kwargs, tensors):
        """Where the helper's result would be: its ``device`` argument, else its inputs'
        device, else the default device (the CPU). Inputs on two devices fail as they would in
        the helper's own operations."""
        given = kwargs.get("device", next((a for a in args if isinstance(a, torch.device)), None))
        if child.sim is None:
            if given is not None:
                return torch.device(given)
            return tensors[0].device if tensors else torch.device("cpu")
        hosts = [child.sim.on_host(t) for t in tensors]
        if not all(hosts) and any(h and t.dim() > 0 for t, h in zip(tensors, hosts, strict=True)):
            child.sim.refuse(
                f"Expected all tensors to be on the same device, but found at least two devices, "
                f"{SIM} and cpu!"
            )
        if given is not None:
            return SIM if torch.device(given).type == SIM.type else torch.device("cpu")
        return torch.device("cpu") if not tensors or all(hosts) else SIM

    @staticmethod
    def backward(ctx, *grads):
        values = dict(ctx.values, grads=[to_result(g) for g in grads])
        out = ctx.child.ask(ctx.name, values)
        return (None, None, None, None, None, *out)


def rng_state(device):
    """The random state of ``device``'s default generator (a CPU uint8 tensor)."""
    with torch._C.DisableTorchFunction():
        if device.type == "cuda":
            return torch.cuda.get_rng_state(device)
        return torch.get_rng_state()


def set_rng_state(device, state):
    with torch._C.DisableTorchFunction():
        if device.type == "cuda":
            torch.cuda.set_rng_state(state.cpu(), device)
        else:
            torch.set_rng_state(state.cpu())


def given_module(child, name, own):
    """A module class named ``name`` standing for the student's ``own`` (see Child.given): built,
    it holds the parameters and buffers the judge's reference module has (names, shapes,
    initial values: data sent by the judge), and its forward is the judge's answer (Given). The
    student's module that builds one, e.g. ``self.norm1 = LayerNorm(d_model, eps=eps)``, owns
    these tensors as it would its own (``state_dict``, ``load_state_dict``, ``.to``,
    gradients). When the judge cannot build the reference with these arguments, the student's
    own class is built instead. The child is reached only through these closures (attributes
    the source rules report as tampering), never through an attribute of the class."""

    def __new__(cls, *args, **kwargs):
        init = {"args": to_result(list(args)), "kwargs": to_result(kwargs)}
        try:
            built = child.ask(name, {"init": init})
        except (GivenRefused, TypeError):
            return own(*args, **kwargs)
        self = torch.nn.Module.__new__(cls)
        torch.nn.Module.__init__(self)
        self.given_init = init
        parameters = set(built["parameters"])
        for path, value in built["state"].items():
            owner, leaf = self, path
            while "." in leaf:
                part, leaf = leaf.split(".", 1)
                if part not in owner._modules:
                    owner.add_module(part, torch.nn.Module())
                owner = owner._modules[part]
            if path in parameters:
                owner.register_parameter(leaf, torch.nn.Parameter(value))
            else:
                owner.register_buffer(leaf, value)
        return self

    def __init__(self, *args, **kwargs):  # built in __new__
        pass

    def forward(self, *args, **kwargs):
        state = torch.nn.Module.state_dict(self, keep_vars=True)
        tensors = [v for v in [*args, *kwargs.values()] if isinstance(v, torch.Tensor)]
        tensors += list(state.values())
        module = {"init": self.given_init, "names": list(state), "training": self.training}
        try:
            return Given.apply(child, name, args, kwargs, module, *tensors)
        except GivenRefused as e:
            raise TypeError(f"{name}(...)(입력): {e}") from None

    methods = {"__new__": __new__, "__init__": __init__, "forward": forward, "__qualname__": name}
    return type(name, (torch.nn.Module,), methods)
