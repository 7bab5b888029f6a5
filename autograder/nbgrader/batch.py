"""The batch command's nbgrader side: the submissions of an assignment read as nbgrader will read
them, the gradebook checked before anything is written, and nbgrader's own Autograde converter
run in this process with the engine's verdicts (BatchGrader), so that gradebook.db and
autograded/ are nbgrader's. The course lock keeps two runs from writing one course at once.
"""

import contextlib
import fcntl
import gc
import logging
import os
import sys
import time
import warnings
from pathlib import Path

from nbgrader.api import Gradebook, MissingEntry
from nbgrader.coursedir import CourseDirectory

from autograder import notebook as nbio
from autograder.nbgrader.fixes import shared_gradebook_engine
from autograder.nbgrader.graders import BatchGrader, digest


def collect(course, assignment, student, max_bytes):
    """[(student, notebook, template, submission_nb)]: every notebook of the assignment for
    every student folder under submitted/, read as nbgrader autograde will read it
    (notebook.Course.submission: a renamed file found, a missing one graded empty)."""
    names = course.notebook_names(assignment)
    templates = {n: course.template(assignment, n) for n in names}
    tasks = []
    for sid, _ in course.submissions(assignment, student):
        for n in names:
            nb, _ = course.submission(assignment, sid, n, templates[n], max_bytes)
            tasks.append((sid, n, templates[n], nb))
    return tasks


def gradebook_location(config, root):
    """Where nbgrader writes the gradebook: ``c.CourseDirectory.db_url`` (password hidden) or
    the default gradebook.db in the course root."""
    url = config.CourseDirectory.get("db_url")
    if not url:
        return str(root / "gradebook.db")
    from sqlalchemy.engine import make_url

    return make_url(url).render_as_string(hide_password=True)


def grade_assignments(engine, config, root, assignments, student=None, progress=None):
    """Grade ``assignments`` (every student, or ``student``) with ``engine`` and let nbgrader
    write the gradebook and autograded/; yields, per assignment once nbgrader is done,
    {"assignment", "seconds", "failed" (nbgrader's exit code, or "no submissions"), "graded"
    (submissions), "not_written" (students graded but not written), "regraded", "coursedir"}. Every
    assignment's notebooks go to the judges first: they never wait for nbgrader.
    ``progress(assignment, total)`` -> a callable advanced once per notebook, with .close()."""
    # what is loaded by now (nbgrader, SQLAlchemy, the course's configuration) stays for the
    # whole run: the collector need not walk it again, and walks what the run allocates less
    # often (nbgrader's ORM objects made most of this process's collections)
    gc.freeze()
    gc.set_threshold(5000, 10, 10)
    course = nbio.Course(root)
    coursedir = CourseDirectory(config=config, root=str(root))
    max_bytes = nbio.SubmissionLimits(config=config).max_bytes
    planned = []
    for assignment in assignments:
        tasks = collect(course, assignment, student, max_bytes)
        grader = BatchGrader(engine)
        for sid, n, template, nb in tasks:
            future, rebuilt = engine.submit_notebook(assignment, template, nb, name=f"{sid}/{n}")
            grader.expect((assignment, sid, n), future, digest(nbio.graded_code(rebuilt)))
        planned.append((assignment, tasks, grader))
    for assignment, tasks, grader in planned:
        if not tasks:
            yield {"assignment": assignment, "failed": "no submissions", "submitted": course.root}
            continue
        t1 = time.monotonic()
        bar = progress(assignment, len(tasks)) if progress else None
        grader.progress = bar.update if bar else None
        failed = run_nbgrader_autograde(course, assignment, student, grader)
        if bar:
            bar.close()
        not_written = {key[1] for key in grader.futures}
        for future, _ in grader.futures.values():
            future.cancel()
        yield {
            "assignment": assignment,
            "seconds": time.monotonic() - t1,
            "failed": failed,
            "not_written": not_written,
            "regraded": grader.regraded,
            "coursedir": coursedir,
            "graded": len({sid for sid, _, _, _ in tasks}),
        }


def missing_in_gradebook(config, root, assignments):
    """A Korean error when the gradebook lacks one of ``assignments`` or one of its notebooks
    (the release was not generated in this course root, or only its due date was imported:
    nbgrader would grade nothing, or against a max_score of 0), else None."""
    coursedir = CourseDirectory(config=config, root=str(root))
    url = coursedir.db_url
    where = gradebook_location(config, root)
    if url.startswith("sqlite:///") and not Path(url.removeprefix("sqlite:///")).is_file():
        missing = list(assignments)
    else:
        missing = []
        course = nbio.Course(root)
        with Gradebook(url, coursedir.course_id) as gb:
            for a in assignments:
                try:
                    known = {nb.name for nb in gb.find_assignment(a).notebooks}
                except MissingEntry:
                    known = set()
                if not set(course.notebook_names(a)) <= known:  # e.g. only a due date imported
                    missing.append(a)
    if not missing:
        return None
    names = " ".join(missing)
    return (
        f"채점하지 않았습니다: gradebook({where})에 과제 {', '.join(missing)}의 노트북이 "
        "없습니다(마감일만 넣었거나 다른 곳에서 배포본을 만들었습니다). "
        f"이 과정 폴더({root})에서 `nbgrader generate_assignment {names}`를 먼저 실행하세요"
        "(release/ 폴더만 복사해 온 경우에도 필요합니다)."
    )


def run_nbgrader_autograde(course, assignment, student, grader):
    """nbgrader's Autograde converter in-process, taking its verdicts from ``grader``."""
    from nbgrader.apps.autogradeapp import AutogradeApp

    argv = [assignment, "--force"] + (["--student", student] if student else [])
    return run_nbgrader_app(AutogradeApp, argv, course.root, grader)


def run_nbgrader_app(app_class, argv, root, grader=None):
    """The nbgrader app ``app_class`` (Autograde, GenerateFeedback, ...) in this process, in the
    course root ``root`` (its nbgrader_config.py read from there), quietly -> its exit code;
    ``grader`` (graders.BatchGrader): the verdicts of this run (c.EngineGrade.grader), not a new
    engine. The batch command and the grading service both run nbgrader through it."""
    warnings.filterwarnings("ignore")
    logging.getLogger("traitlets").setLevel(logging.ERROR)
    app = app_class()
    cwd = os.getcwd()
    os.chdir(root)
    try:
        with shared_gradebook_engine():
            app.initialize([*argv, "--log-level=ERROR"])
            if grader is not None:
                app.config.EngineGrade.grader = grader
            app.start()
    except SystemExit as e:
        return e.code or 0
    finally:
        os.chdir(cwd)
    return 0


@contextlib.contextmanager
def course_lock(root):
    """Hold ``<root>/.autograder.lock`` (an exclusive flock) while grading: a second grading
    run on the same course stops at once with a Korean message naming the first one's process
    id, instead of interleaving its writes to the gradebook and autograded/. The kernel drops
    the lock when the process ends, however it ends."""
    path = Path(root) / ".autograder.lock"
    with open(path, "a+") as f:
        try:
            fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            f.seek(0)
            holder = f.read().strip() or "?"
            sys.exit(
                f"다른 채점이 이 과정 폴더에서 진행 중입니다(프로세스 {holder}, 잠금 파일 {path}). "
                "그 채점이 끝난 뒤 다시 실행하세요."
            )
        f.seek(0)
        f.truncate()
        f.write(f"{os.getpid()}\n")
        f.flush()
        try:
            yield
        finally:
            f.seek(0)
            f.truncate()
