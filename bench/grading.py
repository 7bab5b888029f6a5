"""Benchmark: stock `nbgrader autograde` vs this engine on the same synthetic class.

    python -m bench.grading [--students 30] [--jobs N] [--keep]

Both sides are timed end to end (process start, imports, sandbox start-up, gradebook and
autograded/ writes): stock = one `nbgrader autograde <a>` per assignment, engine = one
`python -m autograder grade <a> <b> ...`. Builds two temporary course roots from
exercises/source/ (every assignment that exists): one with nbgrader's default configuration
(in-kernel grading) and one with exercises/nbgrader_config.py (the engine, sandbox on).
Both get identical submissions: correct, wrong (one exercise broken), blank, and hostile (an
input transformer that turns later cells into `pass`, monkeypatched torch.allclose, an
always-true __eq__, sys.exit). Prints the seconds of each, the ratio and the
mean score per kind of submission (the hostile ones show why stock grading is not tamper-proof).
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
KINDS = ["correct", "wrong", "blank", "hostile"]
HOSTILE_PREFIX = (
    "import torch as _t\n"
    "_t.allclose = lambda *a, **k: True\n"
    "_t.testing.assert_close = lambda *a, **k: None\n"
    "_t.Tensor.__eq__ = lambda self, other: _t.ones((), dtype=_t.bool)\n"
    "try:\n"
    "    get_ipython().input_transformers_cleanup.append(lambda lines: ['pass\\n'])\n"
    "except NameError:\n"
    "    pass\n"
)


def assignments():
    src = REPO / "exercises" / "source"
    return sorted(d.name for d in src.iterdir() if (d / f"{d.name}.ipynb").exists())


def nbgrader(args, course, env, check=True):
    cmd = [str(BIN / "nbgrader"), *args]
    r = subprocess.run(cmd, cwd=course, env=env, capture_output=True, text=True)
    if check and r.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed:\n{r.stdout[-2000:]}{r.stderr[-3000:]}")
    return r


def make_course(root, names, engine):
    root.mkdir(parents=True)
    shutil.copytree(REPO / "exercises" / "source", root / "source")
    for d in (root / "source").iterdir():
        if d.name not in names:
            shutil.rmtree(d)
    if engine:
        shutil.copy(REPO / "exercises" / "nbgrader_config.py", root / "nbgrader_config.py")
    else:
        (root / "nbgrader_config.py").write_text(
            f"c = get_config()  # noqa: F821\nc.CourseDirectory.course_id = 'bench'\n"
            f"c.CourseDirectory.root = {str(root)!r}\n"
        )


def solution_sources(source_nb):
    out = {}
    for c in source_nb["cells"]:
        meta = c.get("metadata", {}).get("nbgrader", {})
        if meta.get("solution") and c["cell_type"] == "code":
            out[meta["grade_id"]] = "".join(c["source"])
    return out


def filled(release, code):
    """A copy of a release notebook (JSON) whose cells with a grade_id in ``code`` get that
    source."""
    nb = json.loads(json.dumps(release))
    for c in nb["cells"]:
        gid = c.get("metadata", {}).get("nbgrader", {}).get("grade_id")
        if gid in code:
            c["source"] = code[gid]
    return nb


def submission(release, solutions, kind, i):
    """Student ``i``'s notebook of ``kind``; ``solutions`` in notebook order (solution_sources):
    wrong leaves exercise i (mod n) as the release stub, hostile tampers in its first cell and
    exits in the others."""
    ids = list(solutions)
    if kind == "blank" or not ids:
        code = {}
    elif kind == "wrong":
        code = {gid: src for gid, src in solutions.items() if gid != ids[i % len(ids)]}
    elif kind == "hostile":
        code = {
            gid: HOSTILE_PREFIX if n == 0 else "raise SystemExit(0)\n" for n, gid in enumerate(ids)
        }
    else:
        code = solutions
    return filled(release, code)


def populate(courses, names, students, kinds=KINDS):
    """Same submissions in every course: student s<k> of kind kinds[k % len(kinds)]."""
    for name in names:
        source = json.loads((REPO / "exercises/source" / name / f"{name}.ipynb").read_text())
        release = json.loads((courses[0] / "release" / name / f"{name}.ipynb").read_text())
        sols = solution_sources(source)
        for k in range(students):
            kind = kinds[k % len(kinds)]
            nb = submission(release, sols, kind, k)
            for course in courses:
                d = course / "submitted" / f"s{k:03d}-{kind}" / name
                d.mkdir(parents=True, exist_ok=True)
                (d / f"{name}.ipynb").write_text(json.dumps(nb))


def mean_scores(course, env):
    nbgrader(["export"], course, env)
    lines = (course / "grades.csv").read_text().splitlines()[1:]
    by_kind = {k: [] for k in KINDS}
    for line in lines:
        f = line.split(",")
        kind = f[3].split("-")[-1]
        by_kind[kind].append(float(f[9]) / float(f[10]) if float(f[10]) else 0.0)
    return {k: sum(v) / len(v) for k, v in by_kind.items() if v}


def course_env():
    """The environment for nbgrader and the batch command: the venv's scripts first on PATH (stock
    nbgrader runs notebooks in a kernel, which must be the venv's python)."""
    return dict(os.environ, PATH=f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}")


def main(argv=None):
    p = argparse.ArgumentParser(prog="python -m bench.grading")
    p.add_argument("--students", type=int, default=30)
    p.add_argument("--jobs", type=int, default=os.cpu_count())
    p.add_argument("--keep", action="store_true", help="keep the temporary courses")
    p.add_argument("--assignments", nargs="+", help="only these assignments (default: all)")
    p.add_argument("--kinds", nargs="+", choices=KINDS, default=KINDS, help="kinds of submission")
    args = p.parse_args(argv)
    names = args.assignments or assignments()
    if not names:
        sys.exit("no assignments under exercises/source/")
    env = course_env()
    work = Path(tempfile.mkdtemp(prefix="bench-grading-"))
    stock, ours = work / "stock", work / "engine"
    try:
        make_course(stock, names, engine=False)
        make_course(ours, names, engine=True)
        for course in (stock, ours):
            for name in names:
                nbgrader(["generate_assignment", name, "--force"], course, env)
        populate([stock, ours], names, args.students, args.kinds)
        n = args.students * len(names)
        print(
            f"{args.students} students x {len(names)} assignments "
            f"({', '.join(names)}) = {n} notebooks"
        )

        t = time.perf_counter()
        for name in names:
            nbgrader(["autograde", name, "--force"], stock, env, check=False)
        t_stock = time.perf_counter() - t
        print(f"stock nbgrader autograde (in-kernel): {t_stock:8.1f} s")

        t = time.perf_counter()
        cmd = [sys.executable, "-m", "autograder", "grade", *names, "--quiet"]
        r = subprocess.run(
            cmd + ["--jobs", str(args.jobs)], cwd=ours, env=env, text=True, capture_output=True
        )
        if r.returncode != 0:
            sys.exit(f"engine failed:\n{r.stdout[-2000:]}{r.stderr[-3000:]}")
        t_ours = time.perf_counter() - t
        print(f"engine (bwrap sandbox, --jobs {args.jobs}):      {t_ours:8.1f} s")
        print(f"  (one run: python -m autograder grade {' '.join(names)} --jobs {args.jobs})")
        print(f"ratio stock/engine: {t_stock / t_ours:.1f}x")
        s_stock, s_ours = mean_scores(stock, env), mean_scores(ours, env)
        print("mean score fraction by kind   stock   engine")
        for k in args.kinds:
            print(f"  {k:<26} {s_stock.get(k, 0):6.2f}   {s_ours.get(k, 0):6.2f}")
    finally:
        if args.keep:
            print(f"courses kept under {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
