"""A judge's sandbox: its limits, its lifecycle, and the sessions with the children it forks.

One :class:`Sandbox` = one bwrap container holding a warm zygote (sandboxed/zygote.py) with torch
imported.
For every check the judge opens a :class:`Session`: the zygote forks a child that gets its own
socket to the judge; the judge talks to it with a deadline and never trusts its exit status.
"""

import fcntl
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from traitlets import Float, Integer
from traitlets.config import Configurable

from autograder.judge.bwrap import (
    INSIDE,
    SandboxUnavailable,
    bwrap_command,
    check_bwrap,
    gpu_nodes,
)
from autograder.sandboxed.protocol import Evidence, child_reply

LAUNCHER = ThreadPoolExecutor(max_workers=1, thread_name_prefix="sandbox-launcher")


class WorkerError(Exception):
    """The worker crashed, hung, exited or sent something malformed."""


class WorkerCrashed(WorkerError):
    """The child died (crash, exit, out of memory/CPU) or sent a malformed reply."""


class WorkerTimeout(WorkerError):
    """The child did not answer within its wall-clock limit."""


class StudentRaised(WorkerError):
    """The student's code raised an exception (the child is fine and answered)."""


class SandboxLimits(Configurable):
    """Limits of one check (one forked child), configurable in nbgrader_config.py, e.g.
    ``c.SandboxLimits.wall_s = 60``; the batch command's --wall overrides wall_s."""

    wall_s = Float(30.0, help="Wall clock (s) for one check, then its child is killed.").tag(
        config=True
    )
    cpu_s = Integer(20, help="RLIMIT_CPU (s) of the child.").tag(config=True)
    memory_bytes = Integer(
        3 << 30, help="RLIMIT_DATA of the child (includes the ~0.25 GiB of torch)."
    ).tag(config=True)
    nproc = Integer(16, help="RLIMIT_NPROC: processes + threads of the child's uid.").tag(
        config=True
    )
    file_bytes = Integer(16 << 20, help="RLIMIT_FSIZE: largest file the child may write.").tag(
        config=True
    )
    open_files = Integer(64, help="RLIMIT_NOFILE of the child.").tag(config=True)
    tmpfs_bytes = Integer(64 << 20, help="Size of the sandbox's /tmp.").tag(config=True)
    result_bytes = Integer(64 << 20, help="Largest reply the judge accepts.").tag(config=True)
    start_s = Float(180.0, help="Time allowed for a sandbox to start (imports torch).").tag(
        config=True
    )

    def child(self):
        """The limits the worker applies to each child (a plain dict for the wire)."""
        keys = ("cpu_s", "memory_bytes", "nproc", "file_bytes", "open_files")
        return {k: getattr(self, k) for k in keys}

    def as_dict(self):
        return {k: getattr(self, k) for k in self.trait_names(config=True)}


class Session:
    """One forked child talking to the judge over its own socket, with a deadline."""

    def __init__(self, sandbox, sock, wall_s):
        self.sandbox, self.sock, self.wall_s = sandbox, sock, wall_s
        self.deadline = time.monotonic() + wall_s

    def _recv(self, n):
        left = self.deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError
        self.sock.settimeout(left)
        return self.sock.recv(n)

    def request(self, header, values=None, answer=None):
        """Send one request -> the validated reply, a protocol.ChildReply. ``answer(name,
        values) -> frame``: the judge's answers to the questions the child asks about a given
        helper on the way (see sandboxed.given); without it a question ends the request.

        The tensors of a call travel in a memfd that the child maps and computes on (CPU
        inputs are views of it); after the reply, the judge reads the memfd back: the blob keys
        of the input tensors whose bytes the student's code changed in place are the reply's
        ``evidence.changed``. The judge sees this itself; nothing the child says enters it.
        """
        from autograder.sandboxed import wire  # imports torch; kept out of import for start-up

        head, sent = wire.encode_parts(header, values)
        fd = None
        try:
            self.sock.settimeout(max(0.01, self.deadline - time.monotonic()))
            if sent and header.get("op") in ("call", "module"):
                fd = os.memfd_create("inputs", os.MFD_CLOEXEC)
                view = memoryview(sent)
                while view:
                    view = view[os.write(fd, view) :]
                socket.send_fds(self.sock, [b"F"], [fd])
                self.sock.sendall(wire.frame(head, b""))
            else:
                self.sock.sendall(b"N" + wire.frame(head, sent))
            head, blob = wire.read_frame(self._recv, max_blob=self.sandbox.limits.result_bytes)
            while answer is not None and wire.is_question(head):
                self.sock.sendall(b"N" + answer(head, blob))
                head, blob = wire.read_frame(self._recv, max_blob=self.sandbox.limits.result_bytes)
        except TimeoutError as e:
            raise WorkerTimeout(
                f"시간 제한({self.wall_s:g}초)을 넘었습니다 (time limit exceeded)"
            ) from e
        except (EOFError, OSError) as e:
            raise WorkerCrashed(
                "학생 코드를 실행하던 프로세스가 비정상 종료했습니다 "
                "(worker crashed, exited or ran out of memory/CPU)"
            ) from e
        except wire.WireError as e:
            raise WorkerCrashed(f"잘못된 형식의 결과입니다 (malformed result: {e})") from e
        finally:
            after = os.pread(fd, len(sent), 0) if fd is not None else sent
            if fd is not None:
                os.close(fd)
        _, values = parse_reply(head, blob)
        changed = wire.changed_tensors(sent, after) if fd is not None else []
        return child_reply(header["op"], values, Evidence(tuple(changed)))


def zygote_pid(pid):
    """The host pid of the zygote started as ``pid`` (bwrap, whose last descendant the zygote
    is; or the zygote itself); None if /proc cannot tell."""
    while True:
        try:
            children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
        except OSError:
            return None
        if not children:
            return int(pid)
        pid = children[-1]


def anonymous_regions(pid):
    """[[start, end], ...]: the private anonymous memory (Python's and malloc's heaps) of the
    zygote started as ``pid`` (see zygote_pid), read here from /proc, which the sandbox does
    not have; [] if unreadable. The zygote backs these with huge pages (zygote.huge_pages)."""
    try:
        maps = Path(f"/proc/{zygote_pid(pid)}/maps").read_text().splitlines()
    except OSError:
        return []
    regions = []
    for line in maps:
        fields = line.split()
        private_rw = fields[1].startswith("rw") and fields[1][3] == "p"
        if private_rw and (len(fields) < 6 or fields[5] == "[heap]"):
            regions.append([int(x, 16) for x in fields[0].split("-")])
    return regions


def parse_reply(head, blob):
    """A worker's reply frame -> (header, values); StudentRaised when it reports an error."""
    from autograder.sandboxed import wire

    try:
        reply, values = wire.decode(head, blob)
    except wire.WireError as e:
        raise WorkerCrashed(f"잘못된 형식의 결과입니다 (malformed result: {e})") from e
    if reply.get("ok") is not True:
        err = reply.get("error")
        raise StudentRaised(err[:600] if isinstance(err, str) else "unknown error")
    return reply, values


UIDS = range(61000, 62000)  # sandbox uids (as root): one per sandbox alive on this machine
UID_LOCKS = Path("/run/lock") if os.path.isdir("/run/lock") else Path(tempfile.gettempdir())


def uid_lock_path(uid):
    return UID_LOCKS / f"autograder-uid-{uid}.lock"


def claim_uid(first):
    """(uid, lock file) for a sandbox uid that no other sandbox on this machine holds, whichever
    engine runs it: the first uid from ``first`` on whose lock file this process gets an
    exclusive flock. The lock lasts as long as the file stays open (or the process lives)."""
    order = [u for u in UIDS if u >= first] + [u for u in UIDS if u < first]
    for uid in order:
        f = open(uid_lock_path(uid), "a")
        try:
            fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return uid, f
        except OSError:
            f.close()
    raise SandboxUnavailable(f"every sandbox uid {UIDS.start}-{UIDS.stop - 1} is in use")


def uid_in_use(uid):
    """True while some sandbox holds ``uid`` (its lock file is locked)."""
    try:
        with open(uid_lock_path(uid), "a") as f:
            fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return False
    except OSError:
        return True


class Sandbox:
    """A bwrap container with a warm zygote; restarted on demand after a failure."""

    def __init__(self, slot=0, limits=None, unsafe=False, uid_base=61000, tmp_root=None):
        """``tmp_root``: where the sandbox's own folder goes (the system's temporary folder by
        default); a judge passes a folder its engine removes, as a SIGKILLed judge cannot."""
        self.slot = slot
        self.tmp_root = tmp_root
        self.limits = limits or SandboxLimits()
        self.unsafe = unsafe
        self.uid, self._uid_lock = None, None
        if os.geteuid() == 0 and not unsafe:
            self.uid, self._uid_lock = claim_uid(uid_base + slot)
        self.proc = None
        self.ctl = None
        self.tmp = None
        self.starts = 0
        self._starting = None

    # lifecycle -----------------------------------------------------------------
    def start(self):
        """(Re)start the container and wait until its zygote has imported torch."""
        self.close()
        judge_ctl, worker_ctl = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        fd = worker_ctl.fileno()
        self.tmp = tempfile.mkdtemp(prefix="autograder-", dir=self.tmp_root)
        if self.unsafe:
            scratch = os.path.join(self.tmp, "scratch")
            os.mkdir(scratch)
            config = {"ctl_fd": fd, "site_dirs": [], "sandboxed": False, "scratch_root": scratch}
            config["gpu"] = bool(gpu_nodes())
            cmd = [sys.executable, "-I", str(INSIDE / "boot.py"), json.dumps(config)]
            env = {"PATH": "/usr/bin:/bin", "OMP_NUM_THREADS": "1", "HOME": self.tmp}
        else:
            cmd = bwrap_command(check_bwrap(), fd, self.limits, self.uid)
            env = {"PATH": "/usr/bin:/bin"}  # bwrap itself (pid 1 inside) gets no secrets
        log = open(os.path.join(self.tmp, "zygote.log"), "wb")
        self.proc = LAUNCHER.submit(
            subprocess.Popen,
            cmd,
            pass_fds=[fd],
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=log,
            env=env,
            cwd=self.tmp,
            start_new_session=True,
        ).result()
        log.close()
        worker_ctl.close()
        self.ctl = judge_ctl
        self.starts += 1
        self.ctl.settimeout(self.limits.start_s)
        try:
            msg = json.loads(self.ctl.recv(4096) or b"{}")
        except (OSError, ValueError):
            msg = {}
        if msg.get("op") != "ready":
            tail = Path(self.tmp, "zygote.log").read_bytes()[-2000:].decode(errors="replace")
            self.close()
            raise SandboxUnavailable(f"the sandboxed worker did not start:\n{tail}")
        regions = anonymous_regions(self.proc.pid)
        if regions:
            self.ctl.send(json.dumps({"op": "huge", "regions": regions}).encode())

    def alive(self):
        return self.proc is not None and self.proc.poll() is None

    def close(self):
        self.proc = kill_group(self.proc)
        if self.ctl is not None:
            self.ctl.close()
            self.ctl = None
        if self.tmp:
            shutil.rmtree(self.tmp, ignore_errors=True)
            self.tmp = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        if self._uid_lock is not None:
            self._uid_lock.close()  # the uid is free for another sandbox
            self._uid_lock = None

    # sessions ------------------------------------------------------------------
    def start_async(self):
        """Start in a background thread (overlaps torch import here and in the zygote)."""
        self._starting = threading.Thread(target=self._start_quietly, daemon=True)
        self._starting.start()

    def restart_async(self):
        """Wait for a start in progress, then start again (e.g. with new limits)."""
        if self._starting is not None:
            self._starting.join()
            self._starting = None
        self.start_async()

    def _start_quietly(self):
        try:
            self.start()
        except Exception:
            self.close()  # open() will try again and report the error

    def open(self, wall_s=None, block=()):
        """Fork a fresh child for one check -> Session, with the aten operators ``block``
        blocked (see zygote.block_for_child). Restarts the sandbox when needed."""
        if self._starting is not None:
            self._starting.join()
            self._starting = None
        wall_s = float(wall_s or self.limits.wall_s)
        for attempt in range(2):
            if not self.alive():
                self.start()
            judge_end, child_end = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
            spec = {"op": "spawn", "uid": self.uid, "limits": self.limits.child(), "wall_s": wall_s}
            spec["block"] = sorted(block)
            try:
                self.ctl.settimeout(10)
                socket.send_fds(self.ctl, [json.dumps(spec).encode()], [child_end.fileno()])
            except OSError:
                judge_end.close()
                self.close()
                if attempt:
                    raise
                continue
            finally:
                child_end.close()
            return Session(self, judge_end, wall_s)
        raise SandboxUnavailable("could not start a worker")

    def finish(self, session):
        """End a session: close the child's socket and wait for the zygote to clean up."""
        session.sock.close()
        left = session.deadline - time.monotonic()
        try:
            self.ctl.settimeout(max(0.0, left) + 10.0)
            if left <= 0:  # past the check's limit: the zygote kills the child now (the
                self.ctl.send(b'{"op": "kill"}')  # zygote's own clock is only a backstop)
            msg = json.loads(self.ctl.recv(4096) or b"{}")
            if msg.get("op") == "done":
                if msg.get("status") == "dirty":  # left files it could not remove: replace it
                    self.close()
                return msg.get("status")
        except (OSError, ValueError, AttributeError):
            pass
        self.close()  # zygote unresponsive or dead: restart on the next open()
        return "sandbox restarted"


def kill_group(proc):
    """SIGKILL the process group of ``proc`` (started with start_new_session) and reap
    ``proc``; returns None, for ``self.proc = kill_group(self.proc)``."""
    if proc is not None:
        try:
            os.killpg(proc.pid, 9)
        except OSError:
            pass
        proc.wait()
    return None
