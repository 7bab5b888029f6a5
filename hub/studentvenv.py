"""The students' Python environment on the hub: what ``pip install -r hub/requirements-hub.txt``
installs into a new venv, without unpacking and compiling again what the repository's venv
already holds.

The exact set of distributions and versions is hub/requirements-students.lock: what pip
resolves for the requirements (``pip install --dry-run --report``), written by ``python3
hub/studentvenv.py lock`` with a digest of the requirement files and the Python it was resolved
for; when either differs, pip resolves again (about two minutes more). Each distribution of the
set that the repository's venv has at the same version, installed by pip from a wheel, is placed
from there file by file as its RECORD lists them: hard links (copies across file systems),
console scripts rewritten for this venv's interpreter, the REQUESTED mark as this set has it.
pip installs the rest with ``--no-deps`` at the locked versions, and ``pip check`` verifies the
whole. The result holds
third-party packages only: nothing of the repository itself (its editable install is never in the
set), so the students still see neither solutions/ nor the hidden checks.

Hard links share their file with the repository's venv: pip never writes an installed file in
place (an upgrade there removes and writes anew), and hub/deploy.py replaces, never rewrites,
the configuration files it puts into this venv.
"""

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
REQUIREMENTS = HERE / "requirements-hub.txt"
LOCK = HERE / "requirements-students.lock"


def build(venv, requirements=REQUIREMENTS, donor=None, lock=LOCK, log=print, env=None):
    """Create ``venv`` (a new folder) with ``requirements`` installed at the versions of
    ``lock`` (when it was made from these requirements for this Python); ``donor``: the venv
    whose identical distributions are linked rather than installed (None: pip installs
    everything); ``env``: the environment of the commands run (None: this process's).
    -> {"linked": [names], "installed": [names], "locked": bool}."""
    venv = Path(venv).resolve()
    py = venv / "bin" / "python"
    pip = [py, "-m", "pip", "--disable-pip-version-check"]
    if donor is None or not same_python(sys.executable, Path(donor) / "bin" / "python"):
        run([sys.executable, "-m", "venv", venv], log, env)
        run([*pip, "install", "-q", "-r", requirements], log, env)
        return {"linked": [], "installed": ["-r " + str(requirements)], "locked": False}
    run([sys.executable, "-m", "venv", "--without-pip", venv], log, env)
    donor = Path(donor).resolve()
    site, donor_site = site_packages(py), site_packages(donor / "bin" / "python")
    have = installed(donor_site)
    # the venv's own pip: the donor's (the one `python -m venv` would have put there)
    if not (have.get("pip") and place(have["pip"][1], donor_site, site, donor, venv)):
        run([py, "-m", "ensurepip", "--default-pip"], log, env)
    wanted = read_lock(lock, requirements, py) if lock else None
    locked = wanted is not None
    if not locked:
        wanted = resolve(pip, requirements, log, env)
    present = installed(site)
    linked, rest = [], []
    for name, (version, requested) in sorted(wanted.items()):
        dist = have.get(name)
        if (
            name not in present
            and dist
            and dist[0] == version
            and place(dist[1], donor_site, site, donor, venv)
        ):
            mark_requested(site / dist[1].name, requested)
            linked.append(name)
        else:
            rest.append(f"{name}=={version}")
    if rest:
        run([*pip, "install", "-q", "--no-deps", *rest], log, env)
    run([*pip, "check"], log, env)
    return {"linked": linked, "installed": [r.split("==")[0] for r in rest], "locked": locked}


def run(cmd, log, env=None):
    log("+ " + " ".join(str(c) for c in cmd))
    subprocess.run([str(c) for c in cmd], check=True, env=env)


def same_python(a, b):
    """True when the two interpreters are the same Python (version and build)."""
    probe = "import sys, sysconfig; print(sys.version, sysconfig.get_platform())"
    out = [subprocess.run([str(p), "-c", probe], capture_output=True, text=True) for p in (a, b)]
    return all(o.returncode == 0 for o in out) and out[0].stdout == out[1].stdout


def site_packages(py):
    code = "import sysconfig; print(sysconfig.get_paths()['purelib'])"
    out = subprocess.run([str(py), "-c", code], capture_output=True, text=True, check=True)
    return Path(out.stdout.strip()).resolve()


def canonical(name):
    return re.sub(r"[-_.]+", "-", name).lower()


def resolve(pip, requirements, log, env=None):
    """{name: (version, requested)} of what ``pip install -r requirements`` installs into an
    empty venv (pip's installation report of a dry run)."""
    with tempfile.TemporaryDirectory() as tmp:
        report = Path(tmp) / "report.json"
        cmd = [*pip, "install", "-q", "--dry-run", "--ignore-installed", "--report", report]
        run([*cmd, "-r", requirements], log, env)
        data = json.loads(report.read_text())
    return {
        canonical(item["metadata"]["name"]): (item["metadata"]["version"], item.get("requested"))
        for item in data["install"]
    }


def requirement_files(path):
    """``path`` and the files it includes (``-r other.txt``), in order."""
    path = Path(path).resolve()
    out = [path]
    for line in path.read_text().splitlines():
        words = line.split()
        if len(words) == 2 and words[0] in ("-r", "--requirement"):
            out += requirement_files(path.parent / words[1])
    return out


def fingerprint(requirements, py):
    """(digest of the requirement files, the Python they are resolved for) as the lock's
    header writes them."""
    h = hashlib.sha256()
    for f in requirement_files(requirements):
        h.update(f.read_bytes())
    probe = "import sys, sysconfig; print('%d.%d' % sys.version_info[:2], sysconfig.get_platform())"
    out = subprocess.run([str(py), "-c", probe], capture_output=True, text=True, check=True)
    return h.hexdigest(), out.stdout.strip()


def write_lock(lock, requirements, py, wanted):
    digest, python = fingerprint(requirements, py)
    req, out = (_shown(p) for p in (requirements, lock))
    command = (
        "lock" if (Path(requirements), Path(lock)) == (REQUIREMENTS, LOCK) else f"lock {req} {out}"
    )
    lines = [
        f"# Every distribution pip resolves for {req} in a new venv, at its exact",
        "# version (hub/studentvenv.py builds a venv from it).",
        f"# Written by `python3 hub/studentvenv.py {command}`;",
        "# rerun it when a requirement changes.",
        f"# requirements: {digest}",
        f"# python: {python}",
    ]
    for name, (version, requested) in sorted(wanted.items()):
        lines.append(f"{name}=={version}" + ("  # requested" if requested else ""))
    Path(lock).write_text("\n".join(lines) + "\n")


def _shown(path):
    """``path`` relative to the repository when it lies inside it."""
    path = Path(path).resolve()
    return str(path.relative_to(HERE.parent)) if path.is_relative_to(HERE.parent) else str(path)


def read_lock(lock, requirements, py):
    """{name: (version, requested)} of ``lock``, or None when it is missing or was made from
    other requirement files or for another Python."""
    lock = Path(lock)
    if not lock.is_file():
        return None
    text = lock.read_text()
    digest, python = fingerprint(requirements, py)
    if f"# requirements: {digest}\n" not in text or f"# python: {python}\n" not in text:
        return None
    wanted = {}
    for line in text.splitlines():
        if line.strip() and not line.startswith("#"):
            pin, _, comment = line.partition("#")
            name, version = pin.strip().split("==")
            wanted[canonical(name)] = (version, comment.strip() == "requested")
    return wanted


def installed(site):
    """{name: (version, dist-info folder)} of the distributions pip installed from wheels into
    ``site`` (editable and direct-URL installs left out)."""
    out = {}
    for info in site.glob("*.dist-info"):
        meta = info / "METADATA"
        if not meta.is_file() or not (info / "RECORD").is_file():
            continue
        if (info / "direct_url.json").exists():
            continue
        installer = info / "INSTALLER"
        if not installer.is_file() or installer.read_text().strip() != "pip":
            continue
        fields = dict(
            line.split(": ", 1)
            for line in meta.read_text(errors="replace").splitlines()[:20]
            if ": " in line
        )
        if "Name" in fields and "Version" in fields:
            out[canonical(fields["Name"])] = (fields["Version"].strip(), info)
    return out


def record(info):
    """The paths (relative to site-packages) that the RECORD of ``info`` lists."""
    lines = (info / "RECORD").read_text(encoding="utf-8").splitlines()
    return [ln.rsplit(",", 2)[0].strip('"') for ln in lines if ln.strip()]


def place(info, donor_site, site, donor, venv):
    """Link the files of the distribution ``info`` (in ``donor_site``) into ``site``; False,
    with nothing written, when one of them lies outside the donor venv or is missing."""
    plan = []
    for rel in record(info):
        src = Path(os.path.normpath(donor_site / rel))
        dst = Path(os.path.normpath(site / rel))
        if not (src.is_relative_to(donor) and dst.is_relative_to(venv)):
            return False
        if not src.is_file():
            if "__pycache__" in src.parts:  # a byte-code file pip did not write: none to link
                continue
            return False
        plan.append((src, dst))
    for src, dst in plan:
        dst.parent.mkdir(parents=True, exist_ok=True)
        if dst.exists() or dst.is_symlink():
            dst.unlink()
        if dst.parent == venv / "bin" and runs_donor(src, donor):
            # a console script: this venv's interpreter (pip's '#!/bin/sh' + exec form too)
            dst.write_bytes(src.read_bytes().replace(bytes(donor), bytes(venv)))
            os.chmod(dst, src.stat().st_mode & 0o777)
            continue
        try:
            os.link(src, dst)
        except OSError:
            shutil.copy2(src, dst)
    return True


def runs_donor(path, donor):
    """A console script of the donor venv: its first lines name the donor's interpreter."""
    with open(path, "rb") as f:
        head = f.read(512)
    return head.startswith(b"#!") and bytes(donor) + b"/bin/python" in head


def mark_requested(info, requested):
    """The REQUESTED file as pip writes it for this install (a top-level requirement or not)."""
    mark = info / "REQUESTED"
    if mark.exists():
        mark.unlink()  # a link into the donor: never written through
    if requested:
        mark.write_text("")


def main(argv=None):
    """``python3 hub/studentvenv.py lock [REQUIREMENTS LOCK]``: resolve REQUIREMENTS (default
    hub/requirements-hub.txt) in a new venv and write LOCK (default
    hub/requirements-students.lock)."""
    args = sys.argv[1:] if argv is None else argv
    if not args or args[0] != "lock" or len(args) not in (1, 3):
        sys.exit("usage: python3 hub/studentvenv.py lock [REQUIREMENTS LOCK]")
    requirements, lock = (
        (Path(a).resolve() for a in args[1:]) if len(args) == 3 else (REQUIREMENTS, LOCK)
    )
    with tempfile.TemporaryDirectory() as tmp:
        venv = Path(tmp) / "venv"
        run([sys.executable, "-m", "venv", venv], print)  # the pip a new venv has
        py = venv / "bin" / "python"
        pip = [py, "-m", "pip", "--disable-pip-version-check"]
        wanted = resolve(pip, requirements, print)
        write_lock(lock, requirements, py, wanted)
    print(f"{lock}: {len(wanted)} distributions")


if __name__ == "__main__":
    main()
