"""nbgrader 0.9.6 integration: `nbgrader autograde` takes its verdicts from the engine.

Configured in exercises/nbgrader_config.py by :func:`configure`:

- ``RobustExporter`` reads submissions that are not valid UTF-8/JSON/nbformat-4 without failing.
- ``RebuildSubmission`` (first sanitize step) replaces the submitted notebook by the trusted
  release notebook with only the solution cells' sources taken from the submission.
- ``EngineGrade`` replaces nbgrader's ``Execute``: no kernel runs; its ``grader`` (handed in
  through the traitlets configuration, ``c.EngineGrade.grader``) returns the verdicts, and it
  writes, per test cell, no output (pass: full points) or an error output with the check's
  message (fail: 0 points), so nbgrader's SaveAutoGrades records exactly the engine's scores.
  The error output's ``ename`` names the outcome (ENAMES) and the notebook metadata key
  ``autograder`` holds the grading seconds: class_report.py reads both from autograded/.
  Hidden-test regions are removed from the test cells.
- ``SaveAutoGradesOnce``: nbgrader's SaveAutoGrades with one commit per notebook.
- ``nbgrader generate_feedback`` writes its pages with feedback.OfflineMathHTMLExporter (math
  as MathML, no MathJax from a CDN).

Workarounds of nbgrader internals live in nbgrader_fixes.py.
"""

import copy
import datetime
import hashlib
import html
import json
import os
import re
import types
from pathlib import Path

import nbformat
from nbconvert.exporters import NotebookExporter
from nbconvert.exporters.exporter import ResourcesDict
from nbformat import validator
from nbformat.v4 import nbjson, rwbase
from nbgrader import utils
from nbgrader.api import Comment, Grade, Gradebook, MissingEntry
from nbgrader.coursedir import CourseDirectory
from nbgrader.preprocessors import NbGraderPreprocessor, OverwriteCells, SaveAutoGrades
from sqlalchemy.orm import joinedload
from traitlets import Bool, Instance, Integer, Unicode, default

from autograder.nbgrader import fixes as nbgrader_fixes
from autograder import notebook as nbio
from autograder.report import Report, Verdict

# ename of a failed test cell's error output, by the verdict's outcome (see report.OUTCOMES)
ENAMES = {
    "failed": "CheckFailed",
    "crashed": "StudentCrashed",
    "timeout": "StudentTimeout",
    "grader-error": "GraderError",
}


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
            from autograder.engines.local import Engine
            from autograder.judge.sandbox import SandboxLimits

            self.engine = Engine(
                jobs=preprocessor.jobs,
                limits=SandboxLimits(parent=preprocessor),
                unsafe=preprocessor.unsafe_no_sandbox,
                checks_dir=preprocessor.checks_dir or None,
            )
        assignment = resources["nbgrader"]["assignment"]
        grade_ids = [gid for gid, _ in nbio.test_cells(nb)]
        cells, solutions = nbio.graded_code(nb), nbio.solution_code(nb)
        return self.engine.submit(assignment, grade_ids, cells, solutions).result()


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
            grade_ids = [gid for gid, _ in nbio.test_cells(nb)]
            solutions = nbio.solution_code(nb)
            name = f"{key[1]}/{key[2]}"
            report = self.engine.submit(key[0], grade_ids, cells, solutions, name=name).result()
        if self.progress is not None:
            self.progress()
        return report


class RobustExporter(NotebookExporter):
    """NotebookExporter whose from_filename never fails on a broken submission, and that
    converts the notebook it read itself without copying it."""

    def from_notebook_node(self, nb, resources=None, **kw):
        return self._export(copy.deepcopy(nb), resources)  # the caller keeps its notebook

    def _export(self, nb, resources):
        """NotebookExporter.from_notebook_node for a notebook nothing else holds: no deep
        copies (nbconvert makes two and nbformat.writes a third), and no second validation in
        nbformat.writes (``_preprocess`` validated it). Same JSON as nbformat writes."""
        if nb.get("nbformat") != self.nbformat_version:
            return super().from_notebook_node(nb, resources)
        resources = self._init_resources(resources)
        nb, resources = self._preprocess(nb, resources)
        resources["output_suffix"] = ".nbconvert"
        nb = rwbase.strip_transient(rwbase.split_lines(nb))
        text = json.dumps(
            nb,
            cls=nbjson.BytesEncoder,
            indent=1,
            sort_keys=True,
            separators=(",", ": "),
            ensure_ascii=False,
        )
        return text + "\n", resources

    def _preprocess(self, nb, resources):
        """nbconvert's _preprocess without its defensive deep copy of the notebook (see
        _export). Validation as configured."""
        resources = copy.deepcopy(resources)
        if hasattr(validator, "normalize"):
            _, nb = validator.normalize(nb)
        for preprocessor in self._preprocessors:
            nb, resources = preprocessor(nb, resources)
            if not self.optimistic_validation:
                self._validate_preprocessor(nb, preprocessor)
        if self.optimistic_validation and self._preprocessors:
            self._validate_preprocessor(nb, preprocessor)
        return nb, resources

    def _ours(self, folder, meta):
        """True for the folder autograded/<student>/<assignment>/ that the sanitize step wrote."""
        coursedir = CourseDirectory(config=self.config)
        ours = coursedir.format_path(
            coursedir.autograded_directory, meta["student"], meta["assignment"]
        )
        return Path(folder).resolve() == Path(ours).resolve()

    def from_filename(self, filename, resources=None, **kw):
        """Read a submission with :meth:`Course.submission` (a renamed file found, problems in
        ``resources["autograder_problems"]`` for RebuildSubmission), or, in the autograde step,
        the sanitized copy this course wrote into autograded/ (trusted: its metadata keeps the
        problems)."""
        if resources is None:
            resources = ResourcesDict()
        if "metadata" not in resources or resources["metadata"] == "":
            resources["metadata"] = ResourcesDict()
        path, basename = os.path.split(filename)
        resources["metadata"]["name"] = os.path.splitext(basename)[0]
        resources["metadata"]["path"] = path
        meta = resources.get("nbgrader", {})
        max_bytes = nbio.SubmissionLimits(parent=self).max_bytes
        if "student" not in meta:  # not called by an nbgrader converter: a plain untrusted file
            nb, problems = nbio.read_submission(filename, max_bytes)
        elif not self._ours(path, meta):  # fail closed: all but our own output is untrusted
            nb, problems = _course(self.config).submission(
                meta["assignment"], meta["student"], meta["notebook"], max_bytes=max_bytes
            )
        else:
            nb, problems = nbformat.read(filename, as_version=4), []
        for p in problems:
            self.log.warning("%s: %s", filename, p)
        if problems:
            resources["autograder_problems"] = problems
        mtime = os.path.getmtime(filename) if os.path.exists(filename) else 0
        mtime = datetime.datetime.fromtimestamp(mtime, tz=datetime.UTC)
        resources["metadata"]["modified_date"] = mtime.strftime("%B %-d, %Y")
        return self._export(nb, resources)


def _course(config):
    return nbio.Course(CourseDirectory(config=config).root)


class RebuildSubmission(NbGraderPreprocessor):
    """Sanitize step: trusted release structure + the student's solution-cell sources; the
    submission's problems (see RobustExporter.from_filename) go into the notebook metadata
    ``autograder`` for EngineGrade."""

    def preprocess(self, nb, resources):
        assignment = resources["nbgrader"]["assignment"]
        notebook = resources["nbgrader"]["notebook"]
        template = _course(self.config).template(assignment, notebook)
        rebuilt = nbio.rebuild(template, nb)
        rebuilt.metadata["autograder"] = {"problems": resources.get("autograder_problems", [])}
        return rebuilt, resources


class EngineGrade(NbGraderPreprocessor):
    """Autograde step replacing Execute: verdicts from the sandboxed engine via ``grader``."""

    grader = Instance(Grader, help="Where the verdicts come from (see Grader).").tag(config=True)
    jobs = Integer(1, help="Sandboxes used by `nbgrader autograde` (one notebook at a time).").tag(
        config=True
    )
    unsafe_no_sandbox = Bool(
        False, help="UNSAFE: run student code without bubblewrap (throw-away machines only)."
    ).tag(config=True)
    checks_dir = Unicode(
        "", help="Folder of <assignment>.py check modules (default: built in)."
    ).tag(config=True)

    @default("grader")
    def _default_grader(self):
        return OnDemandGrader()

    def preprocess(self, nb, resources):
        report = self.grader.grade(self, resources, nb)
        meta = nb.metadata.get("autograder")
        found = meta.get("problems", []) if isinstance(meta, dict) else []
        write_verdicts(nb, Report(report.verdicts, report.seconds, found + report.problems))
        return nb, resources


def _lookup(rows, what):
    """``find(name, *ignored)`` over ``{name: row}``, raising nbgrader's MissingEntry like the
    Gradebook.find_* method it stands in for (the ignored arguments are notebook, assignment,
    student: the rows were loaded for one notebook)."""

    def find(name, *_ignored):
        try:
            return rows[name]
        except KeyError:
            raise MissingEntry(f"No such {what}: {name}") from None

    return find


class OverwriteCellsOnce(OverwriteCells):
    """nbgrader's OverwriteCells with the notebook's source and grade cells loaded in one query
    each instead of two queries per cell (same checks, same overwrites)."""

    def preprocess(self, nb, resources):
        if self.add_missing_cells:  # needs the whole Gradebook: nbgrader's own path
            return super().preprocess(nb, resources)
        self.notebook_id = resources["nbgrader"]["notebook"]
        self.assignment_id = resources["nbgrader"]["assignment"]
        with Gradebook(resources["nbgrader"]["db_url"]) as gradebook:
            source = gradebook.find_notebook(self.notebook_id, self.assignment_id)
            graded = {c.name: c for c in source.task_cells}
            graded.update({c.name: c for c in source.grade_cells})  # grade cells first, as nbgrader
            self.gradebook = types.SimpleNamespace(
                find_source_cell=_lookup({c.name: c for c in source.source_cells}, "source cell"),
                find_graded_cell=_lookup(graded, "grade cell"),
            )
            return NbGraderPreprocessor.preprocess(self, nb, resources)  # cell by cell

    def preprocess_cell(self, cell, resources, index):
        """A locked cell takes the gradebook's source before nbgrader compares checksums.

        The gradebook keeps a test cell with its hidden tests and their checksum, the release
        notebook has them removed, so stock nbgrader warns "Attribute 'checksum' for cell ...
        has changed!" for every such cell of every submission and then restores the gradebook's
        source anyway (upstream: jupyter/nbgrader#1961). After RebuildSubmission every locked
        cell is the trusted release's, so the warning could only ever be this false alarm."""
        gid = nbio.grade_id(cell)
        if gid is not None and utils.is_locked(cell):
            try:
                cell.source = self.gradebook.find_source_cell(gid).source
            except MissingEntry:
                pass
        return super().preprocess_cell(cell, resources, index)


class SaveAutoGradesOnce(SaveAutoGrades):
    """nbgrader's SaveAutoGrades with one commit per notebook instead of one per cell, and the
    submission's grades and comments loaded in one query each instead of one per cell (same
    rows, same values: auto_score from utils.determine_grade, the same comments)."""

    def preprocess(self, nb, resources):
        self.notebook_id = resources["nbgrader"]["notebook"]
        self.assignment_id = resources["nbgrader"]["assignment"]
        self.student_id = resources["nbgrader"]["student"]
        self.db_url = resources["nbgrader"]["db_url"]
        self.gradebook = Gradebook(self.db_url)
        with self.gradebook:
            submitted = self.gradebook.find_submission_notebook(
                self.notebook_id, self.assignment_id, self.student_id
            )
            self._find_grade = _lookup(self._rows(Grade, submitted), "grade")
            self._find_comment = _lookup(self._rows(Comment, submitted), "comment")
            for index, cell in enumerate(nb.cells):
                nb.cells[index], resources = self.preprocess_cell(cell, resources, index)
            self.gradebook.db.commit()
        return nb, resources

    def _rows(self, table, submitted):
        """{cell name: row} of ``table`` (Grade or Comment) for one submitted notebook."""
        query = self.gradebook.db.query(table).options(joinedload(table.cell))
        return {row.cell.name: row for row in query.filter(table.notebook_id == submitted.id)}

    def _add_score(self, cell, resources):
        grade = self._find_grade(cell.metadata["nbgrader"]["grade_id"])
        grade.auto_score, _ = utils.determine_grade(cell, self.log)
        grade.needs_manual_grade = grade.manual_score is not None or grade.auto_score is None

    def _add_comment(self, cell, resources):
        comment = self._find_comment(cell.metadata["nbgrader"]["grade_id"])
        unchanged = cell.metadata.nbgrader.get("checksum", None) == utils.compute_checksum(cell)
        comment.auto_comment = "No response." if unchanged and not utils.is_task(cell) else None


def write_verdicts(nb, report):
    """Test cells: hidden region removed; no output on pass, an error output on failure, named
    by its outcome (ENAMES). The notebook metadata ``autograder`` gets the grading seconds and
    the report's problems, which also go into a markdown cell at the top (the student's
    feedback page shows it)."""
    for cell in nb.cells:
        if not nbio.is_test(cell):
            continue
        cell.source = nbio.strip_hidden(cell.source)
        cell.execution_count = None
        gid = nbio.grade_id(cell)
        verdict = report.verdicts.get(gid) or Verdict(gid, "grader-error", "not graded")
        if verdict.passed:
            cell.outputs = []
            continue
        ename = ENAMES.get(verdict.outcome, "CheckFailed")
        cell.outputs = [
            nbformat.v4.new_output(
                "error",
                ename=ename,
                evalue=verdict.message,
                traceback=[f"{ename}: {verdict.message}"],
            )
        ]
    problems = [str(p) for p in report.problems]
    nb.metadata["autograder"] = {"seconds": round(report.seconds, 3), "problems": problems}
    if problems:
        items = "\n".join(f"- {markdown_text(p)}" for p in problems)
        cell = nbformat.v4.new_markdown_cell(f"{PROBLEMS_HEADING}\n\n{items}")
        cell.metadata["autograder"] = {"problems": True}
        nb.cells.insert(0, cell)


PROBLEMS_HEADING = "### ⚠ 채점 안내: 제출물에서 발견한 문제\n\n점수는 아래 내용대로 매겼습니다."
MARKDOWN_SPECIAL = re.compile(r"([\\`*_\[\]#|~$])")


def markdown_text(text):
    """``text`` as literal markdown (it may hold a student's file or cell names): HTML and
    markdown syntax escaped."""
    escaped = html.escape(str(text)[:2000], quote=False)
    return MARKDOWN_SPECIAL.sub(r"\\\1", escaped).replace("\n", " ")


def configure(c, jobs=1, checks_dir="", unsafe_no_sandbox=False):
    """Apply the engine to an nbgrader config object ``c`` (call from nbgrader_config.py)."""
    nbgrader_fixes.apply()
    from nbconvert.preprocessors import ClearMetadataPreprocessor
    from nbgrader.preprocessors import (
        AssignLatePenalties,
        ClearOutput,
        DeduplicateIds,
        IgnorePattern,
        LimitOutput,
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
        OverwriteCellsOnce,
    ]
    c.Autograde.autograde_preprocessors = [
        EngineGrade,
        IgnorePattern,
        ClearMetadataPreprocessor,
        LimitOutput,
        SaveAutoGradesOnce,
        AssignLatePenalties,
    ]
    # validate each notebook once, after the last preprocessor, not after every one of them
    # (nbconvert's own option; the rebuilt notebooks are valid by construction)
    c.Exporter.optimistic_validation = True
    # ClearMetadataPreprocessor is off unless a course enables it; then it keeps the grading
    # seconds write_verdicts stores (read by `python -m autograder report`)
    keep = {("language_info", "name"), "autograder"}  # nbconvert's default plus ours
    c.ClearMetadataPreprocessor.preserve_nb_metadata_mask = keep
    c.EngineGrade.grader = OnDemandGrader()
    c.EngineGrade.jobs = jobs
    c.EngineGrade.checks_dir = checks_dir
    c.EngineGrade.unsafe_no_sandbox = unsafe_no_sandbox
    # feedback pages show their math offline: MathML written with the page, no MathJax CDN
    c.GenerateFeedback.exporter_class = "autograder.nbgrader.feedback_page.OfflineMathHTMLExporter"
