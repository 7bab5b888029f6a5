"""nbgrader's own pipeline for the service's submissions, in a course root of its own.

The service's course root (``<state>/course``) has an nbgrader_config.py that loads the
instructor's one (same preprocessors, limits, late penalties, feedback exporter) and then
points the course root and the gradebook here. Its ``source/`` is a copy of the instructor's,
released here with ``nbgrader generate_assignment``, and each assignment's due date is read
from the instructor's gradebook (read only) before grading. A batch of submissions (one per
student) is laid out as ``submitted/<student>/<assignment>/`` and goes through
nbgrader's Autograde (verdicts from the warm engine, as ``python -m autograder grade``) and
GenerateFeedback, exactly as the final grading of those notebooks would; the pages are then
read back and the batch's folders removed.
"""

import hashlib
import logging
import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import nbformat

from autograder import notebook as nbio
from autograder.service.settings import SCORE_ONLY

log = logging.getLogger("autograder.service")

CONFIG = '''"""Written by the grading service (autograder/service/pipeline.py): the instructor's
course configuration, with this folder as the course root and a gradebook of its own."""

c = get_config()  # noqa: F821
load_subconfig({instructor!r})  # noqa: F821
c.CourseDirectory.root = {root!r}
c.CourseDirectory.db_url = {db_url!r}
c.CourseDirectory.groupshared = False
'''


class PipelineError(Exception):
    pass


class ServiceCourse:
    """The service's course root ``root``, following the instructor's course root
    ``instructor`` (its nbgrader_config.py, source/ and gradebook)."""

    def __init__(self, root, instructor):
        self.root = Path(root).resolve()
        self.instructor = Path(instructor).resolve()
        self.root.mkdir(parents=True, exist_ok=True)
        self.db = self.root / "gradebook.db"
        text = CONFIG.format(
            instructor=str(self.instructor / "nbgrader_config.py"),
            root=str(self.root),
            db_url=f"sqlite:///{self.db}",
        )
        path = self.root / "nbgrader_config.py"
        if not path.exists() or path.read_text() != text:
            path.write_text(text)
        self.clear(("submitted", "autograded", "feedback"))  # a killed service's batch
        self.course = nbio.Course(self.root)

    # --- sources and gradebook -------------------------------------------------------------

    def sync(self, assignment, instructor_db_url):
        """Make source/ and release/ of ``assignment`` the instructor's current ones (released
        here again when the instructor's source changed), and copy its due date."""
        src = self.instructor / "source" / assignment
        if not src.is_dir():
            raise PipelineError(f"no source/{assignment}/ in {self.instructor}")
        digest = tree_digest(src)
        stamp = self.root / "source" / f".{assignment}.digest"
        released = (self.root / "release" / assignment).is_dir()
        if not released or not stamp.exists() or stamp.read_text() != digest:
            dest = self.root / "source" / assignment
            shutil.rmtree(dest, ignore_errors=True)
            shutil.copytree(src, dest, symlinks=False)
            self.nbgrader("generate_assignment", assignment, "--force")
            stamp.write_text(digest)
            log.info("released %s in the service's course root", assignment)
        self.copy_duedate(assignment, instructor_db_url)

    def nbgrader(self, *args):
        cmd = [sys.executable, "-m", "nbgrader", *args, "--log-level=ERROR"]
        r = subprocess.run(cmd, cwd=self.root, capture_output=True, text=True, timeout=600)
        if r.returncode:
            raise PipelineError(f"nbgrader {' '.join(args)}: {r.stderr[-2000:]}")

    def copy_duedate(self, assignment, instructor_db_url):
        """The instructor's due date of ``assignment`` (None when unset or unreadable) into
        this gradebook, so late penalties match the final grading."""
        due = read_duedate(instructor_db_url, assignment)
        from nbgrader.api import Gradebook

        with Gradebook(f"sqlite:///{self.db}") as gb:
            row = gb.find_assignment(assignment)
            if row.duedate != due:
                row.duedate = due
                gb.db.commit()

    # --- a batch ---------------------------------------------------------------------------

    def notebook_names(self, assignment):
        return self.course.notebook_names(assignment)

    def read(self, assignment, files, notebook, max_bytes):
        """(template, submission) of ``notebook`` from a job's copied ``files`` folder, read as
        the final grading reads submitted/ (notebook.Course.submission)."""
        template = self.course.template(assignment, notebook)
        path, _ = nbio.locate(files, notebook, self.notebook_names(assignment))
        if path is None:
            return template, nbio.empty_notebook()
        nb, _ = nbio.read_submission(path, max_bytes)
        return template, nb

    def located(self, assignment, files):
        """{notebook: the submitted file's stem that answers it, or None} (notebook.locate)."""
        names = self.notebook_names(assignment)
        out = {}
        for n in names:
            path, _ = nbio.locate(files, n, names)
            out[n] = Path(path).stem if path is not None else None
        return out

    def grade(self, assignment, jobs, grader, show="full"):
        """Autograde and GenerateFeedback for ``jobs`` (one per student) -> {job key:
        {notebook: feedback HTML}}; ``grader`` gives the verdicts (plugin.BatchGrader).

        The batch is laid out in the course's own submitted/ (the converters and the plugin
        read that layout), which holds nothing else: the writer runs one batch at a time and
        clears submitted/, autograded/ and feedback/ before and after it."""
        steps = ("submitted", "autograded", "feedback")
        self.clear(steps)
        try:
            for job in jobs:
                shutil.copytree(job.files, self.root / "submitted" / job.student / assignment)
            from nbgrader.apps.autogradeapp import AutogradeApp
            from nbgrader.apps.generatefeedbackapp import GenerateFeedbackApp

            from autograder.nbgrader.batch import run_nbgrader_app

            code = run_nbgrader_app(AutogradeApp, [assignment, "--force"], self.root, grader)
            if code:
                raise PipelineError(f"nbgrader autograde {assignment} failed ({code})")
            if show == "score":
                for path in (self.root / "autograded").glob(f"*/{assignment}/*.ipynb"):
                    score_only(path)
            code = run_nbgrader_app(GenerateFeedbackApp, [assignment, "--force"], self.root)
            if code:
                raise PipelineError(f"nbgrader generate_feedback {assignment} failed ({code})")
            out = {}
            for job in jobs:
                folder = self.root / "feedback" / job.student / assignment
                out[job.key] = {
                    n: (folder / f"{n}.html").read_text(encoding="utf-8")
                    for n in self.notebook_names(assignment)
                }
            return out
        finally:
            self.clear(steps)

    def clear(self, steps):
        for step in steps:
            shutil.rmtree(self.root / step, ignore_errors=True)


def score_only(path):
    """Replace each failed test cell's message in an autograded notebook by SCORE_ONLY."""
    nb = nbformat.read(path, as_version=4)
    for cell in nb.cells:
        for out in cell.get("outputs", []):
            if out.get("output_type") == "error":
                out["evalue"] = SCORE_ONLY
                out["traceback"] = [SCORE_ONLY]
    nbformat.write(nb, path)


def tree_digest(folder):
    h = hashlib.sha256()
    for path in sorted(Path(folder).rglob("*")):
        if path.is_file() and not path.is_symlink() and ".ipynb_checkpoints" not in path.parts:
            h.update(str(path.relative_to(folder)).encode() + b"\0" + path.read_bytes())
    return h.hexdigest()


def read_duedate(db_url, assignment):
    """The due date (naive UTC datetime, as nbgrader stores it) of ``assignment`` in the
    gradebook at ``db_url``, read without writing anything; None when unset or unreadable."""
    import datetime

    try:
        if db_url.startswith("sqlite:///"):
            path = db_url.removeprefix("sqlite:///")
            if not os.path.isfile(path):
                return None
            with sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=10) as con:
                row = con.execute(
                    "SELECT duedate FROM assignment WHERE name = ?", (assignment,)
                ).fetchone()
            value = row[0] if row else None
            return datetime.datetime.fromisoformat(value) if value else None
        from sqlalchemy import create_engine, text

        engine = create_engine(db_url)
        try:
            with engine.connect() as con:
                row = con.execute(
                    text("SELECT duedate FROM assignment WHERE name = :a"), {"a": assignment}
                ).fetchone()
        finally:
            engine.dispose()
        return row[0] if row else None
    except Exception as e:  # the grading goes on without a due date (and says so)
        log.warning("due date of %s unreadable from the instructor's gradebook: %s", assignment, e)
        return None
