"""`python -m autograder report`: the class report of a small synthetic softmax class.

The class is graded by the batch command in a temporary course; the report's CSV and HTML must
agree with nbgrader's gradebook (read here independently), embed its plots (opens offline) and
list the crashed and timed-out submissions. Missing gradebook, unknown assignment and nothing
graded yet give clear errors. A second class (the fixture course, with a due date, a late
penalty and roster students who never submitted) checks every score the batch summary and the
report show, the histogram's bars included, against `nbgrader export`.
"""

import collections
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
from tests.support import fixture_course as fc

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
    summary = run(grade + ["--jobs", "2", "--wall", "6"], root).stdout
    errors["gradebook에 과제 'nosuch'이(가) 없습니다"] = report(root, "nosuch", ok=False).stderr
    out = report(root, "softmax").stdout
    assert "reports/softmax.html" in out and "reports/softmax.csv" in out
    return root, errors, summary


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
            plots.score_plot(rows, 5.0, 2),  # with absent students: a legend
            plots.outcome_plot(cells, cr.outcome_counts(cells, rows), len(rows)),
            plots.time_plot([("s0", "softmax", 1.5)]),
            plots.time_plot([]),
        ]
    assert matplotlib.rcParams["font.family"] == before
    assert [re.search(r'alt="([^"]*)"', i).group(1) for i in images] == [
        "점수 분포",
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


# ------------------------------------------------- late penalties and students who never submitted

ABSENT = ("kim", "lee")  # on the roster (nbgrader db student add), never submitted
DUE = "name,duedate\ndemo,2026-03-22 23:59:59 Asia/Seoul\n"
LATE_CLASS = {  # student -> (solution cells, submission time)
    "ontime": (fc.GOOD, "2026-03-20 12:00:00 UTC"),
    "late": (fc.GOOD, "2026-03-23 10:00:00 UTC"),  # 19 hours late: nbgrader's "zero" penalty
    "half": ({"softmax_sol": fc.SOFTMAX}, "2026-03-21 09:00:00 UTC"),
}
HANGUL = re.compile("[가-힣]")


@pytest.fixture(scope="module")
def late_class(tmp_path_factory):
    """The fixture course (`demo`, 5 points) with a due date, nbgrader's "zero" late penalty and
    a roster of five: two never submit. Graded by the batch command, reported, and exported with
    `nbgrader export` -> (course root, the batch command's stdout, the export's rows by
    student)."""
    root = tmp_path_factory.mktemp("late-class") / "course"
    (root.parent / "assignments.csv").write_text(DUE, encoding="utf-8")
    before = [["db", "assignment", "import", "../assignments.csv"]]
    before += [["db", "student", "add", student] for student in ABSENT]
    config = 'c.LateSubmissionPlugin.penalty_method = "zero"\n'
    release = fc.make_course(root, config, before=before)
    for student, (codes, when) in LATE_CLASS.items():
        fc.put(root, student, "demo.ipynb", fc.filled(release, codes))
        fc.put(root, student, "timestamp.txt", when)
    grade = [sys.executable, "-m", "autograder", "grade", "demo", "--jobs", "2", "--quiet"]
    out = fc.run(grade, root).stdout
    fc.run([sys.executable, "-m", "autograder", "report", "demo", "--quiet"], root)
    fc.run([str(BIN / "nbgrader"), "export", "--to", "grades.csv"], root)
    with open(root / "grades.csv", newline="", encoding="utf-8") as f:
        exported = {r["student_id"]: r for r in csv.DictReader(f) if r["assignment"] == "demo"}
    return root, out, exported


def export_scores(exported):
    """({student: score after the late penalty}, max score) as `nbgrader export` wrote them (0
    for a roster student without a submission)."""
    scores = {s: float(r["score"]) for s, r in exported.items()}
    (max_score,) = {float(r["max_score"]) for r in exported.values()}
    return scores, max_score


def statistics_text(scores, max_score):
    """The score statistics the summary and the report must show, computed from ``scores``."""
    values = list(scores.values())
    return [
        f"평균 {statistics.mean(values):.2f} / {max_score:g}",
        f"중앙값 {statistics.median(values):g}",
        f"만점 {sum(v == max_score for v in values)}명",
        f"0점 {sum(v == 0 for v in values)}명",
    ]


def drawn_score_bars(root, tmp_path, monkeypatch):
    """{score: students} as the bars of the report's score histogram draw them: the report
    written again in this process, its matplotlib figure kept where plots.png embeds it."""
    from nbgrader.coursedir import CourseDirectory

    from autograder.notebook import course_config
    from autograder.reporting import class_report, plots

    figures, embed = {}, plots.png
    monkeypatch.setattr(
        plots, "png", lambda fig, alt: (figures.setdefault(alt, fig), embed(fig, alt))[1]
    )
    coursedir = CourseDirectory(config=course_config(root), root=str(root))
    class_report.write_report(coursedir, "demo", tmp_path, quiet=True)
    (ax,) = figures["점수 분포"].axes
    bars = collections.Counter()
    for bar in ax.patches:
        bars[round(bar.get_x() + bar.get_width() / 2, 6)] += round(bar.get_height())
    return {score: n for score, n in bars.items() if n}


def report_csv(root):
    with open(root / "reports" / "demo.csv", newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def student_table_scores(text):
    """{student: (총점, 지각 감점, 최종 점수)} of the report's per-student table."""
    section = text.split("<h2>학생별 결과</h2>")[1].split("<h2>")[0]
    row = r"<tr><td>([^<]*)</td><td>(?:(?!</td>).)*</td>" + r"<td>([^<]*)</td>" * 3
    return {m[0]: tuple(float(x) for x in m[1:]) for m in re.findall(row, section)}


@pytest.mark.slow
def test_every_score_shown_is_after_the_late_penalty(late_class, tmp_path, monkeypatch):
    """The histogram's bars, the report's text and tables and the batch summary all show the
    scores `nbgrader export` computes (raw score minus the late penalty, 0 for a roster student
    without a submission): with the raw score the histogram had one more full mark."""
    root, out, exported = late_class
    scores, max_score = export_scores(exported)
    raw = {s: float(r["raw_score"]) for s, r in exported.items()}
    assert sum(v == max_score for v in raw.values()) > sum(v == max_score for v in scores.values())
    assert drawn_score_bars(root, tmp_path, monkeypatch) == collections.Counter(scores.values())
    text = (root / "reports" / "demo.html").read_text(encoding="utf-8")
    line = next(ln for ln in out.splitlines() if ln.startswith("점수(지각 감점 후"))
    for words in statistics_text(scores, max_score):
        assert words in text, (words, text.split("<h2>")[1][:600])
        assert words in line, (words, line)
    table = student_table_scores(text)
    assert set(table) == set(scores)
    for student, (total, penalty, final) in table.items():
        row = exported[student]
        assert (total, penalty) == (float(row["raw_score"]), float(row["late_submission_penalty"]))
        assert final == scores[student], student
    rows = {r["student"]: r for r in report_csv(root)}
    assert {s: float(r["final_score"]) for s, r in rows.items()} == scores


@pytest.mark.slow
def test_roster_students_without_a_submission_are_named_and_count_as_zero(late_class):
    """Students of the gradebook's roster who did not submit are named in the batch summary and
    the report (text, per-student table, CSV), which say they count as 0; the pass rates of the
    test cells count the submissions only, and say so."""
    from nbgrader.api import Gradebook

    root, out, exported = late_class
    with Gradebook(f"sqlite:///{root / 'gradebook.db'}") as gb:
        roster = {s.id for s in gb.students}
        submitted = {sub.student.id for sub in gb.assignment_submissions("demo")}
    absent = sorted(roster - submitted)
    assert absent == sorted(s for s, r in exported.items() if not r["timestamp"]) and absent
    named = f"미제출 {len(absent)}명: {', '.join(absent)}"
    (line,) = [ln for ln in out.splitlines() if ln.startswith(named)]
    assert "0점으로" in line
    assert f"(미제출 {len(absent)}명 포함)" in out
    text = (root / "reports" / "demo.html").read_text(encoding="utf-8")
    assert line.split(" (")[0] in text and "0점으로 넣었습니다" in text
    assert f"학생 {len(roster)}명, 미제출 0점 포함" in text
    assert f"통과율은 제출한 {len(submitted)}명 기준입니다" in text
    rates = re.findall(r"<td>\d+/(\d+) \(\d+%\)</td>", text)  # the test cells' pass rates
    assert rates and set(rates) == {str(len(submitted))}
    table = text.split("<h2>학생별 결과</h2>")[1].split("<h2>")[0]
    for student in absent:
        assert f"<tr><td>{student}</td><td>(제출물 없음)</td>" in table
    rows = {r["student"]: r for r in report_csv(root)}
    assert set(rows) == roster
    assert {s for s, r in rows.items() if r["submitted"] == "no"} == set(absent)
    assert all(rows[s]["final_score"] == "0" and rows[s]["problem"] == "미제출" for s in absent)


def english_lines(out):
    """The lines of the batch command's stdout with no Korean: none but the test-cell rows
    (notebook/grade_id, points, passed/submissions)."""
    cell_row = re.compile(r"^\S+/\S+\s+[\d.]+\s+\d+/\d+\s*$")
    return [
        ln
        for ln in out.splitlines()
        if ln.strip() and not HANGUL.search(ln) and not cell_row.match(ln)
    ]


@pytest.mark.slow
def test_batch_summary_has_no_english_line(course, late_class):
    """Every line of the batch command's output speaks Korean (a crashed and a timed-out
    submission, a late one and absent students included), but the test-cell rows."""
    assert "비정상 종료 또는 시간 초과 2명" in course[2]
    for out in (course[2], late_class[1]):
        assert not english_lines(out), out
