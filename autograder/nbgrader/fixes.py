"""Every workaround of nbgrader 0.9.6 / SQLAlchemy internals the course needs, in one place.

Each is applied by :func:`apply` (from ``configure`` in nbgrader_plugin.py, i.e. whenever
nbgrader_config.py is loaded) or, for the batch command, used as a context manager. Each has a
one-line reason and the upstream report it works around.
"""

import contextlib
import datetime
import glob
import os
import stat
import sys

from nbgrader.converters import base as nbgrader_base
from nbgrader.converters.autograde import Autograde
from nbgrader.coursedir import CourseDirectory

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
        from autograder.notebook import Course

        folder = self._format_source(assignment_id, student_id)
        names = Course(self.coursedir.root).notebook_names(assignment_id)
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
    alembic_on_path()


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
