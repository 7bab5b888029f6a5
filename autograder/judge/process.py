"""One trusted judge process: a pytest session over the hidden checks, grading submissions in turn.

Started by :class:`autograder.engines.local.Engine` as ``python -m autograder.judge.process SETTINGS``
(JSON: socket fd, check module paths, limits, run seed, sandbox slot). It owns one sandbox.
pytest collects the check modules once (imports, assertion rewriting); then for every job read
from the socket (assignment, grade_ids, cells) it runs the items of each test cell's test
function with the ``student`` fixture bound to that submission, and writes back the verdicts.
Jobs and verdicts are JSON lines between two trusted processes; the secret run seed stays here
and in the engine, and the sandbox only ever receives the concrete inputs of a check.
"""

import gc
import json
import os
import re
import socket
import sys
import time

import pytest


class JudgeLoop:
    """pytest plugin replacing the run loop: grade jobs from the socket until it closes."""

    def __init__(self, sock, sandbox, run_seed):
        self.sock = sock
        self.file = sock.makefile("rwb")
        self.sandbox = sandbox
        self.run_seed = run_seed
        self.errors = []  # collection errors (logged by the engine, never shown to students)
        self.items = {}  # (assignment, test function) -> [items]
        self.sibling = {}  # item -> another item of its module (see grade)

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
        from autograder.judge.plugin import assignment_of

        for item in session.items:
            if "student" in item.fixturenames and not skipped(item):
                key = (assignment_of(item), item.originalname)
                self.items.setdefault(key, []).append(item)
        by_module = {}
        for item in session.items:
            by_module.setdefault(item.module, []).append(item)
        for items in by_module.values():
            for n, item in enumerate(items):
                self.sibling[item] = items[(n + 1) % len(items)] if len(items) > 1 else None
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
            report = self.grade(session, job)
            self.send({"op": "report", "id": job["id"], "report": report.to_data()})

    def set_limits(self, values):
        """New limits before the first job (the batch command reads them from the course's
        configuration while the judges start). Per-check limits apply from the next child;
        a sandbox-level one (tmpfs size, start-up time) restarts the sandbox."""
        from autograder.judge.sandbox import SandboxLimits

        old, new = self.sandbox.limits, SandboxLimits(**values)
        self.sandbox.limits = new
        if (old.tmpfs_bytes, old.start_s) != (new.tmpfs_bytes, new.start_s):
            self.sandbox.restart_async()

    def send(self, message):
        self.file.write(json.dumps(message).encode() + b"\n")
        self.file.flush()

    def grade(self, session, job):
        from _pytest.runner import runtestprotocol

        from autograder.judge.grading import Grading, SandboxBackend
        from autograder.judge.plugin import GRADING, RESULT
        from autograder.report import Report, Verdict
        from autograder.seeds import submission_seed

        config = session.config
        t0 = time.monotonic()
        backend = SandboxBackend(self.sandbox)
        seed = submission_seed(self.run_seed, job["assignment"], job["cells"])
        grading = Grading(backend, job["cells"], seed, job.get("solutions", ()))
        config.stash[GRADING] = grading
        report = Report()
        public, used = job.get("public", {}), {}
        try:
            for gid in job["grade_ids"]:
                t1 = time.monotonic()
                items = self.items.get((job["assignment"], gid))
                if not items:
                    msg = f"채점 설정 오류 (grader error): no hidden check for test cell {gid!r}"
                    report.verdicts[gid] = Verdict(gid, "grader-error", msg)
                    continue
                outcome, message = "passed", ""
                for item in items:  # a test cell passes when every item of its function does
                    # the function's fixtures end with the item; the session and the check
                    # module stay set up until the job ends (a sibling of the same module as
                    # nextitem), which saves their set-up and teardown on every item
                    reports = runtestprotocol(item, nextitem=self.sibling[item], log=False)
                    if any(r.failed for r in reports):
                        default = ("grader-error", "채점 오류 (grader error)")
                        outcome, message = item.stash.get(RESULT, default)
                        break
                used[gid] = {name for s in grading.students for name in s.used}
                status = grading.end_function()
                if outcome != "passed" and status not in ("exit", None):
                    message += f"\n[worker: {status}]"
                report.verdicts[gid] = Verdict(gid, outcome, message[:4000], time.monotonic() - t1)
            passed = [g for g, v in report.verdicts.items() if v.passed and public.get(g)]
            results = grading.public_tests({g: public[g] for g in passed})
            public_failed = {g: r for g, r in results.items() if r[0] != "passed"}
            charge_public_failures(report, public, public_failed, used, grading.facts.dependencies)
        finally:
            session._setupstate.teardown_exact(None)  # pytest's own end of a run
            grading.end_function()
            del config.stash[GRADING]
        report.problems = grading.problems()
        report.seconds = time.monotonic() - t0
        return report


def charge_public_failures(report, public, failed, used, dependencies=lambda name: set()):
    """A test cell whose public code fails loses its item, unless that code reaches (directly,
    or through ``dependencies(name)``: the student's own definitions a name uses) a function
    another item already failed on: one mistake costs one item. E.g. a wrong causal_mask fails
    test_causal_mask, not also the combine_masks test that calls it; a wrong merge_heads fails
    test_split_heads, not also MultiHeadAttention's public test, whose hidden checks take
    merge_heads as given."""
    from autograder.report import Verdict

    verdicts = report.verdicts
    lost = {name for gid, v in verdicts.items() if not v.passed for name in used.get(gid, ())}
    for gid, (outcome, message) in failed.items():
        names = set(re.findall(r"\w+", public[gid]))
        reached = names.union(*(dependencies(name) for name in names))
        if not lost & reached:
            verdicts[gid] = Verdict(gid, outcome, message[:4000], verdicts[gid].seconds)


def skipped(item):
    """True for an item whose skipif condition holds already (e.g. the CUDA variant without a
    GPU): it would only be reported as skipped, so the loop does not run it at all."""
    return any(
        m.args and isinstance(m.args[0], bool) and m.args[0] for m in item.iter_markers("skipif")
    )


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
    from autograder.judge.sandbox import Sandbox, SandboxLimits

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
