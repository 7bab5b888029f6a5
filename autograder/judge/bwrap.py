"""The bubblewrap container of a sandbox: whether bwrap works on this machine, and the command
line that shows the sandbox nothing of the course: the system, the Python packages (read-only)
and autograder/sandboxed/, the only grader code that runs next to student code.
"""

import json
import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1]  # autograder/
INSIDE = PACKAGE / "sandboxed"  # the only grader code run in the sandbox
BOOT = "/grader/autograder/sandboxed/boot.py"  # where bwrap_command binds it
UNSAFE_FLAG = "--unsafe-no-sandbox"
UNSAFE_ENV = "AUTOGRADER_UNSAFE_NO_SANDBOX"
INSTALL_HINT = (
    "bubblewrap (bwrap) is required to grade safely. Install it, e.g.\n"
    "    sudo apt-get install bubblewrap      # Debian/Ubuntu (or: make sysdeps)\n"
    "    sudo dnf install bubblewrap          # Fedora\n"
    f"or, only on a throw-away machine, pass {UNSAFE_FLAG} (student code then runs unsandboxed)."
)


# bwrap's --die-with-parent fires when the *thread* that spawned it exits, so every sandbox
# is spawned from this one long-lived thread (it lives as long as the process).


class SandboxUnavailable(RuntimeError):
    """bwrap is missing or does not work here."""


def unsafe_requested(flag=False):
    return bool(flag) or os.environ.get(UNSAFE_ENV, "") == "1"


def check_bwrap():
    """Raise SandboxUnavailable with install instructions unless bwrap runs here."""
    exe = shutil.which("bwrap")
    if exe is None:
        raise SandboxUnavailable("bubblewrap (bwrap) is not installed.\n" + INSTALL_HINT)
    probe = [exe, "--unshare-net", "--die-with-parent", "--ro-bind", "/", "/", "true"]
    if os.geteuid() != 0:
        probe.insert(1, "--unshare-user")
    r = subprocess.run(probe, capture_output=True, text=True, timeout=30)
    if r.returncode != 0:
        raise SandboxUnavailable(f"bwrap does not work here: {r.stderr.strip()}\n" + INSTALL_HINT)
    return exe


def site_dirs():
    """Directories holding the installed packages (torch, numpy, safetensors)."""
    paths = sysconfig.get_paths()
    out = []
    for p in (paths["purelib"], paths["platlib"]):
        if p not in out and os.path.isdir(p):
            out.append(p)
    return out


def sandboxed_files():
    """The Python files the sandbox holds: autograder/sandboxed/*.py and the package's own
    __init__.py (a docstring), bound read-only under /grader with their package paths."""
    return [PACKAGE / "__init__.py", *sorted(INSIDE.glob("*.py"))]


def gpu_nodes():
    return sorted(str(p) for p in Path("/dev").glob("nvidia*"))


def bwrap_command(exe, ctl_fd, limits, uid):
    """The bwrap command line for one sandbox; nothing of the course directory is visible."""
    py = os.path.realpath(sys.executable)
    cmd = [exe, "--unshare-ipc", "--unshare-pid", "--unshare-net", "--unshare-uts"]
    cmd += ["--unshare-cgroup-try", "--die-with-parent", "--new-session", "--clearenv"]
    if uid is not None:  # running as root: no user namespace, drop to `uid` per child
        cmd += ["--cap-drop", "ALL", "--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID"]
        cmd += ["--cap-add", "CAP_KILL"]  # the zygote kills what a child leaves behind
    else:
        cmd += ["--unshare-user", "--disable-userns"]
    env = {
        "PATH": "/usr/bin:/bin",
        "HOME": "/tmp",
        "LANG": "C.UTF-8",
        "OMP_NUM_THREADS": "1",
        "MKL_NUM_THREADS": "1",
        "PYTHONDONTWRITEBYTECODE": "1",
        "PYTORCH_NVML_BASED_CUDA_CHECK": "1",
    }
    for k, v in env.items():
        cmd += ["--setenv", k, v]
    cmd += ["--ro-bind", "/usr", "/usr"]
    for d in ("lib", "lib64", "bin", "sbin"):
        p = Path("/") / d
        if p.is_symlink():
            cmd += ["--symlink", os.readlink(p), str(p)]
        elif p.is_dir():
            cmd += ["--ro-bind", str(p), str(p)]
    if os.path.exists("/etc/ld.so.cache"):
        cmd += ["--perms", "0755", "--dir", "/etc"]
        cmd += ["--ro-bind", "/etc/ld.so.cache", "/etc/ld.so.cache"]
    nodes = gpu_nodes()
    if nodes:  # the CUDA driver reads /proc; it shows mount sources and command lines (host paths)
        cmd += ["--proc", "/proc"]
    else:  # no /proc, as root or not: nothing of the host's paths; torch's cpuinfo reads the CPU
        cmd += ["--perms", "0555", "--dir", "/proc", "--ro-bind", "/proc/cpuinfo", "/proc/cpuinfo"]
    cmd += ["--dev", "/dev"]
    cmd += ["--perms", "1777", "--size", str(limits.tmpfs_bytes), "--tmpfs", "/tmp"]
    prefix = os.path.realpath(sys.base_prefix)
    if not prefix.startswith("/usr/"):
        for parent in reversed(Path(prefix).parents[:-1]):  # e.g. /root (0700 on the host)
            cmd += ["--perms", "0755", "--dir", str(parent)]
        cmd += ["--ro-bind", prefix, prefix]
    cmd += [
        "--perms",
        "0755",
        "--dir",
        "/sandbox",
        "--perms",
        "0755",
        "--dir",
        "/sandbox/site-packages",
    ]
    cmd += ["--perms", "0755", "--dir", "/grader"]
    inside = []
    for i, d in enumerate(site_dirs()):
        cmd += ["--ro-bind", d, f"/sandbox/site-packages/{i}"]
        inside.append(f"/sandbox/site-packages/{i}")
    for path in sandboxed_files():
        cmd += ["--ro-bind", str(path), "/grader/" + path.relative_to(PACKAGE.parent).as_posix()]
    for node in nodes:
        cmd += ["--dev-bind", node, node]
    if nodes:  # the CUDA driver reads PCI topology from /sys (no course files there)
        cmd += ["--ro-bind", "/sys", "/sys"]
    config = {"ctl_fd": ctl_fd, "site_dirs": inside, "sandboxed": True, "scratch_root": "/tmp"}
    config["gpu"] = bool(nodes)
    cmd += ["--chdir", "/tmp", py, "-I", "-S", BOOT, json.dumps(config)]
    return cmd
