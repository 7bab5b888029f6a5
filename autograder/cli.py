"""Batch grading: ``python -m autograder grade <assignment> [--student ID] [--jobs N]``;
class report: ``python -m autograder report <assignment>`` (see class_report.py).

Run from the course root (exercises/). The course's nbgrader_config.py is read first (sandbox
limits ``c.SandboxLimits``, ``c.EngineGrade.checks_dir``); the judge processes start at once and
grade the submissions in parallel, while nbgrader's own Autograde converter, running in this
process, takes the finished verdicts (handed in as ``c.EngineGrade.grader``) and writes
gradebook.db and autograded/ one notebook at a time, so that ``nbgrader generate_feedback`` and
``nbgrader export`` work afterwards. Several assignments share one set of warm judges.

With ``--scheduler tcp://HOST:PORT`` the notebooks are graded by the workers of a Dask
scheduler instead (autograder/cluster.py); the gradebook is written here all the same. Without
it Dask is not imported.
"""

import argparse
import logging
import os
import statistics
import sys
import time
import warnings
from pathlib import Path

from autograder.sandbox import UNSAFE_FLAG, SandboxLimits, SandboxUnavailable


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


def collect(nbio, course, assignment, student):
    """[(student, notebook, template, submission_nb)] for the submitted notebooks."""
    names = [p.stem for p in course.source_notebooks(assignment)]
    templates = {n: course.template(assignment, n) for n in names}
    tasks = []
    for sid, folder in course.submissions(assignment, student):
        for n in names:
            path = folder / f"{n}.ipynb"
            if path.exists():
                nb, _ = nbio.read_submission(path)
                tasks.append((sid, n, templates[n], nb))
    return tasks


def run_nbgrader_autograde(course, assignment, student, grader):
    """nbgrader's Autograde converter in-process, taking its verdicts from ``grader``."""
    from nbgrader.apps.autogradeapp import AutogradeApp

    from autograder.nbgrader_fixes import shared_gradebook_engine

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


def summary(assignment, tasks, reports, course, seconds, engine, gradebook):
    from autograder import notebook as nbio

    points = {}
    for _, n, template, _ in tasks:
        for gid, pts in nbio.test_cells(template):
            points[(n, gid)] = pts
    students = sorted({t[0] for t in tasks})
    notebooks = {t[1] for t in tasks}
    max_total = sum(pts for (n, _), pts in points.items() if n in notebooks)
    totals = {s: 0.0 for s in students}
    passed = dict.fromkeys(points, 0)
    seen = dict.fromkeys(points, 0)
    crashed = set()
    for (sid, n, _, _), report in zip(tasks, reports, strict=True):
        for gid, v in report.verdicts.items():
            k = (n, gid)
            seen[k] = seen.get(k, 0) + 1
            if v.passed:
                passed[k] = passed.get(k, 0) + 1
                totals[sid] += points.get(k, 0.0)
            elif v.outcome in ("crashed", "timeout", "grader-error"):
                crashed.add(sid)
    width = max([40] + [len(n) + 1 + len(gid) for n, gid in points])
    lines = [
        f"Graded {len(students)} submission(s) of '{assignment}' ({len(tasks)} notebook(s)) in "
        f"{seconds:.1f} s with {engine.describe()} "
        "(gradebook and autograded/ written by nbgrader)",
        f"{'test cell':<{width}} {'points':>6} {'passed':>9}",
    ]
    for (n, gid), pts in points.items():
        lines.append(
            f"{n + '/' + gid:<{width}} {pts:>6g} {passed[(n, gid)]:>4}/{seen[(n, gid)]:<4}"
        )
    if students:
        vals = list(totals.values())
        lines.append(
            f"score: mean {statistics.mean(vals):.2f} / {max_total:g}, median "
            f"{statistics.median(vals):g}, full marks {sum(v == max_total for v in vals)}, "
            f"zero {sum(v == 0 for v in vals)}"
        )
    if crashed:
        names = ", ".join(sorted(crashed)[:10]) + (" ..." if len(crashed) > 10 else "")
        lines.append(f"crashed/timed-out workers: {len(crashed)} student(s): {names}")
    lines.append(f"gradebook: {gradebook}   notebooks: {course.root / 'autograded'}")
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
    from autograder.engine import Engine

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
    from tqdm import tqdm

    from autograder import notebook as nbio
    from autograder.nbgrader_plugin import BatchGrader, digest

    course = nbio.Course(root)
    code = 0
    planned = []  # every assignment's notebooks go to the judges now: they never wait for
    for assignment in args.assignment:  # nbgrader to finish writing the previous assignment
        tasks = collect(nbio, course, assignment, args.student)
        if not tasks:
            print(f"no submissions of {assignment} under {course.root / 'submitted'}")
            code = 1
            continue
        grader = BatchGrader(engine)
        futures = []
        for sid, n, template, nb in tasks:
            future, rebuilt = engine.submit_notebook(assignment, template, nb, name=f"{sid}/{n}")
            futures.append(future)
            grader.expect((assignment, sid, n), future, digest(nbio.graded_code(rebuilt)))
        planned.append((assignment, tasks, grader, futures))
    for assignment, tasks, grader, futures in planned:
        t1 = time.monotonic()
        bar = tqdm(total=len(tasks), desc=assignment, unit="nb", disable=args.quiet)
        grader.progress = bar.update
        code |= run_nbgrader_autograde(course, assignment, args.student, grader)
        bar.close()
        reports = [f.result() for f in futures]
        seconds = time.monotonic() - t1
        gradebook = gradebook_location(config, root)
        print(summary(assignment, tasks, reports, course, seconds, engine, gradebook))
        if grader.regraded:
            print(f"note: {grader.regraded} notebook(s) re-graded during the gradebook phase")
    print(f"total {time.monotonic() - t0:.1f} s")
    engine.close()
    return code


def report(args):
    """Write reports/<assignment>.html and .csv from the gradebook and autograded/."""
    sys.modules.setdefault("rfc3987_syntax", None)  # see grade()
    root = Path(args.course).resolve()
    config = course_config(root)
    from nbgrader.coursedir import CourseDirectory

    from autograder.class_report import ReportError, write_report

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
    from autograder.cluster import ClusterUnavailable, DaskEngine

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


def main(argv=None):
    args = parse(sys.argv[1:] if argv is None else argv)
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(message)s")
    if args.cmd == "grade":
        return grade(args)
    if args.cmd == "report":
        return report(args)
    return 2
