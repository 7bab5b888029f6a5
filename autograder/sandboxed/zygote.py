"""The zygote: a warm process inside the sandbox with torch imported, forking one child per check.

It waits on the control socket for ``spawn`` messages carrying one file descriptor (a fresh
socket to the judge), blocks the check's forbidden operators, forks a child, waits for it with a
wall-clock deadline, kills everything the child left behind, wipes its scratch directory and
reports ``done`` (see protocol.py, "judge <-> zygote"). Started by boot.py.
"""

import functools
import gc
import json
import os
import select
import signal
import socket
import time
import types

import torch

from autograder.sandboxed import wire
from autograder.sandboxed.child import child_main, scratch_dir
from autograder.sandboxed.operators import (
    LIKELY_BLOCKED,
    aten_overloads,
    block_operators,
    kernel_keys,
    quiet_overrides,
)
from autograder.sandboxed.tensors import manual_seed


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


def reap(uid, root, sandboxed):
    """Kill every process the child left behind, then empty the scratch root (/tmp).

    In the sandbox the zygote kills with kill(-1): every process of its pid namespace but the
    namespace's init and itself (as root it holds CAP_KILL for this). Without a sandbox
    (unsafe mode) only the child's session is killed, by the caller. The scratch root is
    emptied by a helper that drops to the sandbox uid, owner of what the child made.
    """
    deadline = time.monotonic() + 2.0
    while sandboxed and others_alive() and time.monotonic() < deadline:
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


def main(config):
    """Serve the control socket (``config``: ctl_fd, scratch_root, sandboxed, gpu; see
    judge.sandbox) until the judge closes it."""
    torch.set_num_threads(1)
    cpu_build_seeding()
    warm_up(gpu=config.get("gpu", False))
    root = config.get("scratch_root", "/tmp")
    os.environ.update(HOME=scratch_dir(root), TMPDIR=scratch_dir(root))
    for name in os.listdir(root):  # e.g. torchinductor_* made by the imports above: a non-empty
        wipe(os.path.join(root, name))  # scratch root would send every check down the reaper path
    gc.collect()  # children inherit torch's objects as frozen: their collections skip them
    gc.freeze()  # (and so do not copy the pages they live on)
    ctl = socket.socket(fileno=int(config["ctl_fd"]))
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
        spec["scratch_root"], spec["sandboxed"] = root, bool(config.get("sandboxed"))
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
            reap(spec.get("uid"), spec["scratch_root"], spec["sandboxed"])
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
    if spec["sandboxed"]:
        if others_alive() or ipc_objects():
            return True
    else:
        try:
            os.killpg(spec.get("pid", -1), 0)
            return True
        except OSError:
            pass
    return bool(os.listdir(spec["scratch_root"]))


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
    reap(spec.get("uid"), None, spec["sandboxed"])


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
