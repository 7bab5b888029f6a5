"""Fixtures shared by several test modules."""

import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
HTML = ROOT / "_build" / "html"


@pytest.fixture(scope="session")
def built_book():
    """Build the whole book once per session with --warningiserror; return the HTML folder."""
    jb = Path(sys.executable).with_name("jupyter-book")
    t0 = time.perf_counter()
    proc = subprocess.run(
        [str(jb), "build", str(ROOT), "--warningiserror", "--keep-going"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=900,
    )
    elapsed = time.perf_counter() - t0
    log = proc.stdout + proc.stderr
    problems = [ln for ln in log.splitlines() if re.search(r"WARNING|ERROR|Traceback", ln)]
    problems = [ln for ln in problems if "IPKernelApp" not in ln]
    assert proc.returncode == 0, "book build failed:\n" + "\n".join(problems[-40:] or [log[-4000:]])
    print(f"book build took {elapsed:.1f} s")
    return HTML
