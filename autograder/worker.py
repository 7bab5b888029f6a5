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
"""

import builtins
import functools
import json
import os
import resource
import select
import shutil
import signal
import socket
import sys
import tempfile
import time
import traceback

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
except ImportError:  # imported as autograder.worker by the tests
    from autograder import wire  # noqa: E402

PRELUDE = (
    "import math\nimport numpy as np\nimport torch\nimport torch.nn as nn\n"
    "import torch.nn.functional as F\n"
)


# ----------------------------------------------------------------------------- child


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
    if value is None or type(value) in (bool, int, float, str):
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


def flat_tensors(value):
    if isinstance(value, torch.Tensor):
        return [value]
    if isinstance(value, list | tuple):
        return [t for v in value for t in flat_tensors(v)]
    if isinstance(value, dict):
        return [t for v in value.values() for t in flat_tensors(v)]
    return []


def cell_location(e, sources):
    """' (셀 2, 5행: `x.sub_(m)`)' for the innermost frame of the student's cells, else ''."""
    where = ""
    for frame in traceback.extract_tb(e.__traceback__):
        name = frame.filename
        if name.startswith("<solution cell ") and name.endswith(">"):
            n = int(name[len("<solution cell ") : -1])
            lines = sources[n - 1].splitlines() if 0 < n <= len(sources) else []
            line = lines[frame.lineno - 1].strip() if 0 < (frame.lineno or 0) <= len(lines) else ""
            where = f" (셀 {n}, {frame.lineno}행: `{line[:120]}`)"
    return where


def snapshot(args, kwargs):
    """{label: clone} of every tensor argument (to detect in-place changes by the student)."""
    items = [(f"인자 {i}", a) for i, a in enumerate(args)] + [(k, v) for k, v in kwargs.items()]
    out = {}
    for label, value in items:
        for j, t in enumerate(flat_tensors(value)):
            if t.device.type != "meta":
                out[label if j == 0 else f"{label}[{j}]"] = (t, t.detach().clone())
    return out


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


class Child:
    """Serves the judge's requests on one socket; ``handle`` also runs in-process for the
    reference (see judge.ReferenceSession), so both paths share this code."""

    def __init__(self, sock=None, namespace=None):
        self.sock = sock
        self.ns = namespace
        self.sources = []

    def serve(self):
        while True:
            try:
                head, blob = wire.read_frame(self.sock.recv)
            except (EOFError, OSError):
                return
            frame = self.handle(head, blob)
            if frame is None:
                return
            self.sock.sendall(frame)

    def handle(self, head, blob):
        """One request frame -> one reply frame (None for 'bye')."""
        try:
            header = json.loads(head)
            header, values = wire.decode(head, blob, device=header.get("device"))
        except Exception as e:
            return reply({"ok": False, "error": "bad request: " + short_error(e)})
        op = header.get("op")
        if op == "bye":
            return None
        try:
            torch.manual_seed(int(header.get("seed", 0)))
            out = getattr(self, "op_" + str(op))(header, values)
            return reply({"ok": True}, out)
        except BaseException as e:  # student code may raise anything, even SystemExit
            return reply({"ok": False, "error": short_error(e) + cell_location(e, self.sources)})

    def op_load(self, header, values):
        self.ns = {"__name__": "__main__", "__builtins__": builtins}
        exec(compile(PRELUDE, "<prelude>", "exec"), self.ns)
        self.sources = [str(src) for src in values.get("cells", [])]
        errors = []
        for i, src in enumerate(self.sources):
            try:
                exec(compile(src, f"<solution cell {i + 1}>", "exec"), self.ns)
            except BaseException as e:
                errors.append(f"cell {i + 1}: {short_error(e)}{cell_location(e, self.sources)}")
        return {"errors": errors}

    def lookup(self, name):
        if self.ns is None or name not in self.ns:
            raise NameError(f"{name}이(가) 정의되지 않았습니다")
        return self.ns[name]

    def op_has(self, header, values):
        return {"value": self.ns is not None and values["name"] in self.ns}

    def op_call(self, header, values):
        fn = self.lookup(values["name"])
        args, kwargs = values.get("args", ()), values.get("kwargs", {})
        snap = snapshot(args, kwargs)
        result = fn(*args, **kwargs)
        return {"value": to_result(result), "mutated": mutated(snap)}

    def op_module(self, header, values):
        cls = self.lookup(values["name"])
        device = header.get("device") or "cpu"
        torch.manual_seed(int(values.get("seed", 0)))
        m = cls(**values.get("init_kwargs", {}))
        if not isinstance(m, torch.nn.Module):
            raise TypeError(f"{values['name']}(...) is not a torch.nn.Module")
        state = {k: v.detach().clone() for k, v in m.state_dict().items()}
        m = m.to(device)
        if values.get("state_dict") is not None and device != "meta":
            m.load_state_dict(values["state_dict"], strict=True)
        m.train(bool(values.get("train", False)))
        grad = bool(values.get("grad", False)) and device != "meta"
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
            torch.manual_seed(int(values["forward_seed"]))
        with torch.set_grad_enabled(grad):
            out = getattr(m, values.get("method") or "forward")(*inputs, **kwargs)
        result = {"output": to_result(out), "state": to_result(state), "mutated": mutated(snap)}
        if grad:
            result["grads"] = to_result(gradients(m, inputs, out, values.get("grad_outputs")))
        return result


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


def reply(header, values=None):
    try:
        return wire.encode(header, values)
    except Exception as e:
        return wire.encode({"ok": False, "error": "결과를 전송할 수 없습니다: " + short_error(e)})


def child_main(sock, ctl, spec):
    """Runs in the forked child; never returns."""
    try:
        ctl.close()
        os.setsid()
        uid = spec.get("uid")
        if uid is not None:
            os.setgroups([])
            os.setgid(uid)
            os.setuid(uid)
        # a fresh, unguessable dir (mkdtemp: O_EXCL, 0700) -- never a path a previous child
        # could have prepared as a symlink, FIFO or locked directory
        scratch = tempfile.mkdtemp(prefix="c", dir=spec["scratch_root"])
        os.chdir(scratch)
        os.environ.update(HOME=scratch, TMPDIR=scratch)
        null = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1, 2):
            os.dup2(null, fd)
        os.close(null)
        set_limits(dict(spec.get("limits", {}), uid=uid))
        Child(sock).serve()
        os.chdir("/")
        shutil.rmtree(scratch, ignore_errors=True)  # lets the zygote skip the reaper
    except BaseException:
        pass
    finally:
        os._exit(0)


# ----------------------------------------------------------------------------- zygote


def wipe(top, budget=200_000):
    """Remove ``top`` whatever the child made of it (symlinks, FIFOs, mode-000 or deep trees),
    without following links and without recursion."""
    stack = [top]
    while stack and budget > 0:
        budget -= 1
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


def reap(zygote_pid, uid, root):
    """Kill every process the child left behind and empty the scratch root (/tmp).

    Runs in a helper forked from the zygote. With a sandbox uid the helper drops to that uid, so
    the kernel lets it signal only the child's processes. Without one (unprivileged sandbox) it
    spares pid 1 and the zygote. Without a sandbox at all it only kills the child's session.
    """
    pid = os.fork()
    if pid == 0:
        try:
            if uid is not None:
                os.setgroups([])
                os.setgid(uid)
                os.setuid(uid)
            keep = {1, zygote_pid, os.getpid()}
            # until every other process is gone from /proc (killed ones stay there as zombies
            # until the sandbox's init reaps them), for at most 2 s
            deadline = time.monotonic() + 2.0
            while CONFIG.get("sandboxed") and time.monotonic() < deadline:
                victims = [
                    int(p) for p in os.listdir("/proc") if p.isdigit() and int(p) not in keep
                ]
                if not victims:
                    break
                for p in victims:
                    try:
                        os.kill(p, signal.SIGKILL)
                    except OSError:
                        pass
                time.sleep(0.002)

            for name in os.listdir(root) if root else []:
                wipe(os.path.join(root, name))
        finally:
            os._exit(0)
    os.waitpid(pid, 0)


def warm_up():
    """Pay torch's lazy start-up once here, not in every forked child: the meta-device kernels
    and the torch._dynamo import that meta reference ops trigger on first use (~1.7 s), and the
    first autograd/nn calls."""
    for device in ("meta", "cpu"):
        x = torch.ones(2, 3, device=device, requires_grad=device == "cpu")
        y = torch.nn.functional.linear(x / 2.0, torch.ones(4, 3, device=device)).softmax(-1)
        y = torch.where(y > 0, y.exp() - y.amax(-1, keepdim=True), y).masked_fill(y < 0, 0.0)
        if device == "cpu":
            y.sum().backward()


def zygote():
    torch.set_num_threads(1)
    warm_up()
    root = CONFIG.get("scratch_root", "/tmp")
    for name in os.listdir(root):  # e.g. torchinductor_* made by the imports above: a non-empty
        wipe(os.path.join(root, name))  # scratch root would send every check down the reaper path
    ctl = socket.socket(fileno=int(CONFIG["ctl_fd"]))
    me = os.getpid()
    ctl.send(json.dumps({"op": "ready", "pid": me}).encode())
    while True:
        try:
            msg, fds, _, _ = socket.recv_fds(ctl, 65536, 1)
        except OSError:
            return
        if not msg:
            return
        spec = json.loads(msg)
        if spec.get("op") != "spawn" or len(fds) != 1:
            for fd in fds:
                os.close(fd)
            continue
        spec["scratch_root"] = CONFIG.get("scratch_root", "/tmp")
        sock = socket.socket(fileno=fds[0])
        pid = os.fork()
        if pid == 0:
            child_main(sock, ctl, spec)
        sock.close()
        spec["pid"] = pid
        deadline = time.monotonic() + float(spec.get("wall_s", 30))
        status = wait_child(pid, ctl, deadline, functools.partial(kill_child, pid, me, spec))
        if status != "exit" or left_behind(me, spec):
            kill_child(pid, me, spec)
            reap(me, spec.get("uid"), spec["scratch_root"])
        ctl.send(json.dumps({"op": "done", "status": status}).encode())


def left_behind(me, spec):
    """True when the finished child left a process or a file in the scratch area."""
    if CONFIG.get("sandboxed"):
        if any(p.isdigit() and int(p) not in (1, me) for p in os.listdir("/proc")):
            return True
    else:
        try:
            os.killpg(spec.get("pid", -1), 0)
            return True
        except OSError:
            pass
    root = CONFIG.get("scratch_root", "/tmp")
    return bool(os.listdir(root))


def kill_child(pid, me, spec):
    """SIGKILL the child and everything it started (the zygote itself may lack the right)."""
    if spec.get("uid") is None:
        try:
            os.killpg(pid, signal.SIGKILL)
        except OSError:
            pass
    reap(me, spec.get("uid"), None)


def wait_child(pid, ctl, deadline, kill):
    pidfd = os.pidfd_open(pid)
    try:
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                kill()
                os.waitpid(pid, 0)
                return "timeout"
            ready, _, _ = select.select([pidfd, ctl], [], [], left)
            if pidfd in ready:
                _, st = os.waitpid(pid, 0)
                if os.WIFSIGNALED(st):
                    return f"signal {os.WTERMSIG(st)}"
                return "exit"
            if ctl in ready:
                msg = ctl.recv(65536)
                if not msg:
                    kill()
                    raise SystemExit(0)
                if json.loads(msg).get("op") == "kill":
                    kill()
    finally:
        os.close(pidfd)


if __name__ == "__main__":
    try:
        zygote()
    except BaseException:
        traceback.print_exc()
        sys.exit(1)
