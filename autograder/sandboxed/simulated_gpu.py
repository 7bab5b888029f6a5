"""The simulated GPU of a CPU grader: the judge's tensors say they live on ``cuda:0``, and a
tensor made without a device (or moved to the CPU) is a CPU tensor that refuses to mix with them.

A ``load`` with ``"simulate": true`` runs the cells and every later request of that child under
:class:`SimulatedDevice`. There is no second run to tell apart from the graded call: the graded
call is the check. Runs inside the sandbox.
"""

import functools
import weakref

import torch
from torch.overrides import TorchFunctionMode
from torch.utils._device import _device_constructors  # torch.device's own list

from autograder.sandboxed.tensors import flat_tensors

SIM = torch.device("cuda", 0)  # where a simulating child pretends the judge's tensors live
_GET = {
    "device": torch.Tensor.device.__get__,
    "is_cuda": torch.Tensor.is_cuda.__get__,
    "is_cpu": torch.Tensor.is_cpu.__get__,
}
# functions that make a tensor from no tensor: torch.device's own list of those that take device=
FACTORIES = _device_constructors() | {torch.from_numpy}
# operations that take tensors on two devices on a GPU too (copies, CPU index tensors)
CROSS_DEVICE = {
    torch.Tensor.copy_,
    torch.Tensor.__getitem__,
    torch.Tensor.__setitem__,
    torch.Tensor.index_put_,
    torch.Tensor.index_put,
}
MOVES = {torch.Tensor.to, torch.Tensor.cuda, torch.Tensor.cpu, torch.Tensor.type_as}


class SimGenerator(torch.Generator):
    """torch.Generator as a simulating child offers it: ``device="cuda"`` gives a CPU generator
    (the same draws as the reference's) that says it is on the simulated GPU."""

    def __new__(cls, device="cpu"):
        g = super().__new__(cls, "cpu")
        g.sim_device = torch.device(device)
        return g

    def __init__(self, device="cpu"):
        pass

    @property
    def device(self):
        return self.sim_device


def forget_host(hosts, key, ref):
    """Weak-reference callback: the host tensor ``hosts[key]`` is gone."""
    if hosts.get(key) is ref:
        del hosts[key]


class SimulatedDevice(TorchFunctionMode):
    """Every request of a simulating child runs under this mode (a CPU grader): the judge's
    tensors are real CPU tensors that say they live on ``SIM`` (a GPU), with real data, so the
    check that a submission keeps its inputs' device is the graded call itself, not a second
    run. Like on a GPU grader, a tensor made without a device, with ``device="cpu"``, moved by
    ``.cpu()`` / ``.to("cpu")`` or drawn from a generator of the other device is a "host"
    tensor: an operation mixing a host tensor (0-dim ones aside) with a device one raises
    PyTorch's device-mix error, and results on the host show. ``failed`` keeps the first such
    error (the student's code may swallow it). Host tensors are remembered by identity
    (weakly), never marked on the tensor, so the student's code cannot read or clear the mark.
    """

    def __init__(self):
        super().__init__()
        self.host = {}  # id -> weak reference to a tensor made on the "CPU"
        self.failed = None
        self.drawn = set()  # device types of the generators the request drew from
        self.moved = False  # the request moved a CPU tensor (0-dim ones aside) to the GPU
        self._generator = self._from_numpy = None

    def __enter__(self):
        self._generator, torch.Generator = torch.Generator, SimGenerator
        self._from_numpy, torch.from_numpy = torch.from_numpy, self.from_numpy
        return super().__enter__()

    def __exit__(self, *exc):
        torch.Generator, torch.from_numpy = self._generator, self._from_numpy
        return super().__exit__(*exc)

    def from_numpy(self, array):
        """torch.from_numpy, which no mode sees: its tensor shares a NumPy array's memory, so
        it is a CPU tensor."""
        out = self._from_numpy(array)
        self.mark(out, True)
        return out

    def on_host(self, t):
        ref = self.host.get(id(t))
        return ref is not None and ref() is t

    def mark(self, value, host, keep=()):
        """Record the tensors of ``value`` (not those of ``keep``: inputs returned as they
        are) as host tensors, or as device tensors (``host`` False)."""
        hosts = self.host
        if not host and not hosts:
            return  # no host tensor at all (most requests): nothing to unmark
        kept = {id(t) for t in keep} if keep else ()
        for t in flat_tensors(value):
            key = id(t)
            if key in kept:
                continue
            if host:
                hosts[key] = weakref.ref(t, functools.partial(forget_host, hosts, key))
            else:
                hosts.pop(key, None)

    def refuse(self, message):
        self.failed = self.failed or message[:60]
        raise RuntimeError(message)

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if func == _GET["device"]:
            return torch.device("cpu") if self.on_host(args[0]) else SIM
        if func == _GET["is_cuda"] or func == _GET["is_cpu"]:
            return self.on_host(args[0]) == (func == _GET["is_cpu"])
        if func is torch.Tensor.get_device:
            return -1 if self.on_host(args[0]) else SIM.index
        if func in MOVES:
            return self.move(func, args, kwargs)
        if func is torch.Tensor.numpy and not self.on_host(args[0]):
            self.refuse(
                f"can't convert {SIM} device type tensor to numpy. Use Tensor.cpu() to copy "
                "the tensor to host memory first."
            )
        tensors = flat_tensors(args)
        if kwargs:
            flat_tensors(kwargs, tensors)
        target = kwargs.get("device")
        if target is not None:
            host = torch.device(target).type != SIM.type
            kwargs = dict(kwargs, device="cpu")
        elif func in FACTORIES and not (args and isinstance(args[0], torch.Tensor)):
            host = True  # the default device
        elif not self.host:
            host = False  # no host tensor exists: every tensor is on the device
        else:
            hosts = [self.on_host(t) for t in tensors]
            host = bool(tensors) and all(hosts)
            if func not in CROSS_DEVICE and not host:
                if any(h and t.dim() > 0 for h, t in zip(hosts, tensors, strict=True)):
                    self.refuse(
                        "Expected all tensors to be on the same device, but found at least two "
                        f"devices, {SIM} and cpu! (in {getattr(func, '__name__', func)})"
                    )
            if func in CROSS_DEVICE and tensors:
                host = hosts[0]
        if kwargs:
            self.check_generator(kwargs.get("generator"), "cpu" if host else SIM.type)
        out = func(*args, **kwargs)
        self.mark(out, host, keep=tensors)
        return out

    def check_generator(self, g, where):
        if g is None:
            return
        found = getattr(g, "device", torch.device("cpu")).type
        self.drawn.add(found)
        if found != where:
            self.refuse(f"Expected a '{where}' device type for generator but found '{found}'")

    def move(self, func, args, kwargs):
        """``.to`` / ``.cuda`` / ``.cpu`` / ``.type_as``: the data stays on the CPU, the mark
        follows the target; a move to the other device is a copy, as on a GPU."""
        t = args[0]
        host = self.on_host(t)
        if func is torch.Tensor.cpu:
            to_host, out = True, t
        elif func is torch.Tensor.cuda:
            to_host, out = False, t
        elif func is torch.Tensor.type_as:
            to_host, out = self.on_host(args[1]), func(*args, **kwargs)
        else:
            rest = args[1:]
            if rest and isinstance(rest[0], torch.Tensor):
                to_host = self.on_host(rest[0])
                out = t.to(rest[0].dtype, *rest[1:], **kwargs)
            else:
                device, dtype, non_blocking, memory_format = torch._C._nn._parse_to(*rest, **kwargs)
                to_host = host if device is None else device.type != SIM.type
                options = {"non_blocking": non_blocking, "copy": bool(kwargs.get("copy"))}
                if memory_format is not None:
                    options["memory_format"] = memory_format
                out = t.to(dtype, **options) if dtype is not None else t
                if options["copy"] and out is t:
                    out = t.clone()
        if to_host != host and out is t:
            out = t.clone()
        self.moved = self.moved or (host and not to_host and t.dim() > 0)
        if out is not t:
            self.mark(out, to_host)
        return out


def on_sim(value):
    """The judge's devices as the simulated device sees them: the CPU the grader runs on is
    the GPU the simulation pretends."""
    if isinstance(value, torch.device):
        return SIM if value.type == "cpu" else value
    if isinstance(value, list | tuple):
        return type(value)(on_sim(v) for v in value)
    if isinstance(value, dict):
        return {k: on_sim(v) for k, v in value.items()}
    return value
