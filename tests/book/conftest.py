"""The session fixtures of the book's tests: the built book (_build/html), a local HTTP server of
it and a headless browser.

They write or hold state that every module of this folder shares (_build/, one jupyter-cache), so
tests/conftest.py keeps the whole folder on one pytest-xdist worker, and refuses a module outside
this folder that asks for one of them (SHARED_FIXTURES there).
"""

import functools
import http.server
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
