"""Class report of a graded assignment: ``python -m autograder report <assignment>``.

Run from the course root (exercises/) after ``python -m autograder grade``. Scores come from the
gradebook (nbgrader.api.Gradebook); per test cell outcomes and failure messages from the error
outputs that nbgrader/preprocessors.write_verdicts puts into the autograded notebooks (``ename``
names the outcome, see report.ENAMES), grading seconds from their ``autograder`` notebook
metadata. Scores are the gradebook's after the late penalty, as ``nbgrader export`` computes
them, and a student of the gradebook's roster who did not submit counts as 0 in every class
statistic (said wherever one is shown). Writes reports/<assignment>.html (plots embedded as base64
PNG: opens offline, no scripts) and reports/<assignment>.csv (one row per student of the roster).
The plots are drawn by plots.py
(imported only here: the batch command's summary reads the gradebook with this module, without
matplotlib).
"""

import collections
import csv
import datetime
import html
import json
import os
import statistics
from dataclasses import dataclass, field
from pathlib import Path

from nbgrader.api import Gradebook, MissingEntry
from tqdm import tqdm

from autograder import notebook as nbio
from autograder.report import ENAMES, MISCONCEPTION, OUTCOMES
from autograder.reporting.style import KOREAN, label

OUTCOME_OF = {ename: outcome for outcome, ename in ENAMES.items()}
PROBLEMS = ("crashed", "timeout", "grader-error")  # the worker or the grader, not a wrong answer
TOP_MESSAGES = 5


class ReportError(Exception):
    """Nothing to report (no gradebook, unknown assignment, nothing graded yet)."""


@dataclass
class Row:
    """One student's submission: gradebook scores by (notebook, grade_id) and, from the
    autograded notebooks, outcome and first message line per cell, grading seconds per notebook."""

    student: str
    score: float
    max_score: float
    scores: dict
    late_penalty: float = 0.0
    outcomes: dict = field(default_factory=dict)
    messages: dict = field(default_factory=dict)
    seconds: dict = field(default_factory=dict)
    problems: list = field(default_factory=list)

    @property
    def final_score(self):
        """The score after the late penalty, as ``nbgrader export`` computes it."""
        return max(0.0, self.score - self.late_penalty)

    def total_seconds(self):
        known = [s for s in self.seconds.values() if s is not None]
        return round(sum(known), 3) if known else None


def first_line(message):
    lines = str(message).strip().splitlines()
    return lines[0].strip()[:300] if lines else ""


# ------------------------------------------------------------------ reading


def gradebook_rows(coursedir, assignment):
    """([(notebook, grade_id, points)], [Row], [absent student ids]) from the gradebook
    (ReportError if nothing was graded): a Row per submission, and the students of the roster
    (``nbgrader db student list``) without one."""
    url = coursedir.db_url
    db = Path(url.removeprefix("sqlite:///")) if url.startswith("sqlite:///") else None
    if db is not None and not db.is_file():  # Gradebook() would create an empty one
        raise ReportError(
            f"gradebook이 없습니다({db}). 먼저 `python -m autograder grade {assignment}`로 "
            "채점하세요"
        )
    with Gradebook(url, coursedir.course_id) as gb:
        try:
            a = gb.find_assignment(assignment)
        except MissingEntry:
            known = ", ".join(sorted(x.name for x in gb.assignments)) or "없음"
            raise ReportError(
                f"gradebook에 과제 '{assignment}'이(가) 없습니다(있는 과제: {known})"
            ) from None
        cells = [(nb.name, c.name, c.max_score) for nb in a.notebooks for c in nb.grade_cells]
        rows = []
        for sub in gb.assignment_submissions(assignment):
            scores = {(nb.name, g.name): g.score for nb in sub.notebooks for g in nb.grades}
            penalty = sub.late_submission_penalty or 0.0
            rows.append(Row(sub.student.id, sub.score, sub.max_score, scores, penalty))
        submitted = {r.student for r in rows}
        absent = sorted(s.id for s in gb.students if s.id not in submitted)
    if not rows:
        raise ReportError(
            f"과제 '{assignment}'은(는) 아직 채점되지 않았습니다. "
            f"`python -m autograder grade {assignment}`로 채점하세요"
        )
    return cells, sorted(rows, key=lambda r: r.student), absent


def cell_verdict(cell):
    """(outcome, first message line) of an autograded test cell."""
    errors = [o for o in cell.get("outputs", []) if o.get("output_type") == "error"]
    if not errors:
        return "passed", ""
    return OUTCOME_OF.get(errors[0].get("ename"), "failed"), first_line(errors[0].get("evalue"))


def read_autograded(path):
    """({grade_id: (outcome, message)} in notebook order, grading seconds or None, the
    submission's problems (see nbgrader/preprocessors.write_verdicts))."""
    nb = json.loads(Path(path).read_text(encoding="utf-8"))  # written by this course's plugin
    cells = nb.get("cells", [])  # (nbformat.read would validate it again: 8x the time)
    verdicts = {nbio.grade_id(c): cell_verdict(c) for c in cells if nbio.is_test(c)}
    meta = nb.get("metadata", {}).get("autograder")
    if not isinstance(meta, dict):
        return verdicts, None, []
    return verdicts, meta.get("seconds"), [str(p) for p in meta.get("problems", [])]


def not_graded(assignment, student, notebook):
    """The problem of a submission in the gradebook whose notebook nbgrader did not write."""
    return (
        f"{notebook}.ipynb의 채점 결과가 autograded/에 없습니다(nbgrader가 이 노트북을 채점하지 "
        f"못했습니다). `python -m autograder grade {assignment} --student {student}`로 다시 "
        "채점하세요."
    )


def attach_verdicts(coursedir, assignment, cells, rows, quiet=False):
    """Fill each Row's outcomes/messages/seconds from autograded/; -> cells in notebook order."""
    notebooks = sorted({n for n, _, _ in cells})
    order = {}
    bar = tqdm(total=len(rows) * len(notebooks), desc=assignment, unit="nb", disable=quiet)
    found = 0
    for row in rows:
        folder = Path(
            coursedir.format_path(coursedir.autograded_directory, row.student, assignment)
        )
        for n in notebooks:
            path = folder / f"{n}.ipynb"
            if path.is_file():
                verdicts, seconds, notes = read_autograded(path)
                found += 1
            else:
                verdicts, seconds, notes = {}, None, [not_graded(assignment, row.student, n)]
            row.problems += [f"{n}: {p}" if len(notebooks) > 1 else p for p in notes]
            for i, (gid, (outcome, message)) in enumerate(verdicts.items()):
                row.outcomes[(n, gid)], row.messages[(n, gid)] = outcome, message
                order.setdefault((n, gid), i)
            row.seconds[n] = seconds
            bar.update()
    bar.close()
    if not found:
        raise ReportError(f"autograded/에 과제 '{assignment}'의 채점된 노트북이 없습니다")
    for row in rows:
        for n, gid, _ in cells:
            row.outcomes.setdefault((n, gid), "missing")
    return sorted(cells, key=lambda c: (c[0], order.get(c[:2], len(order)), c[1]))


# ------------------------------------------------------------------ summaries


def class_scores(rows, absent):
    """Every roster student's score after the late penalty, an absent student's as 0 (as
    ``nbgrader export`` writes it): what the report's and the summary's statistics count."""
    return [r.final_score for r in rows] + [0.0] * len(absent)


def names(students, limit=10):
    """'kim, lee' (the first ``limit``, then '...')."""
    return ", ".join(students[:limit]) + (" ..." if len(students) > limit else "")


def absent_note(absent):
    """The Korean sentence that names the roster students who did not submit."""
    return (
        f"미제출 {len(absent)}명: {names(absent)} (gradebook의 학생 명단에 있지만 제출물이 "
        "없습니다; 점수 통계에는 0점으로 넣었습니다)"
    )


def score_line(rows, absent, max_score):
    """'평균 ..., 중앙값 ..., 만점 N명, 0점 N명' of every roster student's penalised score."""
    scores = class_scores(rows, absent)
    zeros = sum(s == 0 for s in scores)
    return (
        f"평균 {statistics.mean(scores):.2f} / {max_score:g}, 중앙값 "
        f"{statistics.median(scores):g}, 만점 {sum(s == max_score for s in scores)}명, "
        f"0점 {zeros}명" + (f"(미제출 {len(absent)}명 포함)" if absent else "")
    )


def outcome_counts(cells, rows):
    """{(notebook, grade_id): Counter of outcomes}."""
    return {c[:2]: collections.Counter(r.outcomes[c[:2]] for r in rows) for c in cells}


def failure_messages(cells, rows):
    """{(notebook, grade_id): Counter of first message lines} of the cells that did not pass."""
    out = {c[:2]: collections.Counter() for c in cells}
    for r in rows:
        for key, outcome in r.outcomes.items():
            if outcome not in ("passed", "missing") and key in out:
                out[key][misconception(r.messages.get(key, ""))] += 1
    return out


def misconception(message):
    """The misconception a failure message points to, for counting per test cell: the
    diagnosis of the check's catalogue (checking.assert_close) when it named one, whatever the
    case; otherwise the first line of the message (the same mistake under the same run seed
    gives the same line)."""
    line = first_line(message)
    if MISCONCEPTION in line:
        return MISCONCEPTION + line.split(MISCONCEPTION, 1)[1]
    return line


def problems(cells, rows):
    """[(student, cell, outcome, message)] of crashed, timed-out and grader-error cells."""
    return [
        (r.student, c[:2], r.outcomes[c[:2]], r.messages.get(c[:2], ""))
        for r in rows
        for c in cells
        if r.outcomes[c[:2]] in PROBLEMS
    ]


def notebook_seconds(rows):
    """[(student, notebook, seconds)] of the notebooks whose grading time was recorded."""
    return [(r.student, n, s) for r in rows for n, s in r.seconds.items() if s is not None]


# ------------------------------------------------------------------ output


def csv_rows(cells, rows, absent=()):
    """One row per roster student; an absent one (submitted "no") scores 0 everywhere, as in
    ``nbgrader export``, with the outcome "not-submitted"."""
    header = ["student", "submitted", "total_score", "late_penalty", "final_score", "max_score"]
    header += [f"{label(c)} {what}" for c in cells for what in ("score", "outcome")]
    out = [header + ["grading_seconds", "problem"]]
    max_score = rows[0].max_score if rows else 0.0
    lines = [(r.student, r) for r in rows] + [(s, None) for s in absent]
    for student, r in sorted(lines, key=lambda x: x[0]):
        if r is None:
            line = [student, "no", "0", "0", "0", f"{max_score:g}"]
            line += ["0", "not-submitted"] * len(cells) + ["", "미제출"]
            out.append([csv_safe(x) for x in line])
            continue
        line = [student, "yes", f"{r.score:g}", f"{r.late_penalty:g}", f"{r.final_score:g}"]
        line.append(f"{r.max_score:g}")
        for c in cells:
            line += [f"{r.scores.get(c[:2], 0.0):g}", r.outcomes[c[:2]]]
        seconds = r.total_seconds()
        line += ["" if seconds is None else f"{seconds:.3f}", " / ".join(r.problems)]
        out.append([csv_safe(x) for x in line])
    return out


def csv_safe(value):
    """A CSV cell a spreadsheet shows as text (a problem may quote a student's file name)."""
    return "'" + value if value[:1] in ("=", "+", "-", "@") and not is_number(value) else value


def is_number(text):
    try:
        float(text)
    except ValueError:
        return False
    return True


def table(header, lines, raw=()):
    """An HTML table; every value escaped except in the columns listed in ``raw`` (HTML this
    module made)."""
    esc = html.escape
    head = "".join(f"<th>{esc(str(h))}</th>" for h in header)
    body = "".join(
        "<tr>"
        + "".join(f"<td>{x if i in raw else esc(str(x))}</td>" for i, x in enumerate(ln))
        + "</tr>\n"
        for ln in lines
    )
    return f"<table>\n<tr>{head}</tr>\n{body}</table>"


def score_summary(rows, absent, max_score):
    late = sum(1 for r in rows if r.late_penalty)
    who = f"학생 {len(rows) + len(absent)}명" + (", 미제출 0점 포함" if absent else "")
    text = f"제출 {len(rows)}건, " + (absent_note(absent) if absent else "미제출 0명")
    return (
        f"{text}; 총점(지각 감점 후, {who}) {score_line(rows, absent, max_score)}; 지각 감점 "
        f"{late}명, 제출물 문제 {sum(1 for r in rows if r.problems)}명"
    )


def difficulty(rate):
    return "쉬움" if rate >= 0.8 else "보통" if rate >= 0.5 else "어려움"


def cell_table(cells, counts, n):
    lines = []
    for c in cells:
        k = counts[c[:2]]
        passed = f"{k['passed']}/{n} ({100 * k['passed'] / n:.0f}%)"
        lines.append(
            [label(c), f"{c[2]:g}", passed, difficulty(k["passed"] / n)]
            + [k[o] for o in OUTCOMES[1:]]
        )
    outcomes = [KOREAN[o] for o in OUTCOMES[1:]]
    return table(["테스트 셀", "배점", "통과", "난이도"] + outcomes, lines)


def message_table(cells, messages):
    lines = []
    for c in cells:
        for message, count in messages[c[:2]].most_common(TOP_MESSAGES):
            lines.append([label(c), count, message or "(메시지 없음)"])
    if not lines:
        return "<p>없음</p>"
    return table(["테스트 셀", "학생 수", "메시지 (첫 줄)"], lines)


def problem_table(rows):
    lines = [[r.student, p] for r in rows for p in r.problems]
    return table(["학생", "문제"], lines) if lines else "<p>없음</p>"


def feedback_link(coursedir, assignment, student, notebooks, out_dir):
    """Links to the student's feedback pages (relative to the report), or a hint when
    ``nbgrader generate_feedback`` has not made them yet."""
    links = []
    for n in notebooks:
        folder = coursedir.format_path(coursedir.feedback_directory, student, assignment)
        page = Path(folder) / f"{n}.html"
        if page.is_file():
            href = html.escape(os.path.relpath(page, out_dir))
            links.append(f'<a href="{href}">{html.escape(n)}</a>')
    return " ".join(links) or "(아직 없음)"


def student_table(coursedir, assignment, cells, rows, out_dir, absent=()):
    """Every roster student; an absent one with 0 points and "미제출" in every test cell."""
    notebooks = sorted({c[0] for c in cells})
    header = ["학생", "피드백", "총점", "지각 감점", "최종 점수"]
    header += [label(c) for c in cells] + ["제출물 문제"]
    lines = []
    for r in rows:
        line = [r.student, feedback_link(coursedir, assignment, r.student, notebooks, out_dir)]
        line += [f"{r.score:g}", f"{r.late_penalty:g}", f"{r.final_score:g}"]
        line += [KOREAN[r.outcomes[c[:2]]] for c in cells] + [" / ".join(r.problems)]
        lines.append(line)
    for student in absent:
        line = [student, "(제출물 없음)", "0", "0", "0"] + ["미제출"] * len(cells)
        lines.append(line + ["미제출 (0점으로 셉니다)"])
    return table(header, sorted(lines, key=lambda ln: ln[0]), raw=(1,))


def time_table(timings):
    if not timings:
        return "<p>기록된 채점 시간이 없습니다(이 보고서가 생기기 전에 채점한 노트북).</p>"
    seconds = [s for _, _, s in timings]
    text = (
        f"<p>노트북 {len(seconds)}개: 평균 {statistics.mean(seconds):.2f}초, 중앙값 "
        f"{statistics.median(seconds):.2f}초, 최대 {max(seconds):.2f}초. 가장 오래 걸린 것:</p>"
    )
    slow = sorted(timings, key=lambda t: -t[2])[:TOP_MESSAGES]
    slow = [[student, n, f"{s:.2f}"] for student, n, s in slow]
    return text + table(["학생", "노트북", "초"], slow)


STYLE = """body{font-family:sans-serif;margin:2em;max-width:70em}
table{border-collapse:collapse;margin:0.5em 0}td,th{border:1px solid #ccc;padding:2px 8px}
th{background:#eee}td{vertical-align:top}"""


def render_html(coursedir, assignment, cells, rows, out_dir, absent=()):
    from autograder.reporting.plots import outcome_plot, score_plot, time_plot

    max_score = rows[0].max_score
    n = len(rows)
    counts, messages = outcome_counts(cells, rows), failure_messages(cells, rows)
    bad, timings = problems(cells, rows), notebook_seconds(rows)
    bad_lines = [[s, label(c), KOREAN[o], m] for s, c, o, m in bad]
    now = datetime.datetime.now().strftime("%Y-%m-%d %H:%M")
    esc = html.escape
    flagged = sum(1 for r in rows if r.problems)
    parts = [
        f"<!DOCTYPE html>\n<html lang='ko'><head><meta charset='utf-8'><title>{esc(assignment)} "
        f"반 보고서</title><style>{STYLE}</style></head><body>",
        f"<h1>반 보고서: {esc(assignment)}</h1>",
        f"<p>{esc(score_summary(rows, absent, max_score))}. 만든 시각 {now}.</p>",
        "<h2>점수 분포</h2>",
        "<p>지각 감점 후의 최종 점수입니다(nbgrader export의 score와 같습니다)"
        + (f". 미제출 {len(absent)}명은 0점 막대에 회색으로 쌓았습니다" if absent else "")
        + ".</p>",
        score_plot(rows, max_score, len(absent)),
        "<h2>문항별 난이도</h2>",
        "<p>난이도: 통과율 80% 이상 쉬움, 50% 이상 보통, 그 밖은 어려움. 통과율은 제출한 "
        f"{n}명 기준입니다"
        + (f"(미제출 {len(absent)}명은 세지 않습니다)" if absent else "")
        + ".</p>",
        outcome_plot(cells, counts, n),
        cell_table(cells, counts, n),
        "<h2>문항별로 가장 흔한 실패 메시지 (가장 흔한 오개념)</h2>",
        "<p>같은 실수는 같은 첫 줄 메시지를 냅니다. 문항마다 위에 있는 것이 가장 흔합니다.</p>",
        message_table(cells, messages),
        f"<h2>제출물 문제 ({flagged}명)</h2>",
        "<p>제출한 그대로는 채점할 수 없었던 제출물과, 채점하며 가정한 내용입니다. 학생의 피드백 "
        "첫머리에도 같은 내용이 나옵니다.</p>",
        problem_table(rows),
        f"<h2>채점 오류·시간 초과·비정상 종료 ({len({b[0] for b in bad})}명)</h2>",
        table(["학생", "테스트 셀", "결과", "메시지"], bad_lines) if bad else "<p>없음</p>",
        "<h2>학생별 결과</h2>",
        student_table(coursedir, assignment, cells, rows, out_dir, absent),
        "<h2>노트북별 채점 시간</h2>",
        time_plot(timings),
        time_table(timings),
        "</body></html>\n",
    ]
    return "\n".join(parts)


def write_report(coursedir, assignment, out_dir, quiet=False):
    """Write <out_dir>/<assignment>.html and .csv -> (html path, csv path)."""
    cells, rows, absent = gradebook_rows(coursedir, assignment)
    cells = attach_verdicts(coursedir, assignment, cells, rows, quiet)
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    html_path, csv_path = out_dir / f"{assignment}.html", out_dir / f"{assignment}.csv"
    page = render_html(coursedir, assignment, cells, rows, out_dir, absent)
    html_path.write_text(page, encoding="utf-8")
    with open(csv_path, "w", newline="", encoding="utf-8") as f:
        csv.writer(f).writerows(csv_rows(cells, rows, absent))
    return html_path, csv_path
