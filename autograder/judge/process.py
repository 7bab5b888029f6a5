"""One trusted judge process: a pytest session over the hidden checks, grading submissions in turn.

Started by :class:`autograder.engines.local.Engine` as ``python -m autograder.judge.process
SETTINGS`` (JSON: socket fd, check module paths, limits, run seed, sandbox slot). It owns one
sandbox. pytest collects the check modules once (imports, assertion rewriting); then it grades
every job read from the socket (see protocol.py, "engine <-> judge") with
:func:`autograder.judge.submission.grade` and writes back the Report.
Jobs and verdicts are JSON lines between two trusted processes; the secret run seed stays here
and in the engine, and the sandbox only ever receives the concrete inputs of a check.
"""

import gc
import json
import os
import socket
import sys

import pytest

from autograder.judge.sandbox import Sandbox, SandboxLimits  # no torch: the sandbox starts first


class JudgeLoop:
    """pytest plugin replacing the run loop: grade jobs from the socket until it closes."""

    def __init__(self, sock, sandbox, run_seed):
        self.sock = sock
        self.file = sock.makefile("rwb")
        self.sandbox = sandbox
        self.run_seed = run_seed
        self.errors = []  # collection errors (logged by the engine, never shown to students)

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_makereport(self, item, call):
        """The item's report without pytest's long traceback text: nobody reads it here (the
        verdict's message comes from autograder.judge.plugin), and building it costs more
        than a failing check itself."""
        outcome, longrepr = "passed", None
        if call.excinfo is not None:
            message = str(call.excinfo.value)[:200]
            if isinstance(call.excinfo.value, pytest.skip.Exception):
                outcome, longrepr = "skipped", (str(item.path), 0, message)
            else:
                outcome, longrepr = "failed", message
        return pytest.TestReport(
            item.nodeid, item.location, {}, outcome, longrepr, call.when, duration=call.duration
        )

    def pytest_collectreport(self, report):
        if report.failed:
            self.errors.append(f"{report.nodeid}: {report.longreprtext[-3000:]}")

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtestloop(self, session):
        # imported here, not at the top: they import torch, which this process imports only
        # once main() has started the sandbox (its zygote imports torch meanwhile)
        from autograder.judge.grading import SandboxBackend
        from autograder.judge.submission import CheckItems, grade

        checks = CheckItems(session)
        backend = SandboxBackend(self.sandbox)
        gc.collect()  # the checks, pytest and torch are loaded for good: later collections
        gc.freeze()  # need not walk them again, and run less often (a check's tensors and
        gc.set_threshold(5000, 10, 10)  # pytest's reports are short-lived)
        self.send({"op": "ready", "errors": self.errors})
        while True:
            line = self.file.readline()
            if not line:
                return True
            job = json.loads(line)
            if job.get("op") == "limits":
                self.set_limits(job["limits"])
                continue
            if job.get("op") != "grade":
                return True
            report = grade(session, checks, backend, self.run_seed, job)
            self.send({"op": "report", "id": job["id"], "report": report.to_data()})

    def set_limits(self, values):
        """New limits before the first job (the batch command reads them from the course's
        configuration while the judges start). Per-check limits apply from the next child;
        a sandbox-level one (tmpfs size, start-up time) restarts the sandbox."""
        old, new = self.sandbox.limits, SandboxLimits(**values)
        self.sandbox.limits = new
        if (old.tmpfs_bytes, old.start_s) != (new.tmpfs_bytes, new.start_s):
            self.sandbox.restart_async()

    def send(self, message):
        self.file.write(json.dumps(message).encode() + b"\n")
        self.file.flush()


UNUSED_PLUGINS = (
    "warnings",
    "logging",
    "threadexception",
    "unraisableexception",
    "faulthandler",
    "setuponly",
    "setupplan",
    "anyio",
    "xdist",
    "xdist.looponfail",
    "doctest",
    "junitxml",
    "pastebin",
    "stepwise",
    "unittest",
    "subtests",
    "legacypath",
    "tmpdir",
    "monkeypatch",
    "recwarn",
    "debugging",
)


def main():
    settings = json.loads(sys.argv[1])
    limits = SandboxLimits(**settings["limits"])
    sandbox = Sandbox(
        slot=settings["slot"], limits=limits, unsafe=settings["unsafe"], tmp_root=settings["tmp"]
    )
    sandbox.start_async()  # the zygote imports torch while this process imports the checks
    sock = socket.socket(fileno=settings["fd"])
    loop = JudgeLoop(sock, sandbox, settings["run_seed"])
    args = [*settings["paths"], "-q", "-p", "autograder.judge.plugin", "-p", "no:cacheprovider"]
    args += ["--capture=no"]
    # plugins the checks never use; each one a run loads adds its hooks to every item's phases
    for plugin in UNUSED_PLUGINS:
        args += ["-p", f"no:{plugin}"]
    args += ["--no-header", "-o", "addopts=", "--continue-on-collection-errors"]
    try:
        code = pytest.main(args, plugins=[loop])
    finally:
        sandbox.close()
    sys.exit(0 if code in (0, 1, 5) else int(code))


if __name__ == "__main__":
    os.environ.setdefault("PYTHONDONTWRITEBYTECODE", "1")
    main()
