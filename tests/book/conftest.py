"""The session fixtures of the book's tests: the built book (_build/html), a local HTTP server of
it, a headless browser, and the student's environment.

They write or hold state that every module of this folder shares (_build/, one jupyter-cache, one
fresh venv), so tests/conftest.py keeps the whole folder on one pytest-xdist worker, and refuses a
module outside this folder that asks for one of them (SHARES_THE_BOOK there).
"""

import functools
import http.server
import os
import re
import socketserver
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from tests.support.browser import headless_chromium

ROOT = Path(__file__).resolve().parents[2]
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


# Browser: headless Chromium through selenium, the built book served over local HTTP


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


@pytest.fixture(scope="session")
def server(built_book):
    handler = functools.partial(_QuietHandler, directory=str(built_book))
    httpd = socketserver.ThreadingTCPServer(("127.0.0.1", 0), handler)
    httpd.daemon_threads = True
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


@pytest.fixture(scope="session")
def browser():
    drv = headless_chromium(console_log=True)
    drv.set_script_timeout(60)
    yield drv
    drv.quit()


# The student's environment: a fresh venv with only requirements-student.txt, shared by the test
# modules that run notebooks as a student would (test_student_env.py, test_chapter_notebooks.py)


def student_bin(venv, name):
    """Path of an executable of the venv ``venv``."""
    return Path(venv) / ("Scripts" if os.name == "nt" else "bin") / name


@pytest.fixture(scope="session")
def student_env(tmp_path_factory):
    # not `student`: that is the hidden checks' fixture (autograder.judge.plugin)
    """(python, env, workdir) of a fresh venv (temporary folder; .venv is never touched) with
    requirements-student.txt installed, created once per session."""
    base = tmp_path_factory.mktemp("student")
    venv = base / "venv"
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    for var in ("JUPYTER_CONFIG_DIR", "JUPYTER_DATA_DIR", "JUPYTER_RUNTIME_DIR", "IPYTHONDIR"):
        env[var] = str(base / var.lower())
    env.pop("JUPYTER_PATH", None)
    env.update(MPLBACKEND="Agg", PYTHONNOUSERSITE="1")
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, env=env, timeout=300)
    python = student_bin(venv, "python")
    cmd = [str(python), "-m", "pip", "install", "--disable-pip-version-check", "-q"]
    cmd += ["-r", str(ROOT / "requirements-student.txt")]
    r = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=1200)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    work = base / "work"
    work.mkdir()
    return python, env, work
