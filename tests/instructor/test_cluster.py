"""Grading on a Dask cluster (``--scheduler``) and into a PostgreSQL gradebook.

A LocalCluster of 2 worker processes on this machine stands in for a cluster of machines; the
batch command runs as a subprocess and connects to its scheduler over TCP, as on a cluster.
"""

import json
import os
import shutil
import signal
import subprocess
import sys
import time
import types
from concurrent.futures import Future
from pathlib import Path

import pytest
from distributed import Client, LocalCluster

from autograder.engines import cluster
from autograder.report import CLUSTER_FAILED, JUDGE_STOPPED, empty_report
from bench.cluster import course_env, grade_command, gradebook_rows, synthetic_class
from bench.grading import filled

REPO = Path(__file__).resolve().parents[2]
FIXTURE = REPO / "tests" / "fixtures" / "grader_course"
CHECKS = FIXTURE / "fixture_checks"
SOFTMAX = "def softmax(x, dim=-1):\n    return torch.softmax(x, dim=dim)\n"
NAIVE = "def softmax(x, dim=-1):\n    return x.exp() / x.exp().sum(dim, keepdim=True)\n"
SCALE = (
    "class Scale(nn.Module):\n    def __init__(self, d):\n        super().__init__()\n"
    "        self.weight = nn.Parameter(torch.ones(d))\n\n"
    "    def forward(self, x):\n        return x * self.weight\n"
)


def run(cmd, cwd, env=None, timeout=300):
    r = subprocess.run(
        cmd, cwd=cwd, env=env or course_env(), capture_output=True, text=True, timeout=timeout
    )
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    return r


def demo_course(tmp_path, students, db_url=None):
    """The fixture course (assignment `demo`), released, with ``students``: {id: {grade_id:
    source}} submitted; ``db_url``: the gradebook (default: gradebook.db)."""
    course = tmp_path / "course"
    shutil.copytree(FIXTURE, course, ignore=shutil.ignore_patterns("__pycache__", ".canary-*"))
    with open(course / "nbgrader_config.py", "a") as f:
        f.write("c.SandboxLimits.wall_s = 10.0\n")
        if db_url:
            f.write(f"c.CourseDirectory.db_url = {db_url!r}\n")
    run([sys.executable, "-m", "nbgrader", "generate_assignment", "demo", "--force"], course)
    release = json.loads((course / "release/demo/demo.ipynb").read_text())
    for sid, codes in students.items():
        nb = filled(release, codes)
        d = course / "submitted" / sid / "demo"
        d.mkdir(parents=True)
        (d / "demo.ipynb").write_text(json.dumps(nb))
    return course


def autograded(course):
    """{path: notebook} of autograded/, without the cell ids (new random ids on every run) and
    the grading time the engine records for the class report."""
    out = {}
    for p in sorted((course / "autograded").rglob("*.ipynb")):
        nb = json.loads(p.read_text())
        for cell in nb["cells"]:
            cell.pop("id", None)
        nb["metadata"].get("autograder", {}).pop("seconds", None)
        out[str(p.relative_to(course))] = nb
    return out


def max_points(course, assignment):
    """{notebook: total points} from the released notebook's test cells (the oracle)."""
    from autograder import notebook as nbio

    out = {}
    for p in (course / "release" / assignment).glob("*.ipynb"):
        nb = nbio.read_submission(p)[0]
        out[p.stem] = sum(pts for _, pts in nbio.test_cells(nb))
    return out


@pytest.fixture(scope="module")
def dask_cluster():
    with (
        LocalCluster(
            n_workers=2,
            threads_per_worker=1,
            processes=True,
            host="127.0.0.1",
            dashboard_address=None,
        ) as lc,
        Client(lc) as client,
    ):
        yield lc, client


# ----------------------------------------------------------------------------- no cluster


def test_worker_with_other_checks_is_refused():
    settings = {
        "run_seed": 1,
        "limits": {},
        "unsafe": False,
        "checks_dir": str(CHECKS),
        "assignments": ["demo"],
        "fingerprint": cluster.fingerprint(CHECKS, ["demo"]),
    }
    worker = types.SimpleNamespace(state=types.SimpleNamespace(nthreads=1))
    stale = dict(settings, fingerprint="0" * 64)
    state = cluster.warm_up(cluster.WorkerRun(stale), dask_worker=worker)
    assert "differ from the command's" in state["error"]
    # the fingerprint follows the content of the check modules (and not their folder)
    assert cluster.fingerprint(CHECKS, ["demo"]) != cluster.fingerprint(CHECKS, ["missing"])


def test_notebook_failing_twice_is_a_grader_error(monkeypatch):
    """Each attempt's judge stops: Dask runs the task twice (retries=1), then every test cell of
    that notebook gets a grader-error verdict; the other notebook is graded normally."""
    attempts = []

    class Judges:  # stands in for a worker's Engine
        jobs, unsafe = 1, False

        def submit(self, assignment, grade_ids, cells, solutions, public=None):
            attempts.append(cells[0])
            future = Future()
            if "STOP" in cells[0]:  # a judge stopped: known by the reason code alone
                report = empty_report(grade_ids, "any text", reason=JUDGE_STOPPED)
            else:
                report = empty_report(grade_ids, "ok", "passed")
            future.set_result(report)
            return future

    monkeypatch.setattr(cluster, "worker_engine", lambda run, jobs: cluster._Entry(Judges()))
    monkeypatch.setattr(cluster, "release", lambda entry: None)
    with (
        LocalCluster(
            n_workers=1, threads_per_worker=1, processes=False, dashboard_address=None
        ) as lc,
        Client(lc) as client,
    ):
        engine = cluster.DaskEngine(client=client, checks_dir=CHECKS, assignments=["demo"])
        ids = ["test_softmax", "test_scale"]
        bad = engine.submit("demo", ids, ["STOP"], ["STOP"], name="kim/demo")
        good = engine.submit("demo", ids, ["fine"], ["fine"], name="lee/demo")
        report = bad.result()
        assert good.result().verdicts["test_scale"].passed
        engine.close()
    assert attempts.count("STOP") == 2 and attempts.count("fine") == 1
    assert sorted(report.verdicts) == sorted(ids)
    for v in report.verdicts.values():
        assert v.outcome == "grader-error" and v.message == cluster.GRADER_FAILED
    assert report.reason == CLUSTER_FAILED
    assert report is bad.result()  # asked again (the summary): the same report


# ----------------------------------------------------------------------------- on a cluster


@pytest.mark.slow
def test_cluster_grades_exactly_as_one_machine(dask_cluster, tmp_path):
    """A synthetic class (2 assignments x 4 students: correct, wrong, blank, hostile) graded on
    this machine and through the scheduler with the same run seed: same gradebook, same
    autograded notebooks (their messages show the seed's inputs); Dask is not imported when
    grading locally."""
    lc, _ = dask_cluster
    names = ["softmax", "masking"]
    course = synthetic_class(tmp_path / "course", names, students=4)
    db = f"sqlite:///{course / 'gradebook.db'}"
    seed = ["--run-seed", "4242"]
    local = run(
        [sys.executable, "-X", "importtime", *grade_command(names, "--jobs", "2", *seed)[1:]],
        course,
    )
    imported = {line.split("|")[-1].strip() for line in local.stderr.splitlines() if "|" in line}
    assert "autograder.engines.local" in imported and "autograder.engines.cluster" not in imported
    assert not any(m.split(".")[0] in ("dask", "distributed") for m in imported)
    local_rows, local_nbs = gradebook_rows(db), autograded(course)

    out = run(grade_command(names, "--scheduler", lc.scheduler_address, *seed), course).stdout
    assert "Dask 워커 2개(시작할 때)의 채점 프로세스 2개(샌드박스)" in out
    assert "다시 채점했습니다" not in out
    assert gradebook_rows(db) == local_rows
    assert autograded(course) == local_nbs
    assert "CheckFailed" in json.dumps(local_nbs)  # failure messages (with inputs) compared too
    # the grades themselves are right: correct = full marks, blank = zero, hostile < full
    for a in names:
        full = max_points(course, a)[a]
        total = {}
        for assignment, sid, _, _, score in local_rows:
            if assignment == a:
                total[sid] = total.get(sid, 0) + score
        assert len(total) == 4
        assert total["s000-correct"] == full and total["s002-blank"] == 0
        assert 0 < total["s001-wrong"] < full and total["s003-hostile"] < full


@pytest.mark.slow
def test_killed_worker_costs_a_retry_not_a_grade(dask_cluster, tmp_path):
    """One worker process is killed (SIGKILL) while it grades a notebook: its notebook is graded
    again on another worker, and every notebook is in the gradebook once, with its right
    grade, none a grader error."""
    lc, client = dask_cluster
    client.wait_for_workers(2, timeout=60)
    slow = "import time\ntime.sleep(1.0)\n"
    students = {}
    for i in range(6):
        softmax = SOFTMAX if i % 2 == 0 else NAIVE
        students[f"s{i}"] = {"softmax_sol": slow + softmax, "scale_sol": SCALE}
    course = demo_course(tmp_path, students)
    cmd = grade_command(["demo"], "--scheduler", lc.scheduler_address)
    proc = subprocess.Popen(
        cmd, cwd=course, env=course_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )

    def states(dask_scheduler):
        """(keys graded so far, workers grading now). A graded notebook's result leaves the
        scheduler's memory as soon as the batch command has written it, which can be before
        the next look: the transition log keeps that it was graded."""
        done = {
            str(record[0])
            for record in dask_scheduler.transition_log
            if str(record[0]).startswith("demo/") and record[2] == "memory"
        }
        busy = [
            ts.processing_on.address
            for key, ts in dask_scheduler.tasks.items()
            if str(key).startswith("demo/") and ts.state == "processing" and ts.processing_on
        ]
        return done, busy

    killed = None
    deadline = time.monotonic() + 120
    while killed is None and time.monotonic() < deadline and proc.poll() is None:
        done, busy = client.run_on_scheduler(states)
        if done and busy:
            pid = client.run(os.getpid, workers=[busy[0]])[busy[0]]
            os.kill(pid, signal.SIGKILL)
            killed = busy[0]
        time.sleep(0.2)
    stdout, stderr = proc.communicate(timeout=300)
    assert killed is not None, "no notebook was being graded to kill its worker"
    assert proc.returncode == 0, stdout[-3000:] + stderr[-3000:]
    assert "제출물 6개" in stdout and "비정상 종료" not in stdout
    assert "다시 채점했습니다" not in stdout

    def processed(dask_scheduler):
        counts = {}
        for record in dask_scheduler.transition_log:
            key, finish = str(record[0]), record[2]
            if key.startswith("demo/") and finish == "processing":
                counts[key] = counts.get(key, 0) + 1
        return counts

    counts = client.run_on_scheduler(processed)
    assert len(counts) == 6 and max(counts.values()) >= 2  # the killed worker's task ran again
    rows = gradebook_rows(f"sqlite:///{course / 'gradebook.db'}")
    assert len(rows) == 12  # 6 students x 2 test cells, once each
    for _, sid, _, cell, score in rows:
        good = int(sid[1:]) % 2 == 0 or cell == "test_scale"
        assert score == {"test_softmax": 2.0, "test_scale": 3.0}[cell] * good, (sid, cell, score)
    text = json.dumps(autograded(course), ensure_ascii=False)
    assert "grader error" not in text and len(autograded(course)) == 6


# ----------------------------------------------------------------------------- PostgreSQL
# (the `postgres` fixture, a throw-away server, is in conftest.py)


@pytest.mark.slow
def test_postgresql_gradebook(postgres, tmp_path):
    """generate_assignment, the batch command and `nbgrader export` against PostgreSQL
    (c.CourseDirectory.db_url): no gradebook.db, the grades read back by nbgrader itself."""
    students = {
        "good": {"softmax_sol": SOFTMAX, "scale_sol": SCALE},
        "naive": {"softmax_sol": NAIVE, "scale_sol": SCALE},
        "blank": {},
    }
    course = demo_course(tmp_path, students, db_url=postgres)
    out = run(grade_command(["demo"], "--jobs", "1"), course).stdout
    assert "제출물 3개" in out and f"gradebook: {postgres}" in out
    run(grade_command(["demo"], "--jobs", "1"), course)  # regrading: same rows, updated
    assert not (course / "gradebook.db").exists()
    expected = [
        ("demo", "blank", "demo", "test_scale", 0.0),
        ("demo", "blank", "demo", "test_softmax", 0.0),
        ("demo", "good", "demo", "test_scale", 3.0),
        ("demo", "good", "demo", "test_softmax", 2.0),
        ("demo", "naive", "demo", "test_scale", 3.0),
        ("demo", "naive", "demo", "test_softmax", 0.0),
    ]
    assert gradebook_rows(postgres) == expected
    run([sys.executable, "-m", "nbgrader", "export"], course)
    lines = (course / "grades.csv").read_text().splitlines()
    header = lines[0].split(",")
    score = {
        row[header.index("student_id")]: float(row[header.index("score")])
        for row in (line.split(",") for line in lines[1:])
    }
    assert score == {"good": 5.0, "naive": 3.0, "blank": 0.0}


# ----------------------------------------------------------------------------- dask-jobqueue

FAKE_SBATCH = """#!/bin/bash
# sbatch stand-in: keep the job script (dask-jobqueue deletes it) and run it in its own session
n=$(ls {jobs}/*.sh 2>/dev/null | wc -l)
cp "$1" {jobs}/job-$n.sh
setsid bash {jobs}/job-$n.sh > {jobs}/job-$n.log 2>&1 < /dev/null &
echo "Submitted batch job $!"
"""
FAKE_SCANCEL = """#!/bin/bash
kill -TERM -- -"$1" 2>/dev/null || true
"""


def readme_snippet(marker):
    """The README's Python code block that contains ``marker``."""
    text = (REPO / "README.md").read_text(encoding="utf-8")
    blocks = [b.split("```", 1)[0] for b in text.split("```python\n")[1:]]
    found = [b for b in blocks if marker in b]
    assert len(found) == 1, f"README: one python block with {marker!r} expected"
    return found[0]


@pytest.mark.slow
def test_readme_slurm_snippet_grades_through_dask_jobqueue(tmp_path):
    """The README's SLURM script, run as written except for the venv path and smaller jobs, with
    stand-ins for sbatch/scancel that start each job script on this machine: dask-jobqueue's
    SLURMCluster starts the workers and the class is graded through them."""
    script = readme_snippet("SLURMCluster")
    for old, new in (
        ('"/path/to/course/.venv/bin/python"', repr(sys.executable)),
        ("cores=16", "cores=1"),
        ('memory="64GB"', 'memory="4GB"'),
        ("jobs=4", "jobs=2"),
    ):
        assert script.count(old) == 1, old
        script = script.replace(old, new)
    bin_dir, jobs = tmp_path / "bin", tmp_path / "jobs"
    bin_dir.mkdir()
    jobs.mkdir()
    for name, text in (("sbatch", FAKE_SBATCH), ("scancel", FAKE_SCANCEL)):
        (bin_dir / name).write_text(text.format(jobs=jobs))
        (bin_dir / name).chmod(0o755)
    names = ["softmax"]
    course = synthetic_class(tmp_path / "course", names, students=4)
    (course / "grade_on_slurm.py").write_text(script)
    env = course_env()
    env["PATH"] = f"{bin_dir}{os.pathsep}{env['PATH']}"
    try:
        r = run([sys.executable, "grade_on_slurm.py", *names, "--quiet"], course, env, timeout=600)
    finally:
        for job in jobs.glob("job-*.sh"):  # any job the cluster did not cancel on exit
            subprocess.run(["pkill", "-TERM", "-f", str(job)], check=False)
    scripts = sorted(jobs.glob("job-*.sh"))
    assert scripts, r.stdout[-2000:]  # the second job may still be queued when grading ends
    text = scripts[0].read_text()
    assert "#SBATCH" in text and sys.executable in text and "--nthreads 1" in text
    assert "Dask 워커" in r.stdout, r.stdout[-2000:]
    total = {}
    for _, sid, _, _, score in gradebook_rows(f"sqlite:///{course / 'gradebook.db'}"):
        total[sid] = total.get(sid, 0) + score
    full = max_points(course, "softmax")["softmax"]
    assert total["s000-correct"] == full and total["s002-blank"] == 0, total
    assert 0 < total["s001-wrong"] < full and total["s003-hostile"] < full, total
