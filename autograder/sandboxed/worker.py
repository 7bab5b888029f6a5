"""Untrusted side of the grader: a warm zygote and one forked child per check.

Runs inside the sandbox as ``python -I -S /grader/worker.py CONFIG_JSON`` (see sandbox.py).
It imports only the standard library, torch, numpy and ``wire`` -- never ``autograder.checks``
or ``solutions``, which are not even visible in the sandbox.

Zygote: imports torch once, then waits on the control socket (fd given in CONFIG) for
``{"op": "spawn"}`` messages carrying one file descriptor (a fresh socket to the judge).
For each, it forks a child, waits for it with a wall-clock deadline, kills everything the
child left behind, wipes its scratch directory and reports ``{"op": "done"}``.

Child: drops to the sandbox uid, applies rlimits, silences stdout/stderr, then serves requests
from the judge on its own socket: ``load`` (exec the student's solution cells), ``call``,
``module``, ``has``. Everything it sends back is data (see wire.py); the judge validates it.

The simulated GPU (a ``load`` with ``"simulate": true``, on a CPU grader): the cells and every
later request run under :class:`SimulatedDevice`, where the judge's tensors say they live on
``cuda:0`` and a tensor made without a device (or moved to the CPU) is a CPU tensor that
refuses to mix with them, as on a GPU. There is no second run to tell apart from the graded
call: the graded call is the check.
"""

import builtins
import contextlib
import functools
import gc
import json
import marshal
import mmap
import os
import resource
import select
import shutil
import signal
import socket
import sys
import time
import traceback
import types
import weakref

CONFIG = json.loads(sys.argv[1]) if __name__ == "__main__" else {}
if __name__ == "__main__":
    import site

    for _p in CONFIG.get("site_dirs", []):
        site.addsitedir(_p)
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import numpy as np  # noqa: E402
import torch  # noqa: E402

try:
    import wire  # noqa: E402  (inside the sandbox)
except ImportError:  # imported as autograder.sandboxed.worker by the judge and the tests
    from autograder.sandboxed import wire  # noqa: E402

from torch.overrides import TorchFunctionMode  # noqa: E402
from torch.utils._device import _device_constructors  # noqa: E402  (torch.device's own list)

PRELUDE = compile(  # compiled once, in the zygote
    "import math\nimport numpy as np\nimport torch\nimport torch.nn as nn\n"
    "import torch.nn.functional as F\n",
    "<prelude>",
    "exec",
)


# ----------------------------------------------------------------------------- child


def cell_name(index):
    """The file name of cell ``index``'s code, by which tracebacks name the cell."""
    return f"<solution cell {index + 1}>"


def cell_code(index, source, compiled):
    """The judge's compiled cell ``index`` (``compiled[index]``: a marshalled code object as a
    uint8 tensor, see judge.wire_code), or None: the cell is compiled here from ``source``."""
    if not isinstance(compiled, list) or index >= len(compiled):
        return None
    data = compiled[index]
    if not isinstance(data, torch.Tensor) or data.dtype != torch.uint8:
        return None
    code = marshal.loads(data.numpy().tobytes())
    ok = isinstance(code, types.CodeType) and code.co_filename == cell_name(index)
    return code if ok else None


def set_limits(limits):
    def lim(res, value):
        if value is not None:
            resource.setrlimit(res, (int(value), int(value)))

    cpu = limits.get("cpu_s")
    if cpu is not None:
        resource.setrlimit(resource.RLIMIT_CPU, (int(cpu), int(cpu) + 1))
    lim(resource.RLIMIT_DATA, limits.get("memory_bytes"))
    lim(resource.RLIMIT_FSIZE, limits.get("file_bytes"))
    lim(resource.RLIMIT_NOFILE, limits.get("open_files"))
    lim(resource.RLIMIT_CORE, 0)
    nproc = limits.get("nproc")
    if nproc is not None and not CONFIG.get("sandboxed"):
        nproc = None  # no sandbox: the limit would count every process of this user
    elif nproc is not None and limits.get("uid") is None:
        # unprivileged sandbox: the count covers this sandbox's processes and threads only
        nproc += sum(len(os.listdir(f"/proc/{p}/task")) for p in os.listdir("/proc") if p.isdigit())
    if nproc is not None:
        resource.setrlimit(resource.RLIMIT_NPROC, (int(nproc), int(nproc)))


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


def cell_location(e, sources, labels=()):
    """' (`f` 셀, 5행: `x.sub_(m)`)' for the innermost frame of the student's cells (named by
    the judge's ``labels``), else ''."""
    where = ""
    for frame in traceback.extract_tb(e.__traceback__):
        name = frame.filename
        if name.startswith("<solution cell ") and name.endswith(">"):
            n = int(name[len("<solution cell ") : -1])
            lines = sources[n - 1].splitlines() if 0 < n <= len(sources) else []
            line = lines[frame.lineno - 1].strip() if 0 < (frame.lineno or 0) <= len(lines) else ""
            label = labels[n - 1] if 0 < n <= len(labels) else f"셀 {n}"
            where = f" ({label}, {frame.lineno}행: `{line[:120]}`)"
    return where


def public_line(e, source):
    """' (테스트 셀 3행: `assert ...`)' for the public test's innermost line in ``e``."""
    lines, where = source.splitlines(), ""
    for frame in traceback.extract_tb(e.__traceback__):
        if frame.filename == "<public test>" and 0 < (frame.lineno or 0) <= len(lines):
            where = f" (테스트 셀 {frame.lineno}행: `{lines[frame.lineno - 1].strip()[:160]}`)"
    return where


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


# dispatch keys whose kernels block_operators replaces (where the operator has one)
BLOCK_KEYS = (
    "CompositeImplicitAutograd",
    "CompositeExplicitAutograd",
    "CompositeExplicitAutogradNonFunctional",
    "CPU",
    "CUDA",
    "Meta",
    "AutogradCPU",
    "AutogradCUDA",
    "Autograd",
    "AutogradOther",
)


def block_operators(bases):
    """Replace every kernel of the aten operators named ``bases`` (all overloads) with one that
    raises ``forbidden operator aten::NAME``: whatever Python name reaches the operator (a
    public function, a method, an alias, ``torch.ops.aten...``), it cannot run. Returns the
    registration handle: the kernels are replaced while it lives (see keep_forever)."""
    lib = grader_library()
    for full in [f for b in bases for f in aten_overloads().get(b, ())]:
        name = full.partition("::")[2]
        for key in kernel_keys(full):
            lib.impl(name, key, _blocked(name), False)
    return lib


def keep_forever(handle):
    """Hold a reference to ``handle`` that no Python code can find or drop: a registration
    handle kept this way (it is not tracked by the garbage collector either) lasts as long as
    the process, and the student's code cannot reach it to undo the registration."""
    import ctypes

    ctypes.pythonapi.Py_IncRef(ctypes.py_object(handle))


def quiet_overrides():
    """Let torch give its one-time warning "Overriding a previously registered kernel" here, for
    a registration dropped at once, so that block_operators in a child needs no warnings
    filter (the filter's context manager alone copied a hundred pages of the zygote's memory
    into every child)."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        lib = grader_library()
        lib.impl("_softmax", "CPU", _blocked("_softmax"), False)
    del lib  # the registration ends with its handle


def grader_library():
    """A handle for the grader's kernels on aten operators; its registrations end with it."""
    return torch._C._dispatch_library("IMPL", "aten", "", "<grader>", 0)


@functools.cache
def aten_overloads():
    """{aten base name: ['aten::name.overload', ...]} (the zygote builds it once)."""
    out = {}
    for full in torch._C._dispatch_get_all_op_names():
        ns, _, name = full.partition("::")
        if ns == "aten":
            out.setdefault(name.split(".")[0], []).append(full)
    return out


@functools.cache
def kernel_keys(full):
    """The BLOCK_KEYS for which operator ``full`` has a kernel."""
    has = torch._C._dispatch_has_kernel_for_dispatch_key
    return [key for key in BLOCK_KEYS if has(full, key)]


# operators that checks forbid today (see autograder/judge/policy.py): the zygote looks up their
# kernels once, so blocking them costs each child only the registrations
LIKELY_BLOCKED = ("softmax", "attention", "norm", "nll", "cross_entropy", "logsumexp")


def _blocked(name):
    def kernel(*args, **kwargs):
        raise RuntimeError(f"forbidden operator aten::{name}")

    return kernel


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


class Child:
    """Serves the judge's requests on one socket; ``handle`` also runs in-process for the
    reference (see judge.ReferenceSession), so both paths share this code."""

    def __init__(self, sock=None, namespace=None, blocked=frozenset()):
        self.sock = sock
        self.ns = namespace
        self.blocked = blocked  # operators blocked before this child was forked (see zygote)
        self.sources = []
        self.labels = []  # how messages name each cell (policy.cell_label, sent by the judge)
        self.sim = None  # SimulatedDevice, once a load asks for it (a CPU grader)
        self.device = None  # the device of the request being served

    def serve(self):
        """Each request: one tag byte, with a memfd attached when the judge shares the inputs'
        blob (see sandbox.Session.request), then the frame."""
        while True:
            try:
                tag, fds, _, _ = socket.recv_fds(self.sock, 1, 1)
                if not tag:
                    return
                head, blob = wire.read_frame(self.sock.recv)
                shared = None
                if fds:
                    shared = mmap.mmap(fds[0], 0)
                    os.close(fds[0])
            except (EOFError, OSError, ValueError):
                return
            frame = self.handle(head, shared if shared is not None else blob, shared is not None)
            if frame is None:
                return
            self.sock.sendall(frame)

    def handle(self, head, blob, shared=False):
        """One request frame -> one reply frame (None for 'bye'). ``shared``: ``blob`` is
        memory shared with the judge, and the call's CPU inputs live in it."""
        try:
            header = json.loads(head)
            header, values = wire.decode(head, blob, device=header.get("device"), shared=shared)
        except Exception as e:
            return reply({"ok": False, "error": "bad request: " + short_error(e)})
        op = header.get("op")
        if op == "bye":
            return None
        self.device = header.get("device")
        if op == "load" and header.get("simulate"):
            self.sim = SimulatedDevice()
        if self.sim is not None:
            self.sim.failed, self.sim.drawn, self.sim.moved = None, set(), False
            values = on_sim(values)
        try:
            manual_seed(header.get("seed", 0), header.get("device") or "cpu")
            seeded = torch.default_generator.get_state() if header.get("rng_check") else None
            with default_dtype(header.get("default_dtype")):
                out = getattr(self, "op_" + str(op))(header, values)
            if seeded is not None:
                now = torch.default_generator.get_state()
                out["global_rng_used"] = not torch.equal(seeded, now)
            return reply({"ok": True}, out)
        except BaseException as e:  # student code may raise anything, even SystemExit
            return reply(
                {"ok": False, "error": short_error(e) + cell_location(e, self.sources, self.labels)}
            )

    def student(self):
        """The context the student's code runs in: the simulated device, if any."""
        return self.sim if self.sim is not None else contextlib.nullcontext()

    def device_report(self, *results):
        """What the simulated device saw in the request just run: {"host": a result tensor is
        on the host, "caught": the device error the student's code swallowed, "generators":
        the device types of the generators it drew from, "moved": it moved a CPU tensor to the
        GPU}."""
        if self.sim is None:
            return {}
        host = any(self.sim.on_host(t) for t in flat_tensors(list(results)))
        drawn = sorted(self.sim.drawn)
        return {
            "host": host,
            "caught": self.sim.failed,
            "generators": drawn,
            "moved": self.sim.moved,
        }

    def op_load(self, header, values):
        missing = {str(b) for b in values.get("block") or ()} - self.blocked
        if missing:  # the zygote blocks a check's operators before forking; these it did not
            keep_forever(block_operators(sorted(missing)))
        self.ns = {"__name__": "__main__", "__builtins__": builtins}
        exec(PRELUDE, self.ns)
        self.sources = [str(src) for src in values.get("cells", [])]
        self.labels = [str(label) for label in values.get("labels") or []]
        code = [cell_code(i, src, values.get("code")) for i, src in enumerate(self.sources)]
        errors = []
        for i, src in enumerate(self.sources):
            try:
                with self.student():
                    exec(code[i] or compile(src, cell_name(i), "exec", dont_inherit=True), self.ns)
            except BaseException as e:
                where = cell_location(e, self.sources, self.labels)
                label = self.labels[i] if i < len(self.labels) else f"셀 {i + 1}"
                errors.append(f"{label}: {short_error(e)}{where}")
        for name in values.get("given") or ():
            if callable(self.ns.get(str(name))):
                self.ns[str(name)] = self.given(str(name), self.ns[str(name)])
        return {"errors": errors}

    def given(self, name, own):
        """The student's helper ``name`` answered by the judge instead (a check that grades a
        function calling it takes the helper as given: a mistake in the helper costs only the
        helper's own item). Only data crosses: the call's values go to the judge over this
        child's socket and the result comes back, and so does the backward for the tensors that
        need gradients. No reference code is here. Where the judge cannot answer (a call that
        does not fit the notebook's signature), the student's own ``own`` runs. A module class
        becomes a class of the same name (given_module)."""
        child = self
        if isinstance(own, type) and issubclass(own, torch.nn.Module):
            return given_module(child, name, own)

        def helper(*args, **kwargs):
            tensors = [v for v in [*args, *kwargs.values()] if isinstance(v, torch.Tensor)]
            try:
                return Given.apply(child, name, args, kwargs, None, *tensors)
            except GivenRefused:
                return own(*args, **kwargs)

        helper.__name__ = helper.__qualname__ = name
        return helper

    def ask(self, name, values):
        """One question to the judge about the given helper ``name`` -> its answer's values;
        GivenRefused when the judge could not answer."""
        with torch._C.DisableTorchFunction():  # plain tensors on the wire, as in a reply
            try:
                question = wire.encode({"ok": True, "given": name}, values)
            except Exception as e:
                raise GivenRefused(short_error(e)) from None
            self.sock.sendall(question)
            tag, _, _, _ = socket.recv_fds(self.sock, 1, 1)
            if tag != b"N":
                raise EOFError("the judge stopped answering")
            head, blob = wire.read_frame(self.sock.recv)
            header, out = wire.decode(head, blob, device=self.device)
        if header.get("ok") is not True or "value" not in out:
            raise GivenRefused(str(header.get("error", ""))[:200])
        return out["value"]

    def op_exec(self, header, values):
        """Run a public test cell (code the student saw; the judge holds it) on a copy of the
        cells' namespace, without the simulated device, as on the student's own machine."""
        try:
            exec(compile(str(values["source"]), "<public test>", "exec"), dict(self.ns))
        except Exception as e:
            e.args = (f"{e}{public_line(e, str(values['source']))}",)
            raise
        return {}

    def lookup(self, name):
        if self.ns is None or name not in self.ns:
            raise NameError(f"{name}이(가) 정의되지 않았습니다")
        return self.ns[name]

    def op_has(self, header, values):
        return {"value": self.ns is not None and values["name"] in self.ns}

    def op_call(self, header, values):
        fn = self.lookup(values["name"])
        args, kwargs = values.get("args", ()), values.get("kwargs", {})
        snap, lay = snapshot(args, kwargs), layout(args, kwargs)
        with self.student():
            result = fn(*args, **kwargs)
        out = {"value": to_result(result), "mutated": mutated(snap), "relaid": relaid(lay)}
        out["aliases"] = aliases_input(result, [args, kwargs])
        return dict(out, **self.device_report(result))

    def op_module(self, header, values):
        cls = self.lookup(values["name"])
        device = header.get("device") or "cpu"
        manual_seed(values.get("seed", 0), device)
        with self.student():
            m = cls(**values.get("init_kwargs", {}))
        if not isinstance(m, torch.nn.Module):
            raise TypeError(f"{values['name']}(...) is not a torch.nn.Module")
        # nn.Module's own methods, not overrides: what the module holds, not what it says
        base = torch.nn.Module
        state = {k: v.detach().clone() for k, v in base.state_dict(m).items()}
        base.to(m, device)
        if self.sim is not None:  # .to(device) moves parameters and buffers, nothing else
            self.sim.mark(list(base.parameters(m)) + list(base.buffers(m)), host=False)
        if values.get("state_dict") is not None:
            base.load_state_dict(m, values["state_dict"], strict=True)
        base.train(m, bool(values.get("train", False)))
        grad = bool(values.get("grad", False))
        inputs = list(values.get("inputs", ()))
        kwargs = values.get("input_kwargs", {})
        if grad:
            inputs = [
                x.detach().requires_grad_(True)
                if isinstance(x, torch.Tensor) and x.is_floating_point()
                else x
                for x in inputs
            ]
        snap = snapshot(inputs, kwargs)
        if values.get("forward_seed") is not None:
            manual_seed(values["forward_seed"], device)
        method = values.get("method", "forward")
        with torch.set_grad_enabled(grad), self.student():
            out = None if method is None else getattr(m, str(method))(*inputs, **kwargs)
        result = {"output": to_result(out), "state": to_result(state), "mutated": mutated(snap)}
        after = None
        if grad:
            result["grads"] = to_result(gradients(m, inputs, out, values.get("grad_outputs")))
        if grad and values.get("step_lr") is not None:
            sgd_step(m, float(values["step_lr"]))
            inputs = [x.detach() if isinstance(x, torch.Tensor) else x for x in inputs]
            with torch.no_grad(), self.student():
                after = getattr(m, method)(*inputs, **kwargs)
            result["after_step"] = to_result(after)
        return dict(result, **self.device_report(out, after))


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


def reply(header, values=None):
    try:
        return wire.encode(header, values)
    except Exception as e:
        return wire.encode({"ok": False, "error": "결과를 전송할 수 없습니다: " + short_error(e)})


def child_main(sock, ctl, spec, blocked=frozenset(), handle=None):
    """Runs in the forked child; never returns. ``blocked``: the operators the zygote blocked
    for this child, with the registration ``handle``, which the child keeps for good."""
    try:
        if handle is not None:
            keep_forever(handle)
        ctl.close()
        os.setsid()
        uid = spec.get("uid")
        if uid is not None:
            os.setgroups([])
            os.setgid(uid)
            os.setuid(uid)
        # made here, owned by the sandbox uid (mkdir fails on anything already there): the
        # zygote hands out a child only once the scratch root is empty, so no earlier child
        # can have prepared this path as a symlink, FIFO or locked directory. HOME and TMPDIR
        # point here since the zygote started (set there: an environment change in every
        # child copied a hundred pages of the zygote's memory)
        scratch = scratch_dir(spec["scratch_root"])
        os.mkdir(scratch, 0o700)
        os.chdir(scratch)
        null = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1, 2):
            os.dup2(null, fd)
        os.close(null)
        set_limits(dict(spec.get("limits", {}), uid=uid))
        Child(sock, blocked=blocked).serve()
        os.chdir("/")
        shutil.rmtree(scratch, ignore_errors=True)  # lets the zygote skip the reaper
    except BaseException:
        pass
    finally:
        os._exit(0)


# ----------------------------------------------------------------------------- zygote


def wipe(top, seconds=5.0):
    """Remove ``top`` whatever the child made of it (symlinks, FIFOs, mode-000 or deep trees),
    without following links and without recursion. Gives up after ``seconds`` (a scratch area
    filled with millions of files); the caller then sees it not empty and the judge replaces
    the whole sandbox."""
    stack = [top]
    deadline = time.monotonic() + seconds
    while stack and time.monotonic() < deadline:
        path = stack[-1]
        try:
            if os.path.islink(path) or not os.path.isdir(path):
                os.unlink(path)
                stack.pop()
                continue
            os.chmod(path, 0o700)
            entries = os.listdir(path)
            if entries:
                stack.extend(os.path.join(path, e) for e in entries[:1000])
            else:
                os.rmdir(path)
                stack.pop()
        except OSError:
            stack.pop()


def others_alive():
    """True while the sandbox's pid namespace holds a process other than its init and this
    zygote (kill(-1) reaches exactly those; no /proc needed)."""
    try:
        os.kill(-1, 0)
        return True
    except ProcessLookupError:
        return False
    except PermissionError:
        return True


def reap(uid, root):
    """Kill every process the child left behind, then empty the scratch root (/tmp).

    In the sandbox the zygote kills with kill(-1): every process of its pid namespace but the
    namespace's init and itself (as root it holds CAP_KILL for this). Without a sandbox
    (unsafe mode) only the child's session is killed, by the caller. The scratch root is
    emptied by a helper that drops to the sandbox uid, owner of what the child made.
    """
    deadline = time.monotonic() + 2.0
    while CONFIG.get("sandboxed") and others_alive() and time.monotonic() < deadline:
        try:
            os.kill(-1, signal.SIGKILL)
        except OSError:
            pass
        time.sleep(0.002)  # killed processes stay as zombies until the sandbox's init reaps them
    if not root or not os.listdir(root):
        return
    pid = os.fork()
    if pid == 0:
        try:
            if uid is not None:
                os.setgroups([])
                os.setgid(uid)
                os.setuid(uid)
            for name in os.listdir(root):
                wipe(os.path.join(root, name))
        finally:
            os._exit(0)
    os.waitpid(pid, 0)


def without_dynamo():
    """Let torch's own functions marked ``torch._compile._disable_dynamo`` (e.g. the meta-device
    decompositions in torch._refs that the notebooks' public tests reach) run without importing
    torch._dynamo: their wrapper imports it on first call (2-3 s, and 70 MB more memory that
    every forked child copies the page tables of: a third of a fork's cost) only to build a
    "disable compilation" wrapper, which is a no-op when nothing compiles. The wrapper caches
    what it built on the wrapped function; here that cache is the function itself. A student's
    own torch.compile still imports dynamo in its child."""
    from torch._compile import _disable_dynamo

    inner = _disable_dynamo(len).__code__
    for f in gc.get_objects():
        if type(f) is types.FunctionType and f.__code__ is inner:
            fn = f.__closure__[inner.co_freevars.index("fn")].cell_contents
            if getattr(fn, "__dynamo_disable", None) is None:
                fn.__dynamo_disable = fn


def warm_up(gpu=False):
    """Pay torch's lazy start-up once here, not in every forked child: the first autograd and
    nn calls, and the first meta-device kernel (the notebooks' public tests use "meta"). With a
    GPU, no backward pass: autograd's first one starts a thread per device, which initialises
    the CUDA driver, and a child forked after that gets "CUDA error: initialization error" from
    its first CUDA call (seen on an H100)."""
    without_dynamo()
    quiet_overrides()
    x = torch.ones(2, 3, requires_grad=True)
    y = torch.nn.functional.linear(x / 2.0, torch.ones(4, 3)).softmax(-1)
    y = torch.where(y > 0, y.exp() - y.amax(-1, keepdim=True), y).masked_fill(y < 0, 0.0)
    if not gpu:
        y.sum().backward()
    torch.ones(2, 3, device="meta").softmax(-1).triu(1)
    head, blob = wire.encode_parts({"op": "call"}, {"x": [x.detach(), 1, 2.0, "s"]})
    wire.decode(head, blob)
    wire.decode(head, bytearray(blob), shared=True)  # a call's inputs, in shared memory
    for base, overloads in aten_overloads().items():
        if any(word in base for word in LIKELY_BLOCKED):
            for full in overloads:
                kernel_keys(full)


def cpu_build_seeding():
    """On a CPU-only torch build, make torch.manual_seed seed just the CPU generator: the CUDA,
    XPU and MTIA seeding it would queue can never run there, and queueing them formats a stack
    trace per call (~3 ms in every child whose notebook calls torch.manual_seed)."""
    if torch.version.cuda is None and torch.version.xpu is None:
        torch.manual_seed = torch.random.manual_seed = manual_seed


def huge_pages(regions):
    """Back the zygote's private anonymous memory (``regions``: [[start, end], ...], Python's
    and malloc's heaps, read by the judge from /proc, which the sandbox lacks) with transparent
    huge pages (MADV_COLLAPSE, Linux 6.1+): fork then copies one page-table entry per 2 MiB
    instead of 512, and exit frees as few (fork and exit with torch loaded measured 6.9 -> 3.2
    ms). A child's first write to a shared huge page splits it and copies 4 KiB, as before.
    Best effort: an older kernel, or THP set to "never", leaves the memory as it is."""
    import ctypes

    libc = c_library()
    libc.madvise.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
    madv_hugepage, madv_collapse, huge = 14, 25, 1 << 21
    for start, end in regions:
        start, end = -(-int(start) // huge) * huge, int(end) // huge * huge
        if end > start and libc.madvise(start, end - start, madv_hugepage) == 0:
            libc.madvise(start, end - start, madv_collapse)


def scratch_dir(root):
    """The folder every child works in (its HOME and TMPDIR), made by the child."""
    return os.path.join(root, "work")


def zygote():
    torch.set_num_threads(1)
    cpu_build_seeding()
    warm_up(gpu=CONFIG.get("gpu", False))
    root = CONFIG.get("scratch_root", "/tmp")
    os.environ.update(HOME=scratch_dir(root), TMPDIR=scratch_dir(root))
    for name in os.listdir(root):  # e.g. torchinductor_* made by the imports above: a non-empty
        wipe(os.path.join(root, name))  # scratch root would send every check down the reaper path
    gc.collect()  # children inherit torch's objects as frozen: their collections skip them
    gc.freeze()  # (and so do not copy the pages they live on)
    ctl = socket.socket(fileno=int(CONFIG["ctl_fd"]))
    ctl.send(json.dumps({"op": "ready", "pid": os.getpid()}).encode())
    held = [frozenset(), None]  # the operators blocked here for the next child, and the handle
    while True:
        try:
            msg, fds, _, _ = socket.recv_fds(ctl, 65536, 1)
        except OSError:
            return
        if not msg:
            return
        spec = json.loads(msg)
        if spec.get("op") == "huge" and not fds:
            huge_pages(spec.get("regions", []))
            continue
        if spec.get("op") != "spawn" or len(fds) != 1:
            for fd in fds:
                os.close(fd)
            continue
        spec["scratch_root"] = CONFIG.get("scratch_root", "/tmp")
        sock = socket.socket(fileno=fds[0])
        block_for_child(spec, held)
        pid = os.fork()
        if pid == 0:
            child_main(sock, ctl, spec, *held)
        sock.close()
        spec["pid"] = pid
        # the judge's own clock ends the check (and asks for the kill); this one is the backstop
        deadline = time.monotonic() + float(spec.get("wall_s", 30)) + BACKSTOP_S
        status = wait_child(pid, ctl, deadline, functools.partial(kill_child, pid, spec))
        if status != "exit" or left_behind(spec):
            kill_child(pid, spec)
            reap(spec.get("uid"), spec["scratch_root"])
            if left_behind(spec):
                status = "dirty"  # the judge replaces this sandbox
        ctl.send(json.dumps({"op": "done", "status": status}).encode())


def block_for_child(spec, held):
    """Make the zygote's blocked operators (``held``: [names, registration handle], updated in
    place) those of the child it forks next (``spec["block"]``). Registering here, where
    nothing else runs, spares the child the registrations (each writes a dozen pages of the
    dispatcher's tables: a copy of each in every child) and costs the zygote little, a few
    times per submission, as the checks' forbidden sets change. On an error nothing is blocked
    here and the child blocks its own (Child.op_load)."""
    want = frozenset(str(b) for b in spec.get("block") or ())
    if want != held[0]:
        held[:] = [frozenset(), None]  # the registrations end with their handle
        try:
            held[:] = [want, block_operators(sorted(want)) if want else None]
        except Exception:
            pass


def left_behind(spec):
    """True when the finished child left a process, a file in the scratch area, or a System V
    IPC object (they outlive processes; only a new sandbox has none)."""
    if CONFIG.get("sandboxed"):
        if others_alive() or ipc_objects():
            return True
    else:
        try:
            os.killpg(spec.get("pid", -1), 0)
            return True
        except OSError:
            pass
    root = CONFIG.get("scratch_root", "/tmp")
    return bool(os.listdir(root))


@functools.cache
def c_library():
    """The C library, loaded once in the zygote (ipc_objects asks after every child)."""
    import ctypes

    return ctypes.CDLL(None, use_errno=True)


def ipc_objects():
    """Number of System V shared memory segments, message queues and semaphore sets in the
    sandbox's IPC namespace (the *_INFO calls: no /proc needed, no permission either)."""
    import ctypes

    libc = c_library()
    info = (ctypes.c_int * 16)()
    total = 0
    # (call, IPC_INFO command, index of the count in the returned struct)
    for call, cmd, index in ((libc.shmctl, 14, 0), (libc.msgctl, 12, 0), (libc.semctl, 19, 7)):
        if call(0, cmd, info) >= 0:
            total += info[index]
    return total


def kill_child(pid, spec):
    """SIGKILL the child and everything it started. The child is reaped first: as a zombie it
    would still count as alive, and reap would wait its whole 2 s for it."""
    try:
        os.killpg(pid, signal.SIGKILL)
    except OSError:
        pass
    collect(pid)
    reap(spec.get("uid"), None)


def collect(pid):
    """waitpid(pid) -> its status, or None when it was reaped already."""
    try:
        return os.waitpid(pid, 0)[1]
    except ChildProcessError:
        return None


BACKSTOP_S = 2.0  # seconds the zygote waits past a check's wall-clock limit before killing


def wait_child(pid, ctl, deadline, kill):
    pidfd = os.pidfd_open(pid)
    try:
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                kill()
                return "timeout"
            ready, _, _ = select.select([pidfd, ctl], [], [], left)
            if pidfd in ready:
                st = collect(pid) or 0
                if os.WIFSIGNALED(st):
                    return f"signal {os.WTERMSIG(st)}"
                return "exit"
            if ctl in ready:
                msg = ctl.recv(65536)
                if not msg:
                    kill()
                    raise SystemExit(0)
                if json.loads(msg).get("op") == "kill":  # the judge's deadline passed
                    kill()
                    return "timeout"
    finally:
        os.close(pidfd)


if __name__ == "__main__":
    try:
        zygote()
    except BaseException:
        traceback.print_exc()
        sys.exit(1)
