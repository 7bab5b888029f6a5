"""Grading engine: a pool of sandboxes, the secret run seed, notebook-level grading.

engine = Engine(jobs=4)                       # or Engine(unsafe=True) without bwrap
report, rebuilt_nb = engine.grade_notebook("softmax", template_nb, submission_nb)
engine.close()
"""

import atexit
import logging
import os
import queue
import sys
import threading
from concurrent.futures import ThreadPoolExecutor

from autograder import notebook as nbio
from autograder.judge import Report, Verdict, grade_cells, load_checks, new_run_seed
from autograder.sandbox import Limits, Sandbox, check_bwrap, unsafe_requested

log = logging.getLogger("autograder")
BANG = "!" * 78
UNSAFE_WARNING = f"""
{BANG}
!! UNSAFE: grading WITHOUT the bubblewrap sandbox (--unsafe-no-sandbox).
!! Student code runs with your permissions: it can read solutions/, the hidden checks
!! and the gradebook, write them, and reach the network.
{BANG}"""


class Engine:
    """Thread-safe pool of ``jobs`` sandboxes; each notebook is graded in one of them."""

    def __init__(
        self,
        jobs=None,
        limits=None,
        unsafe=False,
        checks_package=None,
        run_seed=None,
        sandboxes=None,
    ):
        self.jobs = max(1, int(jobs or os.cpu_count() or 1))
        self.limits = limits or Limits()
        self.unsafe = unsafe_requested(unsafe)
        if self.unsafe:
            print(UNSAFE_WARNING, file=sys.stderr, flush=True)
        else:
            check_bwrap()  # refuse to grade without a working sandbox
        self.checks_package = checks_package
        self.run_seed = new_run_seed() if run_seed is None else run_seed
        self._checks = {}
        self._free = queue.Queue()
        self._all = list(sandboxes or [])  # optionally pre-started (see prestart())
        self._lock = threading.Lock()
        for slot in range(self.jobs):
            self._free.put(slot)
        atexit.register(self.close)

    def checks(self, assignment):
        with self._lock:
            if assignment not in self._checks:
                self._checks[assignment] = load_checks(assignment, self.checks_package)
            return self._checks[assignment]

    def _sandbox(self, slot):
        with self._lock:
            while len(self._all) <= slot:
                self._all.append(None)
            if self._all[slot] is None:
                self._all[slot] = Sandbox(slot=slot, limits=self.limits, unsafe=self.unsafe)
            return self._all[slot]

    def grade_cells(self, assignment, grade_ids, cells):
        """Grade solution-cell sources ``cells`` on test cells ``grade_ids`` -> Report."""
        checks = self.checks(assignment)
        slot = self._free.get()
        try:
            return grade_cells(self._sandbox(slot), checks, grade_ids, cells, self.run_seed)
        finally:
            self._free.put(slot)

    def grade_notebook(self, assignment, template, submission):
        """Rebuild ``submission`` on the trusted ``template`` and grade it -> (Report, nb)."""
        nb = nbio.rebuild(template, submission)
        grade_ids = [gid for gid, _ in nbio.test_cells(template)]
        return self.grade_cells(assignment, grade_ids, nbio.solution_code(nb)), nb

    def warm_up(self):
        """Start every sandbox now (in parallel), so timings exclude start-up."""
        with ThreadPoolExecutor(self.jobs) as ex:
            list(
                ex.map(
                    lambda s: self._sandbox(s).alive() or self._sandbox(s).start(), range(self.jobs)
                )
            )

    def close(self):
        with self._lock:
            for sb in self._all:
                if sb is not None:
                    sb.close()


def empty_report(grade_ids, message):
    """A Report failing every test cell with the same message."""
    return Report({gid: Verdict(gid, False, message) for gid in grade_ids})
