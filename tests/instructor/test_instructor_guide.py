"""docs/instructor_guide.md tested as written: its snippets are read from the guide and run.

The fixture course (assignment `demo`) stands in for exercises/; a snippet's assignment name
`softmax` becomes `demo`.
"""

import csv
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.fixture_course import GOOD, filled, make_course, put

REPO = Path(__file__).resolve().parents[2]
GUIDE = REPO / "docs" / "instructor_guide.md"
FIXTURES = REPO / "tests" / "fixtures"
FIXTURE = FIXTURES / "grader_course"
BIN = Path(sys.executable).parent
GRADE = [sys.executable, "-m", "autograder", "grade", "demo", "--jobs", "1", "--quiet"]


def guide_blocks(lang):
    """The guide's fenced code blocks of language ``lang``, in order."""
    text = GUIDE.read_text(encoding="utf-8")
    return re.findall(rf"^```{lang}\n(.*?)^```", text, re.S | re.M)


def guide_block(lang, contains):
    blocks = [b for b in guide_blocks(lang) if contains in b]
    assert len(blocks) == 1, (contains, len(blocks))
    return blocks[0]


def run(cmd, cwd, ok=True, **kw):
    r = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=600, **kw)
    assert (r.returncode == 0) == ok, r.stdout[-3000:] + r.stderr[-3000:]
    return r


@pytest.mark.slow
def test_due_date_first_and_extension_snippet_on_postgresql(postgres, tmp_path):
    """Due date imported before generate_assignment (max_score stays 5), a late submission
    penalised in the batch summary and the class report, the guide's extension snippet run as
    written against PostgreSQL, the student regraded without the penalty."""
    from nbgrader.api import Gradebook

    root = tmp_path / "course"
    config = f'c.CourseDirectory.db_url = "{postgres}"\n'
    config += 'c.LateSubmissionPlugin.penalty_method = "zero"\n'
    (tmp_path / "assignments.csv").write_text(
        "name,duedate\ndemo,2026-03-22 23:59:59 Asia/Seoul\n", encoding="utf-8"
    )
    release = make_course(
        root, config, before=[["db", "assignment", "import", "../assignments.csv"]]
    )
    put(root, "kim", "demo.ipynb", filled(release, GOOD))
    put(root, "kim", "timestamp.txt", "2026-03-23 10:00:00 UTC")  # 19 hours late
    put(root, "lee", "demo.ipynb", filled(release, GOOD))
    put(root, "lee", "timestamp.txt", "2026-03-20 12:00:00 UTC")  # on time
    out = run(GRADE, root).stdout
    assert "지각 감점 1명: kim -5" in out and "평균 2.50 / 5" in out
    run([sys.executable, "-m", "autograder", "report", "demo", "--quiet"], root)
    with open(root / "reports" / "demo.csv", newline="", encoding="utf-8") as f:
        rows = {r["student"]: r for r in csv.DictReader(f)}
    late = [rows["kim"][k] for k in ("total_score", "late_penalty", "final_score")]
    assert late == ["5", "5", "0"] and rows["lee"]["final_score"] == "5"
    with Gradebook(postgres) as gb:
        assert gb.find_assignment("demo").max_score == 5
    snippet = guide_block("bash", "grant_extension")
    python_code = re.search(r'python -c "\n(.*?)\n"', snippet, re.S).group(1)
    run([sys.executable, "-c", python_code.replace("softmax", "demo")], root)
    regrade = snippet.splitlines()[-1].replace("../.venv/bin/python", sys.executable)
    out = run(regrade.replace("softmax", "demo").split(), root).stdout
    assert "지각 감점 1명" not in out and "만점 2명" in out
    with Gradebook(postgres) as gb:
        sub = gb.find_submission("demo", "kim")
        assert sub.late_submission_penalty == 0 and sub.score == 5


def test_students_are_never_told_to_run_make_book():
    text = GUIDE.read_text(encoding="utf-8")
    for sentence in re.split(r"(?<=[.다])\s", text):
        if "학생" in sentence and "make book" in sentence:
            assert "학생은 쓰지 않" in sentence or "쓰지 않습니다" in sentence, sentence
    assert "requirements-student.txt" in text


@pytest.mark.parametrize("lms, marker", [("moodle", "assignsubmission"), ("canvas", "LATE_")])
def test_lms_exports_are_collected_with_the_guides_settings(tmp_path, lms, marker):
    """The guide's FileNameCollectorPlugin setting for each LMS, on a zip holding files under
    the names that LMS exports (tests/fixtures/lms/<lms>.txt), with `nbgrader zip_collect`."""
    import zipfile

    root = tmp_path / "course"
    shutil.copytree(FIXTURE, root, ignore=shutil.ignore_patterns("__pycache__", ".canary-*"))
    with open(root / "nbgrader_config.py", "a", encoding="utf-8") as f:
        f.write(guide_block("python", marker))
    lines = (FIXTURES / "lms" / f"{lms}.txt").read_text(encoding="utf-8").splitlines()
    names = [line.split("\t") for line in lines]
    archive = root / "downloaded" / "demo" / "archive"
    archive.mkdir(parents=True)
    with zipfile.ZipFile(archive / "submissions.zip", "w") as z:
        for path, _ in names:
            z.writestr(path.replace("softmax", "demo"), '{"cells": []}')
    run([str(BIN / "nbgrader"), "zip_collect", "demo"], root)
    for path, student in names:
        stem = Path(path).name.replace("softmax", "demo")
        wanted = "demo (1).ipynb" if "(1)" in stem else "demo.ipynb"
        assert (root / "submitted" / student / "demo" / wanted).is_file(), (path, student)


def test_exchange_setup_is_one_command_and_the_round_trip_works(tmp_path):
    """The guide's exchange command (on a temporary folder instead of /usr/local/share), then
    release_assignment, a student's fetch_assignment and submit, and collect."""
    command = guide_block("bash", "nbgrader/exchange").split("#")[0].split()
    assert command[0] == "sudo" and len([ln for ln in command if ln == "install"]) == 1
    exchange = tmp_path / "exchange"
    run([*command[1:-1], str(exchange)], tmp_path)
    assert oct(exchange.stat().st_mode & 0o7777) == "0o1777"
    root = tmp_path / "course"
    make_course(root, f'c.Exchange.root = "{exchange}"\n')
    nbgrader = str(BIN / "nbgrader")
    run([nbgrader, "release_assignment", "demo"], root)
    student = tmp_path / "student"
    student.mkdir()
    flags = [f"--Exchange.root={exchange}", "--CourseDirectory.course_id=grader-fixture"]
    run([nbgrader, "fetch_assignment", "demo", *flags], student)
    assert (student / "demo" / "demo.ipynb").is_file()
    run([nbgrader, "submit", "demo", *flags], student)
    run([nbgrader, "collect", "demo"], root)
    collected = list((root / "submitted").glob("*/demo/demo.ipynb"))
    assert len(collected) == 1 and (collected[0].parent / "timestamp.txt").is_file()


# Each failure of the instructor path (issue #18) -> what the tools print for it, quoted in the
# guide's troubleshooting section and found in the code that prints it.
FAILURES = {
    "unreadable JSON": ("올바른 JSON이 아니라서", "autograder/notebook.py"),
    "file over the size limit": ("제출 파일 크기 제한", "autograder/notebook.py"),
    "answer cell renamed or deleted": ("제출본에 없습니다", "autograder/notebook.py"),
    "answer cell duplicated": ("개 있어(셀 복제)", "autograder/notebook.py"),
    "unknown grade_id": ("배포본에 없는 grade_id의 채점 셀", "autograder/notebook.py"),
    "notebook under another name": ("(이)라는 이름으로 제출되어", "autograder/notebook.py"),
    "several candidates": ("비슷한 이름의 노트북이 여러 개", "autograder/notebook.py"),
    "missing notebook": ("ipynb가 제출되지 않았습니다(0점)", "autograder/notebook.py"),
    "gradebook lacks the assignment": (
        "채점하지 않았습니다: gradebook(",
        "autograder/nbgrader/batch.py",
    ),
    "two runs at once": (
        "다른 채점이 이 과정 폴더에서 진행 중입니다",
        "autograder/nbgrader/batch.py",
    ),
    "Ctrl-C": ("채점을 중단했습니다(Ctrl-C)", "autograder/cli.py"),
    "not written by nbgrader": (
        "nbgrader가 gradebook에 기록하지 않은 학생",
        "autograder/reporting/summary.py",
    ),
    "checksum warnings": ("has changed!", "autograder/nbgrader/fixes.py"),
    "student config warning": ("No nbgrader_config.py file found", "tools/release.py"),
    "student kernel warning": ("running over TCP without encryption", "requirements-student.txt"),
}


def test_troubleshooting_names_every_failure_as_the_tools_say_it():
    text = GUIDE.read_text(encoding="utf-8")
    section = text.split("## 13. 문제 해결", 1)[1].split("\n## ", 1)[0]
    entries = re.findall(r"^\*\*.+?(?=^\*\*|\Z)", section, re.M | re.S)
    assert len(entries) >= 12
    for failure, (words, where) in FAILURES.items():
        assert any(words in e for e in entries), (failure, words)
        assert words in (REPO / where).read_text(encoding="utf-8"), (failure, where)
    assert "MissingIDFieldWarning" in section and "MathML" in section
    # the command the entries name is the regrade that the extension test runs from the guide
    assert "python -m autograder grade <과제> --student ID" in section
    regrade = guide_block("bash", "grant_extension").splitlines()[-1]
    assert regrade.endswith("python -m autograder grade softmax --student kim")
