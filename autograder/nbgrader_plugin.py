"""nbgrader 0.9.6 integration: `nbgrader autograde` takes its verdicts from the engine.

Configured in exercises/nbgrader_config.py:

- ``RobustExporter`` reads submissions that are not valid UTF-8/JSON/nbformat-4 without failing.
- ``RebuildSubmission`` (first sanitize step) replaces the submitted notebook by the trusted
  release notebook with only the solution cells' sources taken from the submission.
- ``EngineGrade`` replaces nbgrader's ``Execute``: no kernel runs; the engine grades the
  solution cells in the sandbox and writes, per test cell, no output (pass: full points) or an
  error output with the check's message (fail: 0 points), so nbgrader's SaveAutoGrades records
  exactly the engine's scores. Hidden-test regions are removed from the test cells.
"""

import datetime
import hashlib
import os
import stat
import threading

import nbformat
from nbconvert.exporters import NotebookExporter
from nbconvert.exporters.exporter import ResourcesDict
from nbgrader import utils
from nbgrader.api import Gradebook
from nbgrader.converters import base as nbgrader_base
from nbgrader.coursedir import CourseDirectory
from nbgrader.preprocessors import NbGraderPreprocessor, SaveAutoGrades
from traitlets import Bool, Integer, Unicode

from autograder import notebook as nbio

_ENGINE = None
_ENGINE_LOCK = threading.Lock()
# (assignment, student, notebook) -> Future of (cells digest, Report), filled by the batch CLI
PRECOMPUTED = {}
PROGRESS = None  # callable() invoked once per graded notebook (the batch CLI's progress bar)
MISSES = 0  # notebooks that were not found in PRECOMPUTED and were graded on the spot


def engine(**kwargs):
    """Process-wide Engine (created on first use, reused by every notebook)."""
    global _ENGINE
    with _ENGINE_LOCK:
        if _ENGINE is None:
            from autograder.engine import Engine

            _ENGINE = Engine(**kwargs)
        return _ENGINE


def set_engine(eng):
    global _ENGINE
    with _ENGINE_LOCK:
        _ENGINE = eng


def digest(cells):
    return hashlib.sha256("\0".join(cells).encode()).hexdigest()


class RobustExporter(NotebookExporter):
    """NotebookExporter whose from_filename never fails on a broken submission."""

    def from_filename(self, filename, resources=None, **kw):
        if resources is None:
            resources = ResourcesDict()
        if "metadata" not in resources or resources["metadata"] == "":
            resources["metadata"] = ResourcesDict()
        path, basename = os.path.split(filename)
        resources["metadata"]["name"] = os.path.splitext(basename)[0]
        resources["metadata"]["path"] = path
        mtime = datetime.datetime.fromtimestamp(os.path.getmtime(filename), tz=datetime.UTC)
        resources["metadata"]["modified_date"] = mtime.strftime("%B %-d, %Y")
        nb, problems = nbio.read_submission(filename)
        for p in problems:
            self.log.warning("%s: %s", filename, p)
        return self.from_notebook_node(nb, resources=resources, **kw)


def _course(config):
    return nbio.Course(CourseDirectory(config=config).root)


class RebuildSubmission(NbGraderPreprocessor):
    """Sanitize step: trusted release structure + the student's solution-cell sources."""

    def preprocess(self, nb, resources):
        assignment = resources["nbgrader"]["assignment"]
        notebook = resources["nbgrader"]["notebook"]
        template = _course(self.config).template(assignment, notebook)
        return nbio.rebuild(template, nb), resources


class EngineGrade(NbGraderPreprocessor):
    """Autograde step replacing Execute: verdicts from the sandboxed engine."""

    jobs = Integer(1, help="Sandboxes used by `nbgrader autograde` (one notebook at a time).").tag(
        config=True
    )
    unsafe_no_sandbox = Bool(
        False, help="UNSAFE: run student code without bubblewrap (throw-away machines only)."
    ).tag(config=True)
    checks_package = Unicode("", help="Package holding <assignment>.py check modules.").tag(
        config=True
    )

    def preprocess(self, nb, resources):
        assignment = resources["nbgrader"]["assignment"]
        notebook = resources["nbgrader"]["notebook"]
        student = resources["nbgrader"]["student"]
        cells = nbio.solution_code(nb)
        grade_ids = [gid for gid, _ in nbio.test_cells(nb)]
        global MISSES
        report = None
        future = PRECOMPUTED.pop((assignment, student, notebook), None)
        if future is not None:
            done_digest, done_report = future.result()
            if done_digest == digest(cells):  # graded exactly these cells
                report = done_report
        if report is None:
            MISSES += 1 if future is not None else 0
            eng = engine(
                jobs=self.jobs,
                unsafe=self.unsafe_no_sandbox,
                checks_package=self.checks_package or None,
            )
            report = eng.grade_cells(assignment, grade_ids, cells)
        write_verdicts(nb, report)
        if PROGRESS is not None:
            PROGRESS()
        return nb, resources


class SaveAutoGradesOnce(SaveAutoGrades):
    """nbgrader's SaveAutoGrades with one commit per notebook instead of one per cell
    (same rows, same values: auto_score from utils.determine_grade, the same comments)."""

    def preprocess(self, nb, resources):
        self.notebook_id = resources["nbgrader"]["notebook"]
        self.assignment_id = resources["nbgrader"]["assignment"]
        self.student_id = resources["nbgrader"]["student"]
        self.db_url = resources["nbgrader"]["db_url"]
        self.gradebook = Gradebook(self.db_url)
        with self.gradebook:
            for index, cell in enumerate(nb.cells):
                nb.cells[index], resources = self.preprocess_cell(cell, resources, index)
            self.gradebook.db.commit()
        return nb, resources

    def _add_score(self, cell, resources):
        grade = self.gradebook.find_grade(
            cell.metadata["nbgrader"]["grade_id"],
            self.notebook_id,
            self.assignment_id,
            self.student_id,
        )
        grade.auto_score, _ = utils.determine_grade(cell, self.log)
        grade.needs_manual_grade = grade.manual_score is not None or grade.auto_score is None

    def _add_comment(self, cell, resources):
        comment = self.gradebook.find_comment(
            cell.metadata["nbgrader"]["grade_id"],
            self.notebook_id,
            self.assignment_id,
            self.student_id,
        )
        unchanged = cell.metadata.nbgrader.get("checksum", None) == utils.compute_checksum(cell)
        comment.auto_comment = "No response." if unchanged and not utils.is_task(cell) else None


def write_verdicts(nb, report):
    """Test cells: hidden region removed; no output on pass, an error output on failure."""
    for cell in nb.cells:
        if not nbio.is_test(cell):
            continue
        cell.source = nbio.strip_hidden(cell.source)
        cell.execution_count = None
        verdict = report.verdicts.get(nbio.grade_id(cell))
        if verdict is not None and verdict.passed:
            cell.outputs = []
            continue
        message = verdict.message if verdict is not None else "not graded"
        cell.outputs = [
            nbformat.v4.new_output(
                "error",
                ename="CheckFailed",
                evalue=message,
                traceback=["CheckFailed: " + message],
            )
        ]


def _robust_timestamp(self, dest_path):
    """CourseDirectory.get_existing_timestamp that survives a hostile timestamp.txt.

    nbgrader 0.9.6 crashes on a garbage one (it calls a missing ``self.fail``), which stops grading
    of that student, and would follow a symlink or block on a FIFO. The file is student-controlled:
    anything but a readable regular file with a valid date falls back to the file's own
    modification time (when it was collected), with a warning."""
    path = os.path.join(dest_path, "timestamp.txt")
    try:
        info = os.lstat(path)
    except OSError:
        return None
    if stat.S_ISREG(info.st_mode):
        try:
            return _ORIGINAL_TIMESTAMP(self, dest_path)
        except Exception:
            pass
    mtime = datetime.datetime.fromtimestamp(info.st_mtime, tz=datetime.UTC)
    self.log.warning("Invalid timestamp file %s; using its modification time %s", path, mtime)
    return mtime.replace(tzinfo=None)


def _regular_files(path, exclude=None):
    """nbgrader's find_all_files without symlinks and special files: nbgrader copies every
    extra file of a submission into autograded/ and feedback/ (shutil.copy follows links)."""
    return [f for f in _ORIGINAL_FIND(path, exclude) if not os.path.islink(f) and os.path.isfile(f)]


_ORIGINAL_TIMESTAMP = CourseDirectory.get_existing_timestamp
_ORIGINAL_FIND = nbgrader_base.find_all_files


def configure(c, jobs=1, checks_package="", unsafe_no_sandbox=False):
    """Apply the engine to an nbgrader config object ``c`` (call from nbgrader_config.py)."""
    # two fixes of nbgrader's handling of student-controlled files in submitted/ (see above)
    CourseDirectory.get_existing_timestamp = _robust_timestamp
    nbgrader_base.find_all_files = _regular_files
    from nbconvert.preprocessors import ClearMetadataPreprocessor
    from nbgrader.preprocessors import (
        AssignLatePenalties,
        ClearOutput,
        DeduplicateIds,
        IgnorePattern,
        LimitOutput,
        OverwriteCells,
        OverwriteKernelspec,
    )

    # CheckCellMetadata (jsonschema validation of nbgrader metadata) is left out: after
    # RebuildSubmission every cell's metadata is the trusted release notebook's.

    c.Autograde.exporter_class = RobustExporter
    c.Autograde.sanitize_preprocessors = [
        ClearOutput,
        RebuildSubmission,
        DeduplicateIds,
        OverwriteKernelspec,
        OverwriteCells,
    ]
    c.Autograde.autograde_preprocessors = [
        EngineGrade,
        IgnorePattern,
        ClearMetadataPreprocessor,
        LimitOutput,
        SaveAutoGradesOnce,
        AssignLatePenalties,
    ]
    c.EngineGrade.jobs = jobs
    c.EngineGrade.checks_package = checks_package
    c.EngineGrade.unsafe_no_sandbox = unsafe_no_sandbox
