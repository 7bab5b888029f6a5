"""``python -m autograder``: parse the command line and orchestrate.

- ``grade <assignment>... [--student ID] [--jobs N] [--scheduler ADDRESS]``: start an engine
  (engines/local.py, or engines/cluster.py on a Dask scheduler) on the course's settings, hold the
  course lock, let nbgrader write the gradebook with the engine's verdicts (nbgrader/batch.py) and
  print each assignment's summary (reporting/summary.py).
- ``report <assignment>...``: the class report (reporting/class_report.py).

Run from the course root (exercises/); its nbgrader_config.py is read first (``c.SandboxLimits``,
``c.EngineGrade``). The judges start while the configuration is read. Without ``--scheduler``
Dask is not imported.
"""

import argparse
import logging
import os
import sys
import time
from pathlib import Path

from autograder.nbgrader import fixes  # noqa: F401  first: before anything imports jsonschema

# isort: split
from autograder.engines.base import RunSettings
from autograder.judge.bwrap import UNSAFE_FLAG, SandboxUnavailable
from autograder.judge.sandbox import SandboxLimits
from autograder.notebook import course_config


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
        help="run seed of the checks' inputs (default: this machine's grader secret, mixed with "
        "each submission's code: the same submission always gets the same inputs, verdicts and "
        "messages, as in the student's feedback and in `pytest --notebook`)",
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


def grade(args):
    t0 = time.monotonic()
    root = Path(args.course).resolve()
    for a in args.assignment:
        if not (root / "source" / a).is_dir():
            sys.exit(f"no source/{a}/ under {root} (run from exercises/)")
        if not (root / "release" / a).is_dir():
            sys.exit(f"run `nbgrader generate_assignment {a}` first")
    from autograder.nbgrader.batch import course_lock

    with course_lock(root):
        engine = None
        try:
            engine, config = start_grading_engine(args, root)
            return grade_and_summarise(args, root, engine, config, t0)
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

    def settings(limits, config=None):
        options = config.EngineGrade if config is not None else {}
        if args.wall is not None:
            limits.wall_s = args.wall
        return RunSettings(
            assignments=args.assignment,
            limits=limits,
            run_seed=args.run_seed,
            checks_dir=options.get("checks_dir") or None,
            jobs=args.jobs,
            unsafe=args.unsafe or options.get("unsafe_no_sandbox", False),
        )

    try:
        if args.scheduler:  # the workers start this run's judges once the settings are known
            config = course_config(root)
            engine = start_cluster_engine(args, settings(SandboxLimits(config=config), config))
        else:  # the judges start at once, on default settings, while the config is read
            from autograder.engines.local import Engine

            engine = Engine(settings(SandboxLimits()))
            config = course_config(root)
            options = config.EngineGrade
            if options.get("checks_dir") or options.get("unsafe_no_sandbox", False):
                engine.close()  # the course grades differently: start again on its settings
                engine = Engine(settings(SandboxLimits(config=config), config))
            else:
                engine.set_limits(settings(SandboxLimits(config=config)).limits)
    except SandboxUnavailable as e:
        sys.exit(f"refusing to grade: {e}")
    return engine, config


def start_cluster_engine(args, settings):
    """The Dask engine of ``--scheduler`` (imports dask only here)."""
    from autograder.engines.cluster import ClusterUnavailable, DaskEngine

    try:
        return DaskEngine(settings, address=args.scheduler)
    except ClusterUnavailable as e:
        sys.exit(f"refusing to grade: {e}")


def grade_and_summarise(args, root, engine, config, t0):
    """Grade every assignment of the command (the course lock held, the engine started), then
    print each one's summary as nbgrader wrote it."""
    from tqdm import tqdm

    from autograder.nbgrader.batch import (
        grade_assignments,
        gradebook_location,
        missing_in_gradebook,
    )
    from autograder.reporting.summary import summary

    error = missing_in_gradebook(config, root, args.assignment)
    if error:
        sys.exit(error)

    def progress(assignment, total):
        return tqdm(total=total, desc=assignment, unit="nb", disable=args.quiet)

    code = 0
    for done in grade_assignments(engine, config, root, args.assignment, args.student, progress):
        assignment, failed = done["assignment"], done["failed"]
        if failed == "no submissions":
            print(f"{assignment}: {done['submitted'] / 'submitted'} 아래에 제출물이 없습니다")
            code = 1
            continue
        if failed:
            print(
                f"nbgrader autograde {assignment}가 오류로 끝났습니다(코드 {failed}); 위의 오류를 "
                "확인하세요. 아래 요약은 gradebook에 실제로 기록된 결과입니다."
            )
        code |= failed
        gradebook = gradebook_location(config, root)
        print(
            summary(
                assignment,
                done["coursedir"],
                done["seconds"],
                engine.describe(),
                gradebook,
                done["not_written"],
                done["graded"],
            )
        )
        if done["regraded"]:
            print(
                f"참고: gradebook에 쓰는 동안 노트북 {done['regraded']}개를 다시 채점했습니다 "
                "(미리 채점한 뒤 제출물이 바뀌었습니다)."
            )
        code |= bool(done["not_written"])
    print(f"전체 {time.monotonic() - t0:.1f}초")
    return code


def report(args):
    """Write reports/<assignment>.html and .csv from the gradebook and autograded/."""
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


def main(argv=None):
    args = parse(sys.argv[1:] if argv is None else argv)
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(message)s")
    if args.cmd == "grade":
        return grade(args)
    if args.cmd == "report":
        return report(args)
    return 2
