"""Batch grading: ``python -m autograder grade <assignment> [--student ID] [--jobs N]``.

Run from the course root (exercises/). Submissions are graded in parallel sandboxes while
nbgrader's own Autograde converter, running in this process, takes the finished verdicts (no
re-grading) and writes gradebook.db and autograded/ one notebook at a time (SQLite), so that
``nbgrader generate_feedback`` and ``nbgrader export`` work afterwards. Several assignments may
be given; they share one set of warm sandboxes.
"""

import argparse
import contextlib
import logging
import os
import statistics
import sys
import time
import warnings
from concurrent.futures import ThreadPoolExecutor

from autograder.sandbox import UNSAFE_FLAG, Limits, SandboxUnavailable, prestart


def parse(argv):
    p = argparse.ArgumentParser(prog="python -m autograder")
    sub = p.add_subparsers(dest="cmd", required=True)
    g = sub.add_parser("grade", help="grade every submission of an assignment (run in exercises/)")
    g.add_argument("assignment", nargs="+", help="one or more assignment names")
    g.add_argument("--student", help="grade only this student id")
    g.add_argument("--jobs", type=int, default=os.cpu_count(), help="parallel sandboxes")
    g.add_argument("--course", default=".", help="course root (default: current directory)")
    g.add_argument("--wall", type=float, default=Limits.wall_s, help="seconds per check")
    g.add_argument("--quiet", action="store_true", help="no progress bar")
    g.add_argument(
        UNSAFE_FLAG,
        dest="unsafe",
        action="store_true",
        help="UNSAFE: run student code WITHOUT bubblewrap (throw-away machines only)",
    )
    return p.parse_args(argv)


def collect(nbio, course, assignment, student):
    """[(student, notebook, template, submission_nb, problems)] for the submitted notebooks."""
    names = [p.stem for p in course.source_notebooks(assignment)]
    templates = {n: course.template(assignment, n) for n in names}
    tasks = []
    for sid, folder in course.submissions(assignment, student):
        for n in names:
            path = folder / f"{n}.ipynb"
            if path.exists():
                nb, problems = nbio.read_submission(path)
                tasks.append((sid, n, templates[n], nb, problems))
    return tasks


@contextlib.contextmanager
def shared_gradebook_engine():
    """Within the batch run, every nbgrader ``Gradebook(db_url)`` reuses one SQLAlchemy engine
    and creates the tables once (nbgrader opens ~7 Gradebooks per notebook, each creating an
    engine and reflecting the schema). Same database, same rows; only the set-up is shared."""
    import nbgrader.api as api

    create_engine, create_all = api.create_engine, api.Base.metadata.create_all
    engines, ready = {}, set()

    def cached_engine(url, **kw):
        key = (str(url), tuple(sorted(kw.items())))
        if key not in engines:
            engines[key] = create_engine(url, **kw)
        return engines[key]

    def create_all_once(bind=None, **kw):
        if id(bind) not in ready:
            create_all(bind=bind, **kw)
            ready.add(id(bind))

    api.create_engine, api.Base.metadata.create_all = cached_engine, create_all_once
    try:
        yield
    finally:
        api.create_engine, api.Base.metadata.create_all = create_engine, create_all
        for e in engines.values():
            e.dispose()


def run_nbgrader_autograde(course, assignment, student, progress):
    """nbgrader's Autograde converter in-process (uses plug.PRECOMPUTED verdicts)."""
    from nbgrader.apps.autogradeapp import AutogradeApp

    from autograder import nbgrader_plugin as plug

    warnings.filterwarnings("ignore")
    logging.getLogger("traitlets").setLevel(logging.ERROR)
    app = AutogradeApp()
    argv = [assignment, "--force", "--log-level=ERROR"]
    if student:
        argv += ["--student", student]
    plug.PROGRESS = progress
    cwd = os.getcwd()
    os.chdir(course.root)
    try:
        with shared_gradebook_engine():
            app.initialize(argv)
            app.start()
    except SystemExit as e:
        return e.code or 0
    finally:
        os.chdir(cwd)
        plug.PROGRESS = None
    return 0


def summary(assignment, tasks, reports, course, times, engine):
    from autograder import notebook as nbio

    points = {}
    for _, n, template, _, _ in tasks:
        for gid, pts in nbio.test_cells(template):
            points[(n, gid)] = pts
    students = sorted({t[0] for t in tasks})
    max_total = sum(
        pts for n in {t[1] for t in tasks} for (nn, _), pts in points.items() if nn == n
    )
    totals = {s: 0.0 for s in students}
    passed = {k: 0 for k in points}
    seen = {k: 0 for k in points}
    crashed = set()
    for (sid, n, _, _, _), report in zip(tasks, reports, strict=True):
        for gid, v in report.verdicts.items():
            k = (n, gid)
            seen[k] = seen.get(k, 0) + 1
            if v.passed:
                passed[k] = passed.get(k, 0) + 1
                totals[sid] += points.get(k, 0.0)
            elif "[worker:" in v.message or "시간 제한" in v.message:
                crashed.add(sid)
    lines = [
        f"Graded {len(students)} submission(s) of '{assignment}' ({len(tasks)} notebook(s)) in "
        f"{times['grade']:.1f} s with {engine.jobs} "
        f"{'UNSANDBOXED worker(s)' if engine.unsafe else 'sandbox(es)'} "
        f"(gradebook and autograded/ written by nbgrader)",
        f"{'test cell':<40} {'points':>6} {'passed':>9}",
    ]
    for (n, gid), pts in points.items():
        lines.append(f"{n + '/' + gid:<40} {pts:>6g} {passed[(n, gid)]:>4}/{seen[(n, gid)]:<4}")
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
    lines.append(
        f"gradebook: {course.root / 'gradebook.db'}   notebooks: {course.root / 'autograded'}"
    )
    lines.append(f"next: nbgrader generate_feedback {assignment}; nbgrader export")
    return "\n".join(lines)


def grade(args):
    t0 = time.monotonic()
    bindir = os.path.dirname(sys.executable)  # nbgrader calls `alembic` from the venv
    os.environ["PATH"] = bindir + os.pathsep + os.environ.get("PATH", "")
    root = os.path.abspath(args.course)
    for a in args.assignment:
        if not os.path.isdir(os.path.join(root, "source", a)):
            sys.exit(f"no source/{a}/ under {root} (run from exercises/)")
        if not os.path.isdir(os.path.join(root, "release", a)):
            sys.exit(f"run `nbgrader generate_assignment {a}` first")
    limits = Limits(wall_s=args.wall)
    try:  # zygotes start importing torch now, while this process imports the rest
        boxes = prestart(args.jobs, limits, args.unsafe)
    except SandboxUnavailable as e:
        sys.exit(f"refusing to grade: {e}")
    # jsonschema (via nbformat) builds ~40 grammar parsers at import when the optional
    # rfc3987_syntax package is present (~2 s); nbformat never validates IRI formats.
    sys.modules.setdefault("rfc3987_syntax", None)
    from tqdm import tqdm

    from autograder import nbgrader_plugin as plug
    from autograder import notebook as nbio
    from autograder.engine import Engine, empty_report

    engine = Engine(jobs=len(boxes), limits=limits, unsafe=args.unsafe, sandboxes=boxes)
    plug.set_engine(engine)
    course = nbio.Course(root)
    code = 0
    with ThreadPoolExecutor(engine.jobs) as pool:
        for assignment in args.assignment:
            t1 = time.monotonic()
            tasks = collect(nbio, course, assignment, args.student)
            if not tasks:
                print(f"no submissions of {assignment} under {course.root / 'submitted'}")
                code = 1
                continue

            def one(task, assignment=assignment):
                _, _, template, nb, _ = task
                rebuilt = nbio.rebuild(template, nb)
                try:
                    report, rebuilt = engine.grade_notebook(assignment, template, nb)
                except Exception as e:  # a grader bug must not stop the whole class
                    logging.exception("grading %s failed", task[:2])
                    gids = [gid for gid, _ in nbio.test_cells(template)]
                    report = empty_report(gids, f"채점 오류 (grader error): {e}")
                return plug.digest(nbio.solution_code(rebuilt)), report

            # grading runs in the pool while nbgrader records finished notebooks in order
            futures = [pool.submit(one, t) for t in tasks]
            for (sid, n, _, _, _), fut in zip(tasks, futures, strict=True):
                plug.PRECOMPUTED[(assignment, sid, n)] = fut
            bar = tqdm(total=len(tasks), desc=assignment, unit="nb", disable=args.quiet)
            code |= run_nbgrader_autograde(course, assignment, args.student, bar.update)
            bar.close()
            reports = [f.result()[1] for f in futures]
            plug.PRECOMPUTED.clear()
            t2 = time.monotonic()
            times = {"grade": t2 - t1}
            print(summary(assignment, tasks, reports, course, times, engine))
    if plug.MISSES:
        print(f"note: {plug.MISSES} notebook(s) re-graded during the gradebook phase")
    print(f"total {time.monotonic() - t0:.1f} s")
    engine.close()
    return code


def main(argv=None):
    args = parse(sys.argv[1:] if argv is None else argv)
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(message)s")
    if args.cmd == "grade":
        return grade(args)
    return 2
