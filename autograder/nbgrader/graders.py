"""Where nbgrader's autograde step gets its verdicts (``c.EngineGrade.grader``): an engine started
on demand for stock ``nbgrader autograde``, or the batch command's verdicts graded ahead. Both
submit the job every grading path submits (notebook.grading_job), so verdicts, messages and seeds
are the same whichever command graded a notebook.
"""

import hashlib

from autograder import notebook as nbio
from autograder.engines.base import RunSettings
from autograder.engines.local import Engine
from autograder.judge.sandbox import SandboxLimits


def digest(cells):
    return hashlib.sha256("\0".join(cells).encode()).hexdigest()


class Grader:
    """What EngineGrade asks for verdicts: ``grade(preprocessor, resources, nb) -> Report``.

    Handed to nbgrader through the traitlets configuration (``c.EngineGrade.grader``). traitlets
    deep-copies configuration values into every new preprocessor (nbgrader makes one per
    notebook); a grader is a shared service, so copying returns the same object.
    """

    def __deepcopy__(self, memo):
        return self

    def grade(self, preprocessor, resources, nb):
        raise NotImplementedError


class OnDemandGrader(Grader):
    """Stock ``nbgrader autograde``: an Engine started at the first notebook, with the limits
    (``c.SandboxLimits``) and options (``c.EngineGrade``) of the course configuration."""

    def __init__(self):
        self.engine = None

    def grade(self, preprocessor, resources, nb):
        if self.engine is None:
            self.engine = Engine(
                RunSettings(
                    jobs=preprocessor.jobs,
                    limits=SandboxLimits(parent=preprocessor),
                    unsafe=preprocessor.unsafe_no_sandbox,
                    checks_dir=preprocessor.checks_dir or None,
                )
            )
        return submit_rebuilt(self.engine, resources["nbgrader"]["assignment"], nb).result()


class BatchGrader(Grader):
    """The batch command's grader: verdicts graded ahead, in parallel, by its Engine.

    ``expect((assignment, student, notebook), future, cells_digest)`` registers the Future of a
    Report graded from cells with that digest; ``grade`` takes it when the notebook nbgrader
    rebuilt has exactly those cells, and grades the notebook again otherwise (counted in
    ``regraded``). ``progress()`` is called once per notebook written to the gradebook.
    """

    def __init__(self, engine, progress=None):
        self.engine = engine
        self.progress = progress
        self.futures = {}
        self.regraded = 0

    def expect(self, key, future, cells_digest):
        self.futures[key] = (future, cells_digest)

    def grade(self, preprocessor, resources, nb):
        meta = resources["nbgrader"]
        key = (meta["assignment"], meta["student"], meta["notebook"])
        cells = nbio.graded_code(nb)
        future, done_digest = self.futures.pop(key, (None, None))
        report = future.result() if done_digest == digest(cells) else None
        if report is None:
            self.regraded += 1
            report = submit_rebuilt(self.engine, key[0], nb, name=f"{key[1]}/{key[2]}").result()
        if self.progress is not None:
            self.progress()
        return report


def submit_rebuilt(engine, assignment, nb, name=None):
    """Submit a notebook nbgrader rebuilt (RebuildSubmission: the trusted structure) to
    ``engine``: the same job the batch command submits (notebook.grading_job)."""
    return engine.submit(assignment, name=name, **nbio.grading_job(nb))
