"""Every workaround of nbgrader 0.9.6, nbconvert, jsonschema and SQLAlchemy internals the course
needs, in one place: each with its Reason and the Upstream report it works around.

Applied when this module is imported (without_iri_checker: the batch command imports it
first), by :func:`apply` (from ``configure`` in config.py, i.e. whenever nbgrader_config.py is
loaded), as a context manager (shared_gradebook_engine, the batch command), or by subclassing
(NoCopyExport, OverwriteCellsOnce, SaveAutoGradesOnce: stock classes with a private method
replaced).
"""

import sys


def without_iri_checker():
    """Keep jsonschema from building its IRI format checker in this process.

    Reason: nbformat validates every notebook with jsonschema, which compiles a lark grammar for
    the "iri" string formats when rfc3987_syntax is installed (Jupyter's dependencies install
    it): 0.65 s of CPU at every start of the batch command, while the judges and their sandboxes
    start beside it. No notebook schema uses those formats. Only before jsonschema is imported
    (a process that already has it keeps what it has). Upstream: not reported (jsonschema builds
    its format checkers eagerly by design).
    """
    if "jsonschema" not in sys.modules:
        sys.modules.setdefault("rfc3987_syntax", None)


without_iri_checker()  # now, before nbformat (imported below) imports jsonschema
# isort: split
import contextlib
import copy
import datetime
import functools
import glob
import json
import os
import stat
import types

from nbformat import validator
from nbformat.v4 import nbjson, rwbase
from nbgrader import api, utils
from nbgrader.api import Comment, Grade, Gradebook, MissingEntry
from nbgrader.converters import base as nbgrader_base
from nbgrader.converters.autograde import Autograde
from nbgrader.coursedir import CourseDirectory
from nbgrader.preprocessors import NbGraderPreprocessor, OverwriteCells, SaveAutoGrades
from sqlalchemy.orm import joinedload

from autograder import notebook as nbio

_ORIGINAL_TIMESTAMP = CourseDirectory.get_existing_timestamp
_ORIGINAL_FIND = nbgrader_base.find_all_files
_ORIGINAL_INIT_ASSIGNMENT = Autograde.init_assignment
_ORIGINAL_INIT_NOTEBOOKS = Autograde.init_notebooks


def robust_timestamp(self, dest_path):
    """CourseDirectory.get_existing_timestamp that survives a hostile timestamp.txt.

    Reason: on an unparsable timestamp.txt nbgrader 0.9.6 calls a missing ``self.fail`` and stops
    grading that student; it would also follow a symlink or block on a FIFO. The file is
    student-controlled, so anything but a readable regular file with a valid date falls back to
    the file's modification time, with a warning. Upstream: the invalid-timestamp path was added
    by jupyter/nbgrader#591 and its error branch is broken in 0.9.6 (not reported upstream).
    """
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


def regular_files(path, exclude=None):
    """nbgrader's find_all_files without symlinks and special files.

    Reason: nbgrader copies every extra file of a submission into autograded/ and feedback/ with
    shutil.copy, which follows a student's symlink to, e.g., the instructor's solutions.
    Upstream: not reported (same class as Submitty/Submitty#8997 for another grader).
    """
    return [f for f in _ORIGINAL_FIND(path, exclude) if not os.path.islink(f) and os.path.isfile(f)]


def alembic_on_path():
    """Put this interpreter's scripts folder on PATH.

    Reason: nbgrader.api.get_alembic_version runs the ``alembic`` command by name when it creates
    a gradebook, which fails when the venv is not activated. Upstream: not reported (nbgrader
    already uses sys.executable for its own commands since jupyter/nbgrader#695).
    """
    bindir = os.path.dirname(sys.executable)
    if bindir not in os.environ.get("PATH", "").split(os.pathsep):
        os.environ["PATH"] = bindir + os.pathsep + os.environ.get("PATH", "")


@functools.cache
def alembic_head():
    """nbgrader.api.get_alembic_version, read in this process.

    Reason: nbgrader writes the head revision of its migration scripts into every new gradebook
    and finds it by running the ``alembic heads`` command: a new interpreter importing alembic,
    about 1 s of CPU on an idle machine and several seconds under load, for every
    `generate_assignment` in a fresh course root (tools/release.py: one per assignment) and every
    new course. The same scripts read here give the same revision. Upstream: not reported.
    """
    from alembic.config import Config
    from alembic.script import ScriptDirectory

    config = Config()
    config.set_main_option(
        "script_location", os.path.join(os.path.dirname(api.__file__), "alembic")
    )
    return ScriptDirectory.from_config(config).get_current_head()


def every_notebook(self, assignment_id, student_id):
    """Autograde.init_assignment that autogrades every notebook of the assignment, whatever
    the files in the submission folder are called.

    Reason: nbgrader 0.9.6 grades the files it finds by name: a notebook saved as
    ``masking (1).ipynb`` is skipped as unknown ("Skipping unknown notebook") and the missing
    ``masking.ipynb`` gets 0 points with nothing in autograded/ or the feedback, so the student
    never learns why. With this, nbgrader converts ``<name>.ipynb`` for each notebook of the
    assignment; RobustExporter reads it through notebook.Course.submission, which finds a
    renamed file or flags the missing one. Only without ``--notebook``. Upstream: not reported
    (nbgrader's behaviour is by design, see "No submitted file" in converters/autograde.py).
    """
    if self.coursedir.notebook_id == "*":
        folder = self._format_source(assignment_id, student_id)
        names = nbio.Course(self.coursedir.root).notebook_names(assignment_id)
        self.notebooks = [os.path.join(folder, f"{name}.ipynb") for name in names]
    _ORIGINAL_INIT_ASSIGNMENT(self, assignment_id, student_id)


def every_submission(self):
    """Autograde.init_notebooks that keeps a submission folder holding no ``.ipynb`` at all.

    Reason: nbgrader 0.9.6 drops such a folder with a warning, so the student is missing from
    the gradebook and gets no feedback; with :func:`every_notebook` it is graded as empty, with
    a feedback page saying that the notebook was not submitted. Only without ``--notebook``.
    Upstream: not reported (by design in converters/base.py, init_notebooks).
    """
    pattern = self._format_source(self.coursedir.assignment_id, self.coursedir.student_id)
    try:
        _ORIGINAL_INIT_NOTEBOOKS(self)
    except nbgrader_base.NbGraderException:
        if self.coursedir.notebook_id != "*":
            raise
        self.assignments = {}
    if self.coursedir.notebook_id == "*":
        for folder in glob.glob(pattern):
            if os.path.isdir(folder) and not os.path.islink(folder):
                self.assignments.setdefault(folder, [])
    if not self.assignments:
        raise nbgrader_base.NbGraderException(f"No submissions were matched by '{pattern}'")


def apply():
    """Apply the fixes that hold for every nbgrader command of the course."""
    CourseDirectory.get_existing_timestamp = robust_timestamp
    Autograde.init_assignment = every_notebook
    Autograde.init_notebooks = every_submission
    nbgrader_base.find_all_files = regular_files
    api.get_alembic_version = alembic_head
    alembic_on_path()  # `nbgrader db upgrade` still runs the command


@contextlib.contextmanager
def shared_gradebook_engine():
    """Within the batch command, every ``Gradebook(db_url)`` reuses one SQLAlchemy engine and
    creates the tables once.

    Reason: nbgrader opens about nine Gradebooks per autograded notebook, each creating an
    engine, reflecting the schema, listing the tables and checking (with a commit) that the
    course row exists (most of nbgrader's per-notebook time). Same database, same rows; only
    the set-up is shared: the table list is read again only until the tables exist, and each
    course id is checked once per engine. Upstream: not reported (see jupyter/nbgrader#785 for
    gradebook speed in general).
    """
    import nbgrader.api as api

    create_engine, create_all = api.create_engine, api.Base.metadata.create_all
    inspect, check_course = api.inspect, api.Gradebook.check_course
    engines, ready, inspectors, courses = {}, set(), {}, set()

    def cached_engine(url, **kw):
        key = (str(url), tuple(sorted(kw.items())))
        if key not in engines:
            engines[key] = create_engine(url, **kw)
        return engines[key]

    def create_all_once(bind=None, **kw):
        if id(bind) not in ready:
            create_all(bind=bind, **kw)
            ready.add(id(bind))

    def cached_inspect(engine):
        if id(engine) not in ready:  # tables not created yet: the table list may change
            return inspect(engine)
        if id(engine) not in inspectors:  # an Inspector caches get_table_names
            inspectors[id(engine)] = inspect(engine)
        return inspectors[id(engine)]

    def check_course_once(gradebook, course_id="default_course", **kw):
        key = (id(gradebook.engine), course_id)
        if key not in courses:
            check_course(gradebook, course_id, **kw)
            courses.add(key)

    api.create_engine, api.Base.metadata.create_all = cached_engine, create_all_once
    api.inspect, api.Gradebook.check_course = cached_inspect, check_course_once
    try:
        yield
    finally:
        api.create_engine, api.Base.metadata.create_all = create_engine, create_all
        api.inspect, api.Gradebook.check_course = inspect, check_course
        for e in engines.values():
            e.dispose()


class NoCopyExport:
    """A mixin for nbconvert's NotebookExporter (exporter.RobustExporter): convert a notebook
    without copying it.

    Reason: nbconvert deep-copies the notebook twice per conversion and nbformat.writes copies
    and validates it once more; for the notebook the exporter read itself nothing else holds it.
    Upstream: not reported (nbconvert's copies are defensive by design).
    """

    def from_notebook_node(self, nb, resources=None, **kw):
        return self._export(copy.deepcopy(nb), resources)  # the caller keeps its notebook

    def _export(self, nb, resources):
        """NotebookExporter.from_notebook_node for a notebook nothing else holds: no deep
        copies, and no second validation in nbformat.writes (``_preprocess`` validated it).
        Same JSON as nbformat writes."""
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
        """nbconvert's private Exporter._preprocess without its defensive deep copy of the
        notebook (see _export). Validation as configured."""
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


def lookup(rows, what):
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
    each instead of two queries per cell (same checks, same overwrites).

    Reason: two gradebook queries per cell were most of the sanitize step's time; and see
    preprocess_cell. Upstream: not reported (jupyter/nbgrader#785: gradebook speed in general).
    """

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
                find_source_cell=lookup({c.name: c for c in source.source_cells}, "source cell"),
                find_graded_cell=lookup(graded, "grade cell"),
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


NO_RESPONSE = "답안을 쓰지 않았습니다 (배포본 그대로입니다)."  # nbgrader's "No response."


class SaveAutoGradesOnce(SaveAutoGrades):
    """nbgrader's SaveAutoGrades with one commit per notebook instead of one per cell, and the
    submission's grades and comments loaded in one query each instead of one per cell (same
    rows, same values: auto_score from utils.determine_grade, the same comments, in Korean).

    Reason: a commit and two queries per cell (the private ``_add_score`` and ``_add_comment``
    replaced below) made most of the autograde step's database time. Upstream: not reported
    (jupyter/nbgrader#785: gradebook speed in general).
    """

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
            self._find_grade = lookup(self._rows(Grade, submitted), "grade")
            self._find_comment = lookup(self._rows(Comment, submitted), "comment")
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
        comment.auto_comment = NO_RESPONSE if unchanged and not utils.is_task(cell) else None
