"""Instructor path, issue #18: every submission accounted for, every run safe to repeat.

Broken submissions of the fixture course (assignment `demo`: softmax 2 points, Scale 3 points)
graded with the batch command, then with stock `nbgrader autograde`, feedback and the class
report; what each of them tells the instructor and the student. Plus the gradebook check
before grading, the course lock and Ctrl-C.
"""

import csv
import fcntl
import json
import re
import signal
import subprocess
import sys
import time
import warnings
from pathlib import Path

import nbformat
import pytest

from autograder import notebook as nbio
from tests.support.fixture_course import (
    BIN,
    FIXTURE,
    GOOD,
    SCALE,
    SOFTMAX,
    env,
    filled,
    make_course,
    put,
    run,
)

REPO = Path(__file__).resolve().parents[2]
HANG = "def softmax(x, dim=-1):\n    while True:\n        pass\n"
MAX_BYTES = 8000  # c.SubmissionLimits.max_bytes of the test course (a notebook is ~2 KB)


GRADE = [sys.executable, "-m", "autograder", "grade", "demo", "--jobs", "2", "--quiet"]


def cell_index(nb, gid):
    return next(i for i, c in enumerate(nb["cells"]) if nbio.grade_id(c) == gid)


def broken_class(root, release):
    """{student: (expected score, words the problem must contain or None for a clean one)}."""
    good = filled(release, GOOD)
    put(root, "good", "demo.ipynb", good)
    put(root, "badjson", "demo.ipynb", json.dumps(good)[:-40])
    big = dict(good, metadata={"pad": "x" * MAX_BYTES})  # a correct answer, too large
    put(root, "big", "demo.ipynb", big)
    put(root, "renamed", "demo (1).ipynb", good)
    renamed_gid = json.loads(json.dumps(good))
    renamed_gid["cells"][cell_index(good, "scale_sol")]["metadata"]["nbgrader"]["grade_id"] = "x"
    put(root, "gidrenamed", "demo.ipynb", renamed_gid)
    dup = filled(release, {"scale_sol": SCALE})  # stub copied above the filled softmax cell
    stub = dup["cells"][cell_index(dup, "softmax_sol")]
    dup["cells"].insert(cell_index(dup, "softmax_sol"), json.loads(json.dumps(stub)))
    dup["cells"][cell_index(dup, "softmax_sol") + 1]["source"] = SOFTMAX
    put(root, "dupstub", "demo.ipynb", dup)
    no_test = json.loads(json.dumps(good))
    del no_test["cells"][cell_index(good, "test_scale")]
    put(root, "notest", "demo.ipynb", no_test)
    put(root, "nothing", "notes.txt", "no notebook here")
    put(root, "twocopies", "demo (1).ipynb", good)
    put(root, "twocopies", "demo (2).ipynb", good)
    return {
        "good": (5, None),
        "badjson": (0, "올바른 JSON이 아니라서"),
        "big": (0, "제출 파일 크기 제한 7.8 KiB"),
        "renamed": (5, "'demo (1).ipynb'(이)라는 이름으로 제출되어"),
        "gidrenamed": (2, "답안 셀 'scale_sol'이(가) 제출본에 없습니다"),
        "dupstub": (5, "답안 셀 'softmax_sol'이(가) 2개 있어(셀 복제) 채워진 하나로 채점"),
        "notest": (5, "테스트 셀 'test_scale'이(가) 제출본에 없습니다"),
        "nothing": (0, "demo.ipynb가 제출되지 않았습니다"),
        "twocopies": (0, "비슷한 이름의 노트북이 여러 개"),
    }


def scores(root):
    """{student: total score} read back through nbgrader's own Gradebook API."""
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{root / 'gradebook.db'}") as gb:
        return {s.student.id: s.score for s in gb.assignment_submissions("demo")}


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    """The broken class graded by the batch command: (course, expected, stdout)."""
    root = tmp_path_factory.mktemp("instructor") / "course"
    release = make_course(root, f"c.SubmissionLimits.max_bytes = {MAX_BYTES}\n")
    expected = broken_class(root, release)
    out = run(GRADE, root).stdout
    return root, expected, out


@pytest.mark.slow
def test_every_broken_submission_is_flagged_and_recoverable_ones_graded(graded):
    root, expected, out = graded
    assert scores(root) == {s: score for s, (score, _) in expected.items()}
    assert f"제출물 {len(expected)}개" in out
    flagged = out.split("제출물 문제", 1)[1]
    for student, (_, words) in expected.items():
        lines = [ln for ln in flagged.splitlines() if ln.startswith(f"  {student}: ")]
        if words is None:
            assert not lines, lines
        else:
            assert any(words in ln for ln in lines), (student, words, out)
    assert "다시 제출하세요" in flagged  # what the student should do
    # the summary agrees with the gradebook: 3 full marks (good, renamed, dupstub, notest)
    assert "만점 4명" in out and f"0점 {sum(s == 0 for s, _ in expected.values())}명" in out


@pytest.mark.slow
def test_feedback_and_class_report_show_the_problems(graded):
    root, expected, _ = graded
    run([str(BIN / "nbgrader"), "generate_feedback", "demo", "--force"], root)
    for student, (_, words) in expected.items():
        page = (root / "feedback" / student / "demo" / "demo.html").read_text()
        assert ("채점 안내" in page) == (words is not None), student
        offline_math(page)
        korean_page(page)
        if words:
            assert words.replace("'", "&#39;") in page or words in page, student
    run([sys.executable, "-m", "autograder", "report", "demo", "--quiet"], root)
    with open(root / "reports" / "demo.csv", newline="", encoding="utf-8") as f:
        rows = {r["student"]: r for r in csv.DictReader(f)}
    for student, (score, words) in expected.items():
        assert float(rows[student]["total_score"]) == score
        assert (rows[student]["problem"] == "") == (words is None), student
        assert words is None or words in rows[student]["problem"]
    text = (root / "reports" / "demo.html").read_text(encoding="utf-8")
    assert "<h1>반 보고서: demo</h1>" in text and "문항별 난이도" in text
    assert '<a href="../feedback/good/demo/demo.html">demo</a>' in text
    assert "제출물 문제 (8명)" in text


ENGLISH_LABELS = ("Test cell", "Student's answer", "Score:", "Comments:", "No response.", "(Top)")


def korean_page(page):
    """A feedback page speaks Korean (no label of nbgrader's template left in English), and its
    messages wrap at the page's width instead of running off it."""
    text = re.sub(r"<[^>]+>", " ", page)
    assert not [label for label in ENGLISH_LABELS if label in text]
    assert "테스트 셀" in text and "점수: " in text
    assert re.search(r"pre[^{}]*\{white-space: pre-wrap", page)


def offline_math(page):
    """A feedback page shows its math without a network: MathML, no script from elsewhere."""
    assert not re.search(r"<script[^>]*\bsrc=", page), re.findall(r"<script[^>]*>", page)
    assert "mathjax" not in page.lower() and "$$" not in page and "$y_i" not in page
    assert page.count('<math display="inline"') >= 1
    assert page.count('<math display="block"') >= 1 and "<mfrac>" in page


def test_feedback_math_of_every_release_notebook_is_mathml():
    """Every formula of the course's release notebooks renders as MathML (none left as TeX)."""
    from autograder.nbgrader.feedback_page import OfflineMathHTMLExporter

    exporter = OfflineMathHTMLExporter()
    for path in sorted((REPO / "exercises/release").glob("*/*.ipynb")):
        nb = nbformat.read(path, as_version=4)
        nb.cells = [c for c in nb.cells if c.cell_type == "markdown"]
        dollars = sum(c.source.count("$") for c in nb.cells)
        page, _ = exporter.from_notebook_node(nb)
        body = page[page.index("<body") :]
        assert dollars and "<math" in body, path.name
        assert "$" not in body and 'class="tex"' not in body, path.name
        assert "mathjax" not in page.lower(), path.name


@pytest.mark.slow
def test_stock_autograde_agrees_without_noise(graded):
    root, expected, _ = graded
    r = run(
        [str(BIN / "nbgrader"), "autograde", "demo", "--force"],
        root,
        env=dict(env(), PYTHONWARNINGS="default"),
    )
    assert scores(root) == {s: score for s, (score, _) in expected.items()}
    assert "checksum" not in r.stderr and "MissingIDField" not in r.stderr, r.stderr[-3000:]
    assert "Skipping unknown notebook" not in r.stderr
    nb = nbformat.read(root / "autograded/renamed/demo/demo.ipynb", as_version=4)
    assert "'demo (1).ipynb'" in nb.metadata["autograder"]["problems"][0]


def test_read_submission_gives_cell_ids_and_the_size_limit_is_a_setting(tmp_path):
    from traitlets.config import Config

    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("x = 1")])
    data = json.loads(nbformat.writes(nb))
    del data["cells"][0]["id"]  # as saved by an old Jupyter
    (tmp_path / "a.ipynb").write_text(json.dumps(data))
    read, problems = nbio.read_submission(tmp_path / "a.ipynb")
    assert problems == [] and read.cells[0].id
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        nbformat.validate(read)
    config = Config()
    config.SubmissionLimits.max_bytes = 10
    limit = nbio.SubmissionLimits(config=config).max_bytes
    assert limit == 10 and nbio.SubmissionLimits().max_bytes == 20 << 20
    read, problems = nbio.read_submission(tmp_path / "a.ipynb", limit)
    assert read.cells == [] and "제출 파일 크기 제한 10 B보다 커서" in problems[0]
    assert "c.SubmissionLimits.max_bytes" in (REPO / "docs/instructor_guide.md").read_text()


def test_locate_finds_a_renamed_notebook_only_when_unambiguous(tmp_path):
    def files(*names):
        folder = tmp_path / str(len(list(tmp_path.iterdir())))
        folder.mkdir()
        for n in names:
            (folder / n).write_text("{}")
        return folder

    assert nbio.locate(files("a.ipynb"), "a", ["a"]) == (tmp_path / "0" / "a.ipynb", [])
    path, notes = nbio.locate(files("A (1).ipynb"), "a", ["a"])
    assert path.name == "A (1).ipynb" and "a.ipynb로 보고 채점했습니다" in notes[0]
    path, notes = nbio.locate(files("homework.ipynb", "b.ipynb"), "a", ["a", "b"])
    assert path.name == "homework.ipynb"  # the only notebook missing, the only stranger
    path, notes = nbio.locate(files("x.ipynb", "y.ipynb"), "a", ["a"])
    assert path is None and "'x.ipynb', 'y.ipynb'" in notes[0]
    path, notes = nbio.locate(files("a-Copy1.ipynb", "a (2).ipynb"), "a", ["a"])
    assert path is None and "여러 개" in notes[0]
    path, notes = nbio.locate(files(".a.ipynb"), "a", ["a"])
    assert path is None and "a.ipynb가 제출되지 않았습니다" in notes[0]


def test_match_cells_notes_every_graded_cell_that_does_not_match():
    course = nbio.Course(FIXTURE)
    template = course.template("demo", "demo")
    sub = nbformat.from_dict(json.loads(json.dumps(template)))
    assert nbio.match_cells(template, sub)[1] == []  # the release notebook itself: clean
    i = cell_index(sub, "softmax_sol")
    sub.cells.insert(i, nbformat.from_dict(json.loads(json.dumps(sub.cells[i]))))  # two stubs
    sub.cells[cell_index(sub, "test_softmax")].metadata.nbgrader["grade_id"] = "test_mine"
    del sub.cells[cell_index(sub, "scale_sol")]
    found, notes = nbio.match_cells(template, sub)
    assert found["softmax_sol"] == template.cells[i].source  # both copies blank: the stub
    assert "'softmax_sol'이(가) 2개 있어(셀 복제) 빈 답안으로" in notes[0]
    assert any("테스트 셀 'test_softmax'이(가) 제출본에 없습니다" in n for n in notes)
    assert any("답안 셀 'scale_sol'이(가) 제출본에 없습니다" in n for n in notes)
    assert any("'test_mine'" in n for n in notes)
    assert nbio.match_cells(template, nbio.empty_notebook()) == ({}, [])  # said by the reader


def test_problems_are_escaped_in_the_feedback_cell():
    from autograder.nbgrader.preprocessors import write_verdicts
    from autograder.report import Report

    nb = nbformat.v4.new_notebook()
    write_verdicts(nb, Report({}, 0.5, ["'<img src=x onerror=alert(1)>_*.ipynb' 문제"]))
    cell = nb.cells[0]
    assert "<img" not in cell.source and "&lt;img" in cell.source and r"\_\*" in cell.source
    assert nb.metadata["autograder"]["problems"] == ["'<img src=x onerror=alert(1)>_*.ipynb' 문제"]


@pytest.mark.slow
def test_gradebook_must_hold_the_assignment(tmp_path):
    """No grading (and nothing written) while the gradebook lacks the assignment's notebooks:
    no gradebook (release/ copied from elsewhere), then only a due date imported. (Grading after
    generate_assignment, with the late penalty in the summary and the class report:
    tests/instructor/test_instructor_guide.py, on PostgreSQL.)"""
    root = tmp_path / "course"
    release = make_course(root)
    put(root, "kim", "demo.ipynb", filled(release, GOOD))
    (root / "gradebook.db").unlink()
    for _ in range(2):
        r = run([*GRADE, "--jobs", "1"], root, ok=False)  # one judge started and stopped
        assert "nbgrader generate_assignment demo" in r.stderr and "채점했습니다" not in r.stdout
        assert not (root / "autograded").exists() and "Traceback" not in r.stderr
        (root / "assignments.csv").write_text("name,duedate\ndemo,2026-03-22 23:59:59 Asia/Seoul\n")
        run([str(BIN / "nbgrader"), "db", "assignment", "import", "assignments.csv"], root)


@pytest.mark.slow
def test_second_run_is_refused_and_ctrl_c_stops_cleanly(tmp_path):
    root = tmp_path / "course"
    release = make_course(root)
    hang_class = "class Scale:\n    def __init__(self, d):\n        while True:\n            pass\n"
    for i in range(4):  # every check times out: grading lasts at least 4 x 4 s after start-up,
        # so Ctrl-C lands while it runs even on a loaded machine
        put(
            root,
            f"hang{i}",
            "demo.ipynb",
            filled(release, {"softmax_sol": HANG, "scale_sol": hang_class}),
        )
    with open(root / ".autograder.lock", "a+") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        lock.write("12345\n")
        lock.flush()
        r = run(GRADE, root, ok=False, timeout=60)
    assert "다른 채점이 이 과정 폴더에서 진행 중입니다(프로세스 12345" in r.stderr
    assert "Traceback" not in r.stderr
    proc = subprocess.Popen(
        GRADE,
        cwd=root,
        env=env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        # as typed in a terminal: a process started with SIGINT ignored (a pytest-xdist worker,
        # a background job) passes that on, and Python then never raises KeyboardInterrupt
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    deadline = time.monotonic() + 120
    while not processes_mentioning(root) and time.monotonic() < deadline:
        time.sleep(0.2)  # until the judges (their command lines name the course's checks) run
    time.sleep(3)  # hanging notebooks in their sandboxes
    assert proc.poll() is None
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=30)
    assert proc.returncode != 0 and "채점을 중단했습니다(Ctrl-C)" in err
    assert "Traceback" not in err, err[-3000:]
    assert [ln for ln in err.splitlines() if ln.strip()][-1].startswith("채점을 중단했습니다")
    deadline = time.monotonic() + 15  # sandboxes die with their judge (asynchronously)
    while processes_mentioning(root) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not processes_mentioning(root), "a judge or sandbox outlived Ctrl-C"
    run(GRADE, root)  # a rerun finishes the job
    assert scores(root) == {f"hang{i}": 0.0 for i in range(4)}


def processes_mentioning(root):
    """Pids whose command line names the course folder (its judges name its checks)."""
    found = []
    for proc in Path("/proc").iterdir():
        try:
            if str(root) in (proc / "cmdline").read_bytes().decode(errors="replace"):
                found.append(proc.name)
        except OSError:
            continue
    return found
