"""Benchmark: the same synthetic class graded through Dask with 1 and with 2 worker processes.

    python -m bench.cluster [--students 16] [--assignments softmax masking] [--threads 1]

Builds one course from exercises/source/ with bench.grading's functions (correct, wrong, blank
and hostile submissions), then, for 1 and for 2 workers, starts a ``dask.distributed``
LocalCluster of that many worker processes (``--threads`` judges each) on this machine and
times ``python -m autograder grade <assignments> --scheduler ADDRESS`` end to end: the
command's start, the workers' judges starting (their imports and sandboxes), grading, and the
gradebook written by nbgrader in the command. The cluster itself is started before the clock
(on a real cluster the workers run already). Both runs use the same run seed: their grades must
be identical, which is checked. Prints both times and the speed-up; it approaches 2 when the
machine has free cores for both workers (each judge needs about one core, its sandbox child
another at times) and the command's gradebook phase (serial) is small next to grading.
"""

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.grading import BIN, KINDS, assignments, make_course, nbgrader, populate

DEFAULT_ASSIGNMENTS = ["softmax", "masking"]


def course_env():
    """The environment for nbgrader and the batch command (the venv's scripts first on PATH)."""
    return dict(os.environ, PATH=f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}")


def synthetic_class(root, names, students, kinds=KINDS, env=None):
    """A course at ``root`` (the engine's nbgrader_config.py) with ``names`` released and
    ``students`` submissions of each, of kinds ``kinds`` in turn (bench.grading.populate)."""
    env = env or course_env()
    make_course(Path(root), names, engine=True)
    for name in names:
        nbgrader(["generate_assignment", name, "--force"], root, env)
    populate([Path(root)], names, students, kinds)
    return root


def gradebook_rows(url):
    """Sorted (assignment, student, notebook, test cell, auto_score) of every graded cell, read
    back through nbgrader's Gradebook API (SQLite or PostgreSQL url)."""
    from nbgrader.api import Gradebook, MissingEntry

    rows = []
    with Gradebook(url) as gb:
        for assignment in gb.assignments:
            for notebook in assignment.notebooks:
                for student in gb.students:
                    try:
                        sub = gb.find_submission_notebook(
                            notebook.name, assignment.name, student.id
                        )
                    except MissingEntry:
                        continue
                    for g in sub.grades:
                        rows.append(
                            (assignment.name, student.id, notebook.name, g.name, g.auto_score)
                        )
    return sorted(rows)


def grade_command(names, *options):
    return [sys.executable, "-m", "autograder", "grade", *names, "--quiet", *options]


def grade_on_cluster(course, names, workers, threads, run_seed, env=None):
    """(seconds, command output) of grading ``names`` on a fresh LocalCluster of ``workers``
    processes with ``threads`` threads (= judges) each."""
    from distributed import LocalCluster

    env = env or course_env()
    with LocalCluster(
        n_workers=workers,
        threads_per_worker=threads,
        processes=True,
        host="127.0.0.1",
        dashboard_address=None,
    ) as cluster:
        cmd = grade_command(
            names, "--scheduler", cluster.scheduler_address, "--run-seed", str(run_seed)
        )
        t = time.perf_counter()
        r = subprocess.run(cmd, cwd=course, env=env, capture_output=True, text=True)
        seconds = time.perf_counter() - t
    if r.returncode != 0:
        sys.exit(f"grading on {workers} worker(s) failed:\n{r.stdout[-2000:]}{r.stderr[-3000:]}")
    return seconds, r.stdout


def main(argv=None):
    p = argparse.ArgumentParser(prog="python -m bench.cluster")
    p.add_argument("--students", type=int, default=16)
    p.add_argument("--threads", type=int, default=1, help="threads (= judges) per worker")
    p.add_argument("--assignments", nargs="+", default=DEFAULT_ASSIGNMENTS)
    p.add_argument("--kinds", nargs="+", choices=KINDS, default=KINDS, help="kinds of submission")
    p.add_argument("--run-seed", type=int, default=20260)
    p.add_argument("--keep", action="store_true", help="keep the temporary course")
    args = p.parse_args(argv)
    unknown = set(args.assignments) - set(assignments())
    if unknown:
        sys.exit(f"no such assignment(s): {', '.join(sorted(unknown))}")
    work = Path(tempfile.mkdtemp(prefix="bench-cluster-"))
    course = work / "course"
    try:
        synthetic_class(course, args.assignments, args.students, args.kinds)
        n = args.students * len(args.assignments)
        print(
            f"{args.students} students x {len(args.assignments)} assignments "
            f"({', '.join(args.assignments)}) = {n} notebooks; {os.cpu_count()} cores here"
        )
        times, grades = {}, {}
        for workers in (1, 2):
            seconds, out = grade_on_cluster(
                course, args.assignments, workers, args.threads, args.run_seed
            )
            times[workers] = seconds
            grades[workers] = gradebook_rows(f"sqlite:///{course / 'gradebook.db'}")
            phases = [float(m) for m in re.findall(r"^Graded .* in ([0-9.]+) s with", out, re.M)]
            print(
                f"{workers} Dask worker(s) x {args.threads} thread(s): {seconds:8.1f} s "
                f"({n / seconds:.2f} notebooks/s; gradebook phases {sum(phases):.1f} s, the "
                f"rest is start-up: command, workers' judges and sandboxes)"
            )
        same = grades[1] == grades[2] and len(grades[1]) > 0
        print(f"speed-up 2 workers / 1 worker: {times[1] / times[2]:.2f}x")
        print(f"identical grades: {'yes' if same else 'NO'} ({len(grades[1])} graded cells)")
        if not same:
            sys.exit(1)
    finally:
        if args.keep:
            print(f"course kept under {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
