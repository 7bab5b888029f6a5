"""The child: one forked process per check, serving the judge's requests on its own socket.

Forked by the zygote (zygote.py), it drops to the sandbox uid, applies rlimits, silences
stdout/stderr, then serves ``load`` (exec the student's solution cells), ``call``, ``module``,
``has``, ``exec`` (a public test cell) and ``bye`` (see protocol.py). Everything it sends back is
data (wire.py) and, where the judge cannot measure it itself, a hint that can only cost points.
Child.handle also runs in-process on the reference solutions (judge.sessions.ReferenceSession).
"""

import builtins
import contextlib
import json
import marshal
import mmap
import os
import resource
import shutil
import socket
import traceback
import types

import torch

from autograder.sandboxed import wire
from autograder.sandboxed.given import Given, GivenRefused, given_module
from autograder.sandboxed.operators import block_operators, keep_forever
from autograder.sandboxed.simulated_gpu import SimulatedDevice, on_sim
from autograder.sandboxed.tensors import (
    aliases_input,
    default_dtype,
    flat_tensors,
    gradients,
    layout,
    manual_seed,
    mutated,
    relaid,
    sgd_step,
    short_error,
    snapshot,
    to_result,
)

PRELUDE = compile(  # compiled once, in the zygote
    "import math\nimport numpy as np\nimport torch\nimport torch.nn as nn\n"
    "import torch.nn.functional as F\n",
    "<prelude>",
    "exec",
)


def cell_name(index):
    """The file name of cell ``index``'s code, by which tracebacks name the cell."""
    return f"<solution cell {index + 1}>"


def cell_code(index, source, compiled):
    """The judge's compiled cell ``index`` (``compiled[index]``: a marshalled code object as a
    uint8 tensor, see judge.wire_code), or None: the cell is compiled here from ``source``.
    A load for a GPU decodes every tensor of the request onto it, the code's bytes too."""
    if not isinstance(compiled, list) or index >= len(compiled):
        return None
    data = compiled[index]
    if not isinstance(data, torch.Tensor) or data.dtype != torch.uint8:
        return None
    code = marshal.loads(data.cpu().numpy().tobytes())
    ok = isinstance(code, types.CodeType) and code.co_filename == cell_name(index)
    return code if ok else None


def set_limits(limits, sandboxed):
    """The rlimits of a child (``limits``: SandboxLimits.child() plus its uid); ``sandboxed``: it
    runs in bubblewrap (without, RLIMIT_NPROC would count every process of this user)."""

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
    if nproc is not None and not sandboxed:
        nproc = None  # no sandbox: the limit would count every process of this user
    elif nproc is not None and limits.get("uid") is None:
        # unprivileged sandbox: the count covers this sandbox's processes and threads only
        nproc += sum(len(os.listdir(f"/proc/{p}/task")) for p in os.listdir("/proc") if p.isdigit())
    if nproc is not None:
        resource.setrlimit(resource.RLIMIT_NPROC, (int(nproc), int(nproc)))


def cell_location(e, sources, labels=(), editable=()):
    """' (`f` 셀, 5행: `x.sub_(m)`)' for the innermost frame of the student's cells (named by
    the judge's ``labels``; of the cells ``editable`` marks, when it is given: an error inside a
    given cell is located at the student's line that called it), else ''."""
    where = ""
    for frame in traceback.extract_tb(e.__traceback__):
        name = frame.filename
        if name.startswith("<solution cell ") and name.endswith(">"):
            n = int(name[len("<solution cell ") : -1])
            if editable and not (0 < n <= len(editable) and editable[n - 1]):
                continue
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


class Child:
    """Serves the judge's requests on one socket; ``handle`` also runs in-process for the
    reference (see judge.ReferenceSession), so both paths share this code."""

    def __init__(self, sock=None, namespace=None, blocked=frozenset()):
        self.sock = sock
        self.ns = namespace
        self.blocked = blocked  # operators blocked before this child was forked (see zygote)
        self.sources = []
        self.labels = []  # how messages name each cell (policy.cell_label, sent by the judge)
        self.editable = []  # which cells are the student's (the judge's; [] for all)
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
                {
                    "ok": False,
                    "error": short_error(e)
                    + cell_location(e, self.sources, self.labels, self.editable),
                }
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
        self.editable = [bool(x) for x in values.get("editable") or []]
        code = [cell_code(i, src, values.get("code")) for i, src in enumerate(self.sources)]
        errors = []
        for i, src in enumerate(self.sources):
            try:
                with self.student():
                    exec(code[i] or compile(src, cell_name(i), "exec", dont_inherit=True), self.ns)
            except BaseException as e:
                where = cell_location(e, self.sources, self.labels, self.editable)
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
        set_limits(dict(spec.get("limits", {}), uid=uid), spec.get("sandboxed", False))
        Child(sock, blocked=blocked).serve()
        os.chdir("/")
        shutil.rmtree(scratch, ignore_errors=True)  # lets the zygote skip the reaper
    except BaseException:
        pass
    finally:
        os._exit(0)


def scratch_dir(root):
    """The folder every child works in (its HOME and TMPDIR), made by the child."""
    return os.path.join(root, "work")
