"""Batch grading: ``python -m autograder grade <assignment> [--student ID] [--jobs N]``;
class report: ``python -m autograder report <assignment>`` (see class_report.py).

Run from the course root (exercises/). The course's nbgrader_config.py is read first (sandbox
limits ``c.SandboxLimits``, ``c.EngineGrade.checks_dir``); the judge processes start at once and
grade the submissions in parallel, while nbgrader's own Autograde converter, running in this
process, takes the finished verdicts (handed in as ``c.EngineGrade.grader``) and writes
gradebook.db and autograded/ one notebook at a time, so that ``nbgrader generate_feedback`` and
``nbgrader export`` work afterwards. Several assignments share one set of warm judges.

With ``--scheduler tcp://HOST:PORT`` the notebooks are graded by the workers of a Dask
scheduler instead (autograder/engines/cluster.py); the gradebook is written here all the same. Without
it Dask is not imported.
"""

import argparse
import contextlib
import fcntl
import gc
import logging
import os
import statistics
import sys
import time
import warnings
from pathlib import Path

from autograder.judge.sandbox import UNSAFE_FLAG, SandboxLimits, SandboxUnavailable


def parse(argv):
    p = argparse.ArgumentParser(prog="python -m autograder")
    sub = p.add_subparsers(dest="cmd", required=True)
    g = sub.add_parser("grade", help="grade every submission of an assignment (run in exercises/)")
    g.add_argument("assignment", nargs="+", help="one or more assignment names")
    g.add_argument("--student", help="grade only this student id")
    g.add_argument(
        "--jobs",
        type=int,
        default=os.cpu_count(),
        help="parallel judges/sandboxes (local grading; a Dask worker has one per thread)",
    )
    g.add_argument("--course", default=".", help="course root (default: current directory)")
    g.add_argument(
        "--wall", type=float, help="seconds per check (default: c.SandboxLimits.wall_s, 30)"
    )
    g.add_argument("--quiet", action="store_true", help="no progress bar")
    g.add_argument(
        "--scheduler",
        metavar="ADDRESS",
        help="grade on the workers of this Dask scheduler (tcp://HOST:PORT) instead of here",
    )
    g.add_argument(
        "--run-seed",
        type=int,
        help="reproduce the check inputs of an earlier run (default: a new secret seed)",
    )
    g.add_argument(
        UNSAFE_FLAG,
        dest="unsafe",
        action="store_true",
        help="UNSAFE: run student code WITHOUT bubblewrap (throw-away machines only)",
    )
    r = sub.add_parser(
        "report", help="class report of graded assignments: reports/<assignment>.html and .csv"
    )
    r.add_argument("assignment", nargs="+", help="one or more graded assignment names")
    r.add_argument("--course", default=".", help="course root (default: current directory)")
    r.add_argument("--out", help="output folder (default: <course>/reports)")
    r.add_argument("--quiet", action="store_true", help="no progress bar")
    return p.parse_args(argv)


def course_config(root, required=True):
    """The traitlets Config of the course (its nbgrader_config.py, which sets c.SandboxLimits).
    Without one: exit with a hint (the commands run in exercises/), or an empty Config when not
    ``required``."""
    from traitlets.config import Config
    from traitlets.config.loader import PyFileConfigLoader

    path = Path(root) / "nbgrader_config.py"
    if not path.is_file():
        if required:
            sys.exit(f"no nbgrader_config.py in {root} (run from exercises/)")
        return Config()
    return PyFileConfigLoader(path.name, path=str(path.parent)).load_config()


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


def missing_in_gradebook(config, root, assignments):
    """A Korean error when the gradebook lacks one of ``assignments`` or one of its notebooks
    (the release was not generated in this course root, or only its due date was imported:
    nbgrader would grade nothing, or against a max_score of 0), else None."""
    from nbgrader.api import Gradebook, MissingEntry
    from nbgrader.coursedir import CourseDirectory

    from autograder.notebook import Course

    coursedir = CourseDirectory(config=config, root=str(root))
    url = coursedir.db_url
    where = gradebook_location(config, root)
    if url.startswith("sqlite:///") and not Path(url.removeprefix("sqlite:///")).is_file():
        missing = list(assignments)
    else:
        missing = []
        course = Course(root)
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

    from autograder.nbgrader.fixes import shared_gradebook_engine

    warnings.filterwarnings("ignore")
    logging.getLogger("traitlets").setLevel(logging.ERROR)
    app = AutogradeApp()
    argv = [assignment, "--force", "--log-level=ERROR"]
    if student:
        argv += ["--student", student]
    cwd = os.getcwd()
    os.chdir(course.root)
    try:
        with shared_gradebook_engine():
            app.initialize(argv)
            app.config.EngineGrade.grader = grader  # this run's verdicts, not a new engine
            app.start()
    except SystemExit as e:
        return e.code or 0
    finally:
        os.chdir(cwd)
    return 0


def gradebook_location(config, root):
    """Where nbgrader writes the gradebook: ``c.CourseDirectory.db_url`` (password hidden) or
    the default gradebook.db in the course root."""
    url = config.CourseDirectory.get("db_url")
    if not url:
        return str(root / "gradebook.db")
    from sqlalchemy.engine import make_url

    return make_url(url).render_as_string(hide_password=True)


def summary(assignment, coursedir, seconds, engine, gradebook, not_written=()):
    """The batch command's report of one assignment, read back from what nbgrader wrote (the
    gradebook's scores and late penalties, autograded/'s outcomes and problems: see
    class_report.py), so that it always agrees with the gradebook. ``not_written``: students
    whose notebooks the engine graded but nbgrader did not take (never in the gradebook)."""
    from autograder.reporting.class_report import ReportError, attach_verdicts, gradebook_rows, label

    lines = []
    try:
        cells, rows = gradebook_rows(coursedir, assignment)
        cells = attach_verdicts(coursedir, assignment, cells, rows, quiet=True)
    except ReportError as e:
        cells, rows = [], []
        lines.append(f"gradebook에 채점 결과가 없습니다: {e}")
    notebooks = sorted({c[0] for c in cells})
    width = max([40] + [len(label(c)) for c in cells])
    lines.insert(
        0,
        f"Graded {len(rows)} submission(s) of '{assignment}' ({len(rows) * len(notebooks)} "
        f"notebook(s)) in {seconds:.1f} s with {engine.describe()} "
        "(gradebook and autograded/ written by nbgrader)",
    )
    if rows:
        lines.append(f"{'테스트 셀':<{width - 3}} {'배점':>4} {'통과':>9}")
        for c in cells:
            passed = sum(r.outcomes[c[:2]] == "passed" for r in rows)
            lines.append(f"{label(c):<{width}} {c[2]:>6g} {passed:>4}/{len(rows):<4}")
        max_total = rows[0].max_score
        vals = [r.final_score for r in rows]
        lines.append(
            f"점수(지각 감점 후): 평균 {statistics.mean(vals):.2f} / {max_total:g}, 중앙값 "
            f"{statistics.median(vals):g}, 만점 {sum(v == max_total for v in vals)}명, "
            f"0점 {sum(v == 0 for v in vals)}명"
        )
    late = [r for r in rows if r.late_penalty]
    if late:
        items = ", ".join(f"{r.student} -{r.late_penalty:g}" for r in late[:10])
        lines.append(f"지각 감점 {len(late)}명: {items}{' ...' if len(late) > 10 else ''}")
    crashed = sorted(r.student for r in rows if set(r.outcomes.values()) & {"crashed", "timeout"})
    errors = sorted(r.student for r in rows if "grader-error" in r.outcomes.values())
    for what, names in (("crashed/timed-out workers", crashed), ("grader errors", errors)):
        if names:
            shown = ", ".join(names[:10]) + (" ..." if len(names) > 10 else "")
            lines.append(f"{what}: {len(names)} student(s): {shown}")
    flagged = [r for r in rows if r.problems]
    if flagged:
        lines.append(
            f"제출물 문제 {len(flagged)}명 (학생의 피드백 첫머리와 반 보고서에도 나옵니다):"
        )
        lines += [f"  {r.student}: {p}" for r in flagged for p in r.problems]
    if not_written:
        lines.append(
            f"nbgrader가 gradebook에 기록하지 않은 학생 {len(not_written)}명: "
            f"{', '.join(sorted(not_written))} (제출 폴더에 .ipynb 파일이 하나도 없거나 nbgrader가 "
            "실패했습니다; 위의 nbgrader 오류를 확인하세요)"
        )
    lines.append(f"gradebook: {gradebook}   notebooks: {coursedir.root}/autograded")
    lines.append(f"next: nbgrader generate_feedback {assignment}; nbgrader export")
    return "\n".join(lines)


def grade(args):
    t0 = time.monotonic()
    # jsonschema (via nbformat, imported with the course's config) builds ~40 grammar parsers
    # at import when the optional rfc3987_syntax package is present (~2 s); nbformat never
    # validates IRI formats.
    sys.modules.setdefault("rfc3987_syntax", None)
    root = Path(args.course).resolve()
    for a in args.assignment:
        if not (root / "source" / a).is_dir():
            sys.exit(f"no source/{a}/ under {root} (run from exercises/)")
        if not (root / "release" / a).is_dir():
            sys.exit(f"run `nbgrader generate_assignment {a}` first")
    with course_lock(root):
        engine = None
        try:
            engine, config = start_grading_engine(args, root)
            return grade_locked(args, root, engine, config, t0)
        except KeyboardInterrupt:
            if engine is not None:
                engine.close(wait=False)
            sys.exit(
                "\n채점을 중단했습니다(Ctrl-C). 채점 프로세스와 샌드박스는 모두 정리했습니다. 같은 "
                "명령을 다시 실행하면 처음부터 다시 채점합니다."
            )
        finally:
            if engine is not None:
                engine.close()


def start_grading_engine(args, root):
    """(engine, course config): the engine of this run (local judges, or the Dask workers of
    ``--scheduler``) on the course's settings."""
    from autograder.engines.local import Engine

    def start_engine(limits, config=None):
        options = config.EngineGrade if config is not None else {}
        return Engine(
            jobs=args.jobs,
            limits=limits,
            unsafe=args.unsafe or options.get("unsafe_no_sandbox", False),
            checks_dir=options.get("checks_dir") or None,
            assignments=args.assignment,
            run_seed=args.run_seed,
        )

    def with_wall(limits):
        if args.wall is not None:
            limits.wall_s = args.wall
        return limits

    try:
        if args.scheduler:  # the workers start this run's judges once the settings are known
            config = course_config(root)
            engine = start_cluster_engine(args, config, with_wall(SandboxLimits(config=config)))
        else:  # the judges start at once, on default settings, while the config is read
            engine = start_engine(with_wall(SandboxLimits()))
            config = course_config(root)
            options = config.EngineGrade
            if options.get("checks_dir") or options.get("unsafe_no_sandbox", False):
                engine.close()  # the course grades differently: start again on its settings
                engine = start_engine(with_wall(SandboxLimits(config=config)), config)
            else:
                engine.set_limits(with_wall(SandboxLimits(config=config)))
    except SandboxUnavailable as e:
        sys.exit(f"refusing to grade: {e}")
    return engine, config


def grade_locked(args, root, engine, config, t0):
    """grade() once the course lock is held and the engine is started."""
    from nbgrader.coursedir import CourseDirectory
    from tqdm import tqdm

    from autograder import notebook as nbio
    from autograder.nbgrader.plugin import BatchGrader, digest

    error = missing_in_gradebook(config, root, args.assignment)
    if error:
        sys.exit(error)
    # what is loaded by now (nbgrader, SQLAlchemy, the course's configuration) stays for the
    # whole run: the collector need not walk it again, and walks what the run allocates less
    # often (nbgrader's ORM objects made most of this process's collections)
    gc.freeze()
    gc.set_threshold(5000, 10, 10)
    course = nbio.Course(root)
    coursedir = CourseDirectory(config=config, root=str(root))
    max_bytes = nbio.SubmissionLimits(config=config).max_bytes
    code = 0
    planned = []  # every assignment's notebooks go to the judges now: they never wait for
    for assignment in args.assignment:  # nbgrader to finish writing the previous assignment
        tasks = collect(course, assignment, args.student, max_bytes)
        if not tasks:
            print(f"{assignment}: {course.root / 'submitted'} 아래에 제출물이 없습니다")
            code = 1
            continue
        grader = BatchGrader(engine)
        for sid, n, template, nb in tasks:
            future, rebuilt = engine.submit_notebook(assignment, template, nb, name=f"{sid}/{n}")
            grader.expect((assignment, sid, n), future, digest(nbio.graded_code(rebuilt)))
        planned.append((assignment, tasks, grader))
    for assignment, tasks, grader in planned:
        t1 = time.monotonic()
        bar = tqdm(total=len(tasks), desc=assignment, unit="nb", disable=args.quiet)
        grader.progress = bar.update
        failed = run_nbgrader_autograde(course, assignment, args.student, grader)
        bar.close()
        if failed:
            print(
                f"nbgrader autograde {assignment}가 오류로 끝났습니다(코드 {failed}); 위의 오류를 "
                "확인하세요. 아래 요약은 gradebook에 실제로 기록된 결과입니다."
            )
        code |= failed
        not_written = {key[1] for key in grader.futures}
        for future, _ in grader.futures.values():
            future.cancel()
        seconds = time.monotonic() - t1
        gradebook = gradebook_location(config, root)
        print(summary(assignment, coursedir, seconds, engine, gradebook, not_written))
        if grader.regraded:
            print(f"note: {grader.regraded} notebook(s) re-graded during the gradebook phase")
        code |= bool(not_written)
    print(f"total {time.monotonic() - t0:.1f} s")
    return code


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


def report(args):
    """Write reports/<assignment>.html and .csv from the gradebook and autograded/."""
    sys.modules.setdefault("rfc3987_syntax", None)  # see grade()
    root = Path(args.course).resolve()
    config = course_config(root)
    from nbgrader.coursedir import CourseDirectory

    from autograder.reporting.class_report import ReportError, write_report

    coursedir = CourseDirectory(config=config, root=str(root))
    out = Path(args.out) if args.out else root / "reports"
    for assignment in args.assignment:
        try:
            paths = write_report(coursedir, assignment, out, args.quiet)
        except ReportError as e:
            sys.exit(f"report: {e}")
        print(f"{assignment}: {paths[0]}  {paths[1]}")
    return 0


def start_cluster_engine(args, config, limits):
    """The Dask engine of ``--scheduler`` (imports dask only here)."""
    from autograder.engines.cluster import ClusterUnavailable, DaskEngine

    options = config.EngineGrade
    try:
        return DaskEngine(
            args.scheduler,
            limits=limits,
            unsafe=args.unsafe or options.get("unsafe_no_sandbox", False),
            checks_dir=options.get("checks_dir") or None,
            run_seed=args.run_seed,
            assignments=args.assignment,
        )
    except ClusterUnavailable as e:
        sys.exit(f"refusing to grade: {e}")


def without_iri_checker():
    """Keep jsonschema from building its IRI format checker in this process.

    Reason: nbformat validates every notebook with jsonschema, which compiles a lark grammar
    for the "iri" string formats when rfc3987_syntax is installed (Jupyter's dependencies
    install it): 0.65 s of CPU at every start of the batch command, while the judges and their
    sandboxes start beside it. No notebook schema uses those formats. Only before jsonschema is
    imported (a process that already has it keeps what it has)."""
    if "jsonschema" not in sys.modules:
        sys.modules.setdefault("rfc3987_syntax", None)


def main(argv=None):
    without_iri_checker()
    args = parse(sys.argv[1:] if argv is None else argv)
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(message)s")
    if args.cmd == "grade":
        return grade(args)
    if args.cmd == "report":
        return report(args)
    return 2
