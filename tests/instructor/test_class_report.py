"""`python -m autograder report`: the class report of a small synthetic softmax class.

The class is graded by the batch command in a temporary course; the report's CSV and HTML must
agree with nbgrader's gradebook (read here independently), embed its plots (opens offline) and
list the crashed and timed-out submissions. Missing gradebook, unknown assignment and nothing
graded yet give clear errors.
"""

import csv
import json
import os
import re
import statistics
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from bench.grading import filled, make_course, solution_sources

REPO = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
WRONG_JACOBIAN = "def softmax_jacobian(p):\n    return torch.diag_embed(p)\n"
CRASH = "def softmax(x, dim=-1, temperature=1.0):\n    import os\n    os._exit(1)\n"
HANG = "def softmax(x, dim=-1, temperature=1.0):\n    while True:\n        pass\n"
STUDENTS = {  # student -> solution cells replaced (None: the release notebook, blank)
    "s0_correct": {},
    "s1_blank": None,
    "s2_jacobian": {"softmax_jacobian": WRONG_JACOBIAN},
    "s3_jacobian": {"softmax_jacobian": WRONG_JACOBIAN},
    "s4_crash": {"softmax": CRASH},
    "s5_hang": {"softmax": HANG},
}


def run(cmd, course, ok=True):
    r = subprocess.run(cmd, cwd=course, env=ENV, capture_output=True, text=True, timeout=300)
    assert (r.returncode == 0) == ok, r.stdout[-3000:] + r.stderr[-3000:]
    return r


def report(course, assignment, ok=True):
    return run([sys.executable, "-m", "autograder", "report", assignment, "--quiet"], course, ok)


def submit(course):
    source = json.loads((REPO / "exercises/source/softmax/softmax.ipynb").read_text())
    release = json.loads((course / "release/softmax/softmax.ipynb").read_text())
    for student, changes in STUDENTS.items():
        nb = filled(release, {} if changes is None else {**solution_sources(source), **changes})
        folder = course / "submitted" / student / "softmax"
        folder.mkdir(parents=True)
        (folder / "softmax.ipynb").write_text(json.dumps(nb))


@pytest.fixture(scope="module")
def course(tmp_path_factory):
    """Course graded with the batch command and reported; the error messages met on the way."""
    root = tmp_path_factory.mktemp("class-report") / "course"
    make_course(root, ["softmax"], engine=True)
    errors = {"gradebook이 없습니다": report(root, "softmax", ok=False).stderr}
    run([str(BIN / "nbgrader"), "generate_assignment", "softmax", "--force"], root)
    errors["과제 'softmax'은(는) 아직 채점되지 않았습니다"] = report(
        root, "softmax", ok=False
    ).stderr
    submit(root)
    grade = [sys.executable, "-m", "autograder", "grade", "softmax", "--quiet"]
    run(grade + ["--jobs", "2", "--wall", "6"], root)
    errors["gradebook에 과제 'nosuch'이(가) 없습니다"] = report(root, "nosuch", ok=False).stderr
    out = report(root, "softmax").stdout
    assert "reports/softmax.html" in out and "reports/softmax.csv" in out
    return root, errors


def gradebook(course):
    """{student: (score, max_score, {notebook/grade_id: (score, max_score)})}, read directly."""
    from nbgrader.api import Gradebook

    book = {}
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gb:
        for sub in gb.assignment_submissions("softmax"):
            grades = [(nb.name, g) for nb in sub.notebooks for g in nb.grades]
            cells = {f"{n}/{g.name}": (g.score, g.max_score) for n, g in grades}
            book[sub.student.id] = (sub.score, sub.max_score, cells)
    return book


def csv_rows(course):
    with open(course / "reports" / "softmax.csv", newline="", encoding="utf-8") as f:
        return {row["student"]: row for row in csv.DictReader(f)}


@pytest.mark.slow
def test_errors_are_clear(course):
    for words, stderr in course[1].items():
        assert f"report: {words}" in stderr and "Traceback" not in stderr, stderr


@pytest.mark.slow
def test_html_is_self_contained(course):
    text = (course[0] / "reports" / "softmax.html").read_text(encoding="utf-8")
    assert len(re.findall(r'<img [^>]*src="data:image/png;base64,[A-Za-z0-9+/=]+"', text)) >= 3
    remote = r"""(src|href)\s*=\s*["']?\s*(https?:|//)|<script|<link|<iframe|url\(|@import"""
    assert not re.search(remote, text, re.I)


@pytest.mark.slow
def test_scores_and_passes_agree_with_gradebook(course):
    root = course[0]
    book, rows = gradebook(root), csv_rows(root)
    text = (root / "reports" / "softmax.html").read_text(encoding="utf-8")
    assert set(book) == set(rows) == set(STUDENTS)
    for student, (score, max_score, cells) in book.items():
        row = rows[student]
        assert float(row["total_score"]) == pytest.approx(score)
        assert float(row["max_score"]) == pytest.approx(max_score) == 10
        assert float(row["grading_seconds"]) > 0
        for name, (s, m) in cells.items():
            assert float(row[f"{name} score"]) == pytest.approx(s), (student, name)
            assert (row[f"{name} outcome"] == "passed") == (s == m), (student, name)
    for name in book["s0_correct"][2]:
        passed = sum(cells[name][0] == cells[name][1] for _, _, cells in book.values())
        cell_row = rf"<tr><td>{re.escape(name)}</td><td>[^<]*</td><td>{passed}/{len(book)} \("
        assert re.search(cell_row, text), name
    mean = statistics.mean(score for score, _, _ in book.values())
    assert f"평균 {mean:.2f}" in text
    assert book["s0_correct"][0] == 10 and book["s1_blank"][0] == 0


@pytest.mark.slow
def test_crashed_and_timed_out_submissions_are_listed(course):
    root = course[0]
    rows = csv_rows(root)
    text = (root / "reports" / "softmax.html").read_text(encoding="utf-8")
    for student, outcome in (("s4_crash", "crashed"), ("s5_hang", "timeout")):
        assert rows[student]["softmax/test_softmax_stable outcome"] == outcome
        korean = {"crashed": "비정상 종료", "timeout": "시간 초과"}[outcome]
        listed = f"<tr><td>{student}</td><td>softmax/test_softmax_stable</td><td>{korean}</td>"
        assert listed in text
    assert rows["s2_jacobian"]["softmax/test_softmax_jacobian outcome"] == "failed"
    # the same mistake (same run seed, same first line) is counted once, for two students
    assert "<tr><td>softmax/test_softmax_jacobian</td><td>2</td>" in text
    assert "<td>s0_correct</td>" not in text.split("채점 오류·시간 초과")[1].split("<h2>")[0]
    assert "<tr><td>s4_crash</td><td>" in text.split("학생별 결과")[1]  # per-student table
    nb = nbformat.read(root / "autograded/s4_crash/softmax/softmax.ipynb", as_version=4)
    assert nb.metadata["autograder"]["seconds"] > 0
    enames = {o.ename for c in nb.cells for o in c.get("outputs", []) if o.output_type == "error"}
    assert "StudentCrashed" in enames


@pytest.mark.slow
def test_report_is_in_korean(course):
    """Headings, table headers and outcomes in Korean; the per-student table links feedback
    (after generate_feedback) or says there is none yet; the CSV keeps its machine names."""
    root = course[0]
    text = (root / "reports" / "softmax.html").read_text(encoding="utf-8")
    headings = re.findall(r"<h[12]>([^<]*)</h[12]>", text)
    assert headings and all(re.search("[가-힣]", h) for h in headings), headings
    headers = set(re.findall(r"<th>([^<]*)</th>", text))
    assert {"테스트 셀", "난이도", "학생", "피드백", "최종 점수", "실패", "시간 초과"} <= headers
    assert not headers & {"passed", "failed", "crashed", "timeout", "grader-error", "missing"}
    students = text.split("<h2>학생별 결과</h2>")[1].split("<h2>")[0]
    assert "<td>통과</td>" in students and "<td>실패</td>" in students
    assert students.count("(아직 없음)") == len(STUDENTS)  # no generate_feedback yet
    assert all(alt and re.search("[가-힣]", alt) for alt in re.findall(r'<img alt="([^"]*)"', text))
    assert set(csv_rows(root)["s0_correct"].values()) & {"passed"}


def test_plots_are_labelled_in_korean_with_a_korean_font():
    """Every plot of the report draws its Korean labels without a missing glyph, and leaves
    matplotlib's global font settings alone."""
    import warnings

    import matplotlib

    from autograder.reporting import class_report as cr
    from autograder.reporting import plots

    cells = [("softmax", "test_a", 2.0), ("softmax", "test_b", 3.0)]
    rows = [cr.Row(f"s{i}", i, 5.0, {}) for i in range(4)]
    for i, r in enumerate(rows):
        r.outcomes = {c[:2]: cr.OUTCOMES[i % 4] for c in cells}
    before = list(matplotlib.rcParams["font.family"])
    assert plots.korean_fonts()[1:], "no Korean font (tools/sysdeps.sh installs fonts-nanum)"
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # "Glyph ... missing from font(s)" is a UserWarning
        images = [
            plots.score_plot(rows, 5.0),
            plots.outcome_plot(cells, cr.outcome_counts(cells, rows), len(rows)),
            plots.time_plot([("s0", "softmax", 1.5)]),
            plots.time_plot([]),
        ]
    assert matplotlib.rcParams["font.family"] == before
    assert [re.search(r'alt="([^"]*)"', i).group(1) for i in images] == [
        "점수 분포",
        "테스트 셀별 결과",
        "노트북별 채점 시간",
        "노트북별 채점 시간",
    ]
    source = Path(cr.__file__).read_text(encoding="utf-8")
    for call in re.findall(r"ax\.(?:set_xlabel|set_ylabel|set_title|text)\(([^\n]*)", source):
        assert re.search("[가-힣]", call), call  # every axis label and title is Korean


def test_batch_summary_reads_the_gradebook_without_matplotlib():
    """The batch command's summary (reporting/summary.py) reads the gradebook with class_report; the
    plots' module, and matplotlib with it (about half a second of CPU), load only for a report."""
    import subprocess
    import sys

    code = (
        "import sys; import autograder.cli, autograder.reporting.summary; "
        "print(sorted(m for m in ('matplotlib', 'autograder.reporting.plots') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_batch_command_validates_notebooks_without_the_iri_grammar():
    """The batch command keeps jsonschema (nbformat's validator) from compiling the lark grammar
    of its IRI format checker (0.65 s of CPU at every start); notebooks are validated as before:
    a broken one is still refused."""
    import subprocess
    import sys

    code = (
        "import sys; import autograder.cli; import nbformat; "
        "nb = nbformat.v4.new_notebook(); nbformat.validate(nb); "
        "nb.cells = [{'cell_type': 'code'}]; bad = nbformat.validator.isvalid(nb); "
        "print(bad, sorted(m for m in ('lark', 'rfc3987_syntax') if sys.modules.get(m)))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False []"


def test_failures_are_counted_by_the_misconception_they_name():
    """Two cases of one test cell naming the same catalogued misconception count as one
    misconception; a message without a diagnosis is known by its first line."""
    from autograder.report import MISCONCEPTION
    from autograder.reporting.class_report import misconception

    a = f"softmax [dim=1]: {MISCONCEPTION} dim 인자를 쓰지 않았습니다\n값이 다릅니다"
    b = f"softmax [dim=0]: {MISCONCEPTION} dim 인자를 쓰지 않았습니다\n값이 다릅니다"
    assert misconception(a) == misconception(b) == f"{MISCONCEPTION} dim 인자를 쓰지 않았습니다"
    assert misconception("softmax [dim=1]: 3개 중 1개 값이 다릅니다\n입력") == (
        "softmax [dim=1]: 3개 중 1개 값이 다릅니다"
    )
