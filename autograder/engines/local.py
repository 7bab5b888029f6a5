"""The local grading engine: a pool of trusted judge processes on this machine, each with its own
sandbox (base.GradingEngine).

    engine = Engine(RunSettings(jobs=4, assignments=["softmax"]))   # starts the judges now
    engine = Engine(jobs=4, assignments=["softmax"])                 # the same, in short
    future = engine.submit("softmax", grade_ids, cells, solutions)   # -> Future[Report]
    report, rebuilt_nb = engine.grade_notebook("softmax", template_nb, submission_nb)
    engine.close()

Each judge (autograder/judge/process.py) runs one pytest session over the check modules of the
assignments and grades one notebook at a time in its sandbox; jobs go to whichever judge is
free. This process imports neither torch nor the checks. A judge that dies is restarted; the
notebook it was grading gets a grader-error verdict (never a silent pass).
"""

import atexit
import dataclasses
import json
import logging
import os
import queue
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
from concurrent.futures import Future
from pathlib import Path

from autograder.engines.base import RunSettings, judges_label, submit_notebook
from autograder.judge.sandbox import kill_group
from autograder.report import JUDGE_STOPPED, Report, empty_report

log = logging.getLogger("autograder")
JUDGE_STOPPED_MESSAGE = "채점 오류 (grader error): the judge process stopped"


class Judge:
    """One judge process and the thread that feeds it jobs from the engine's queue."""

    def __init__(self, engine, slot):
        self.engine, self.slot = engine, slot
        self.proc = None
        self.sock = None
        self.file = None
        self.fresh = False  # started, "ready" not read yet
        self.limits_sent = 0  # the engine's limits version this process has
        self.tmp = None  # the judge's folder: its log and its sandbox's folder, removed by stop()
        self.lock = threading.Lock()  # start/stop run in the judge's thread and in Engine.close
        self.thread = threading.Thread(target=self.run, daemon=True, name=f"judge-{slot}")

    def start(self):
        with self.lock:
            if self.engine.halted:
                raise RuntimeError("the engine was stopped")
            self.start_process()

    def start_process(self):
        mine, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        # the judge is SIGKILLed when it stops (it may be stuck in a check), so what it leaves in
        # its folder is removed from here
        self.tmp = tempfile.mkdtemp(prefix=f"autograder-judge{self.slot}-")
        settings = dict(self.engine.judge_settings(), fd=theirs.fileno(), slot=self.slot)
        settings["tmp"] = self.tmp
        self.limits_sent = self.engine.limits_version
        with open(self.log_path, "wb") as errlog:
            cmd = [sys.executable, "-m", "autograder.judge.process", json.dumps(settings)]
            # only the course's pytest plugin (judge/process.py loads it), not every plugin the venv
            # has installed (anyio's alone costs 0.6 s of start-up); one torch thread: a check's
            # tensors are tiny, and idle OpenMP threads spinning between ops took a third of a
            # judge's CPU time away from the other judges and the sandboxes
            env = dict(os.environ, PYTEST_DISABLE_PLUGIN_AUTOLOAD="1", OMP_NUM_THREADS="1")
            self.proc = subprocess.Popen(
                cmd,
                env=env,
                pass_fds=[theirs.fileno()],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=errlog,
                start_new_session=True,
            )
        theirs.close()
        self.sock, self.file, self.fresh = mine, mine.makefile("rwb"), True

    @property
    def log_path(self):
        return os.path.join(self.tmp, "judge.log")

    def receive(self, timeout):
        self.sock.settimeout(timeout)
        line = self.file.readline()
        if not line:
            raise EOFError(self.log_tail())
        return json.loads(line)

    def log_tail(self):
        try:
            return Path(self.log_path).read_bytes()[-3000:].decode(errors="replace")
        except OSError:
            return ""

    def ready(self):
        msg = self.receive(self.engine.limits.start_s + 120)
        self.fresh = False
        for err in msg.get("errors", []):
            log.error("hidden checks could not be collected: %s", err)

    def run(self):
        """Take jobs until the engine closes; restart the process when it dies."""
        while True:
            job = self.engine.jobs_queue.get()
            if job is None:
                return
            future, payload = job
            if not future.set_running_or_notify_cancel():
                continue
            try:
                if self.proc is None or self.proc.poll() is not None:
                    self.start()
                if self.fresh:
                    self.ready()
                if self.limits_sent != self.engine.limits_version:
                    limits = {"op": "limits", "limits": self.engine.limits.as_dict()}
                    self.file.write(json.dumps(limits).encode() + b"\n")
                    self.limits_sent = self.engine.limits_version
                self.file.write(json.dumps(payload).encode() + b"\n")
                self.file.flush()
                msg = self.receive(self.engine.job_timeout(payload))
                future.set_result(Report.from_data(msg["report"]))
            except Exception as e:
                if not self.engine.halted:  # Ctrl-C kills the judges: no failure to report
                    log.error("judge %d failed on a notebook: %s", self.slot, e)
                self.stop()
                future.set_result(
                    empty_report(payload["grade_ids"], JUDGE_STOPPED_MESSAGE, reason=JUDGE_STOPPED)
                )

    def kill(self):
        """SIGKILL the judge: a read waiting on it in the judge's thread ends at once."""
        with self.lock:
            self.proc = kill_group(self.proc)

    def stop(self):
        with self.lock:
            self.proc = kill_group(self.proc)
            if self.file is not None:
                self.file.close()
                self.sock.close()
                self.file = self.sock = None
            if self.tmp:
                shutil.rmtree(self.tmp, ignore_errors=True)
                self.tmp = None


class Engine:
    """Thread-safe pool of ``settings.jobs`` judge processes (each one sandbox), for the run
    ``settings`` (a RunSettings, or its fields as keywords)."""

    def __init__(self, settings=None, **fields):
        self.settings = (settings or RunSettings(**fields)).resolved()
        self.jobs, self.unsafe = self.settings.jobs, self.settings.unsafe
        self.run_seed, self.limits = self.settings.run_seed, self.settings.limits
        self.limits_version = 0
        self.halted = False  # set by close(wait=False): no judge starts again
        self.jobs_queue = queue.Queue()
        self.judges = [Judge(self, slot) for slot in range(self.jobs)]
        for judge in self.judges:  # start now: sandboxes and imports overlap the caller's work
            judge.start()
            judge.thread.start()
        self.closed = False
        atexit.register(self.close)

    def judge_settings(self):
        """What a judge process starts from (JSON: see judge/process.py main)."""
        return {
            "paths": self.settings.check_paths(),
            "limits": self.limits.as_dict(),
            "unsafe": self.unsafe,
            "run_seed": self.run_seed,
        }

    def set_limits(self, limits):
        """Grade the jobs submitted from now on under ``limits`` (judges get them before their
        next job; only a change of tmpfs size or start-up time restarts a sandbox)."""
        self.limits = limits
        self.settings = dataclasses.replace(self.settings, limits=limits)
        self.limits_version += 1

    def job_timeout(self, payload):
        """Seconds a judge may take for one notebook before it is presumed hung."""
        return (len(payload["grade_ids"]) + 1) * (self.limits.wall_s + 15) + 30

    def describe(self):
        return judges_label(self.jobs, self.unsafe)

    def submit(self, assignment, grade_ids, cells, solutions=(), name=None, public=None):
        """Grade one submission -> Future[Report]. ``cells``: what the worker runs (given and
        solution cells in notebook order); ``solutions``: the student's cells alone; ``name``
        labels the job (``student/notebook``; the cluster engine's task key, unused here);
        ``public``: {grade_id: the test cell's public code}, which must pass too."""
        future = Future()
        payload = {
            "op": "grade",
            "id": id(future),
            "assignment": assignment,
            "grade_ids": list(grade_ids),
            "cells": list(cells),
            "solutions": list(solutions),
            "public": dict(public or {}),
        }
        self.jobs_queue.put((future, payload))
        return future

    def submit_notebook(self, assignment, template, submission, name=None):
        """Rebuild ``submission`` on the trusted ``template`` and grade it -> (Future, nb)."""
        return submit_notebook(self, assignment, template, submission, name)

    def grade_notebook(self, assignment, template, submission):
        future, nb = self.submit_notebook(assignment, template, submission)
        return future.result(), nb

    def close(self, wait=True):
        """Stop the judges once their current notebooks are done, or at once (``wait=False``,
        on Ctrl-C: the notebooks being graded get grader-error verdicts)."""
        if self.closed:
            return
        self.closed = True
        if not wait:
            self.halted = True
            while True:  # the notebooks not started yet are not started at all
                try:
                    job = self.jobs_queue.get_nowait()
                except queue.Empty:
                    break
                if job is not None:
                    job[0].cancel()
        for _ in self.judges:
            self.jobs_queue.put(None)
        for judge in self.judges if not wait else ():
            judge.kill()
        for judge in self.judges:
            judge.thread.join(timeout=5)
            judge.stop()
