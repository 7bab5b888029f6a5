"""Class report of a graded assignment: ``python -m autograder report <assignment>``.

Run from the course root (exercises/) after ``python -m autograder grade``. Scores come from the
gradebook (nbgrader.api.Gradebook); per test cell outcomes and failure messages from the error
outputs that nbgrader_plugin.write_verdicts puts into the autograded notebooks (``ename`` names
the outcome, see ENAMES), grading seconds from their ``autograder`` notebook metadata. Writes
reports/<assignment>.html (plots embedded as base64 PNG: opens offline, no scripts) and
reports/<assignment>.csv (one row per student).
"""

import base64
import collections
import csv
import datetime
import html
import io
import statistics
from dataclasses import dataclass, field
from pathlib import Path

import nbformat
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from nbgrader.api import Gradebook, MissingEntry
from tqdm import tqdm

from autograder import notebook as nbio
from autograder.nbgrader_plugin import ENAMES
from autograder.report import OUTCOMES

OUTCOME_OF = {ename: outcome for outcome, ename in ENAMES.items()}
PROBLEMS = ("crashed", "timeout", "grader-error")  # the worker or the grader, not a wrong answer
COLORS = {
    "passed": "#4c9a2a",
    "failed": "#d9822b",
    "crashed": "#c23030",
    "timeout": "#8f398f",
    "grader-error": "#555555",
    "missing": "#bbbbbb",
}
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
    outcomes: dict = field(default_factory=dict)
    messages: dict = field(default_factory=dict)
    seconds: dict = field(default_factory=dict)

    def total_seconds(self):
        known = [s for s in self.seconds.values() if s is not None]
        return round(sum(known), 3) if known else None


def label(cell):
    return f"{cell[0]}/{cell[1]}"


def first_line(message):
    lines = str(message).strip().splitlines()
    return lines[0].strip()[:300] if lines else ""


# ------------------------------------------------------------------ reading


def gradebook_rows(coursedir, assignment):
    """([(notebook, grade_id, points)], [Row]) from the gradebook (ReportError if nothing)."""
    url = coursedir.db_url
    db = Path(url.removeprefix("sqlite:///")) if url.startswith("sqlite:///") else None
    if db is not None and not db.is_file():  # Gradebook() would create an empty one
        raise ReportError(f"no gradebook at {db}: run `python -m autograder grade {assignment}`")
    with Gradebook(url, coursedir.course_id) as gb:
        try:
            a = gb.find_assignment(assignment)
        except MissingEntry:
            known = ", ".join(sorted(x.name for x in gb.assignments)) or "none"
            raise ReportError(
                f"unknown assignment '{assignment}' (gradebook has: {known})"
            ) from None
        cells = [(nb.name, c.name, c.max_score) for nb in a.notebooks for c in nb.grade_cells]
        rows = []
        for sub in gb.assignment_submissions(assignment):
            scores = {(nb.name, g.name): g.score for nb in sub.notebooks for g in nb.grades}
            rows.append(Row(sub.student.id, sub.score, sub.max_score, scores))
    if not rows:
        raise ReportError(
            f"nothing graded yet for '{assignment}': run `python -m autograder grade {assignment}`"
        )
    return cells, sorted(rows, key=lambda r: r.student)


def cell_verdict(cell):
    """(outcome, first message line) of an autograded test cell."""
    errors = [o for o in cell.get("outputs", []) if o.get("output_type") == "error"]
    if not errors:
        return "passed", ""
    return OUTCOME_OF.get(errors[0].get("ename"), "failed"), first_line(errors[0].get("evalue"))


def read_autograded(path):
    """({grade_id: (outcome, message)} in notebook order, grading seconds or None)."""
    nb = nbformat.read(str(path), as_version=4)
    verdicts = {nbio.grade_id(c): cell_verdict(c) for c in nb.cells if nbio.is_test(c)}
    meta = nb.metadata.get("autograder")
    return verdicts, meta.get("seconds") if isinstance(meta, dict) else None


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
            verdicts, seconds = read_autograded(path) if path.is_file() else ({}, None)
            found += path.is_file()
            for i, (gid, (outcome, message)) in enumerate(verdicts.items()):
                row.outcomes[(n, gid)], row.messages[(n, gid)] = outcome, message
                order.setdefault((n, gid), i)
            row.seconds[n] = seconds
            bar.update()
    bar.close()
    if not found:
        raise ReportError(f"no autograded notebooks of '{assignment}' under autograded/")
    for row in rows:
        for n, gid, _ in cells:
            row.outcomes.setdefault((n, gid), "missing")
    return sorted(cells, key=lambda c: (c[0], order.get(c[:2], len(order)), c[1]))


# ------------------------------------------------------------------ summaries


def outcome_counts(cells, rows):
    """{(notebook, grade_id): Counter of outcomes}."""
    return {c[:2]: collections.Counter(r.outcomes[c[:2]] for r in rows) for c in cells}


def failure_messages(cells, rows):
    """{(notebook, grade_id): Counter of first message lines} of the cells that did not pass."""
    out = {c[:2]: collections.Counter() for c in cells}
    for r in rows:
        for key, outcome in r.outcomes.items():
            if outcome not in ("passed", "missing") and key in out:
                out[key][r.messages.get(key, "")] += 1
    return out


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


# ------------------------------------------------------------------ plots


def png(fig, alt):
    FigureCanvasAgg(fig)
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=100, bbox_inches="tight")
    data = base64.b64encode(buf.getvalue()).decode("ascii")
    return f'<img alt="{html.escape(alt)}" src="data:image/png;base64,{data}">'


def score_plot(rows, max_score):
    fig = Figure(figsize=(6, 3))
    ax = fig.subplots()
    top = max(max_score, 1)
    bins = [i - 0.5 for i in range(int(top) + 2)] if top <= 30 else 20  # one bar per point
    ax.hist([r.score for r in rows], bins=bins, color="#4c72b0", edgecolor="white")
    ax.set_xlabel(f"total score (of {max_score:g})")
    ax.set_ylabel("students")
    ax.set_title("Score distribution")
    return png(fig, "score distribution")


def outcome_plot(cells, counts, n):
    fig = Figure(figsize=(7, 0.5 * len(cells) + 1.5))
    ax = fig.subplots()
    names = [label(c) for c in reversed(cells)]
    left = [0] * len(cells)
    for outcome in OUTCOMES + ("missing",):
        values = [counts[c[:2]][outcome] for c in reversed(cells)]
        if any(values):
            ax.barh(names, values, left=left, color=COLORS[outcome], label=outcome)
            left = [a + b for a, b in zip(left, values, strict=True)]
    ax.set_xlim(0, max(n, 1))
    ax.set_xlabel("students")
    ax.set_title("Outcome per test cell (green: passed)")
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1), fontsize="small")
    return png(fig, "outcome per test cell")


def time_plot(timings):
    fig = Figure(figsize=(6, 3))
    ax = fig.subplots()
    if timings:
        ax.hist([s for _, _, s in timings], bins=20, color="#55a868")
    else:
        ax.text(0.5, 0.5, "no grading times recorded", ha="center", transform=ax.transAxes)
    ax.set_xlabel("grading seconds per notebook")
    ax.set_ylabel("notebooks")
    ax.set_title("Grading time")
    return png(fig, "grading time per notebook")


# ------------------------------------------------------------------ output


def csv_rows(cells, rows):
    header = ["student", "total_score", "max_score"]
    header += [f"{label(c)} {what}" for c in cells for what in ("score", "outcome")]
    out = [header + ["grading_seconds"]]
    for r in rows:
        line = [r.student, f"{r.score:g}", f"{r.max_score:g}"]
        for c in cells:
            line += [f"{r.scores.get(c[:2], 0.0):g}", r.outcomes[c[:2]]]
        seconds = r.total_seconds()
        out.append(line + ["" if seconds is None else f"{seconds:.3f}"])
    return out


def table(header, lines):
    esc = html.escape
    head = "".join(f"<th>{esc(str(h))}</th>" for h in header)
    body = "".join(
        "<tr>" + "".join(f"<td>{esc(str(x))}</td>" for x in ln) + "</tr>\n" for ln in lines
    )
    return f"<table>\n<tr>{head}</tr>\n{body}</table>"


def score_summary(rows, max_score):
    scores = [r.score for r in rows]
    return (
        f"{len(rows)} submission(s); total score mean {statistics.mean(scores):.2f}, median "
        f"{statistics.median(scores):g} of {max_score:g}; full marks "
        f"{sum(s == max_score for s in scores)}, zero {sum(s == 0 for s in scores)}"
    )


def cell_table(cells, counts, n):
    lines = []
    for c in cells:
        k = counts[c[:2]]
        passed = f"{k['passed']}/{n} ({100 * k['passed'] / n:.0f}%)"
        lines.append([label(c), f"{c[2]:g}", passed] + [k[o] for o in OUTCOMES[1:]])
    return table(["test cell", "points", "passed"] + list(OUTCOMES[1:]), lines)


def message_table(cells, messages):
    lines = []
    for c in cells:
        for message, count in messages[c[:2]].most_common(TOP_MESSAGES):
            lines.append([label(c), count, message or "(no message)"])
    if not lines:
        return "<p>none</p>"
    return table(["test cell", "students", "message (first line)"], lines)


def time_table(timings):
    if not timings:
        return "<p>No grading times recorded (notebooks graded before this report existed).</p>"
    seconds = [s for _, _, s in timings]
    text = (
        f"<p>{len(seconds)} notebook(s): mean {statistics.mean(seconds):.2f} s, median "
        f"{statistics.median(seconds):.2f} s, max {max(seconds):.2f} s. Slowest:</p>"
    )
    slow = sorted(timings, key=lambda t: -t[2])[:TOP_MESSAGES]
    slow = [[student, n, f"{s:.2f}"] for student, n, s in slow]
    return text + table(["student", "notebook", "seconds"], slow)


STYLE = """body{font-family:sans-serif;margin:2em;max-width:70em}
table{border-collapse:collapse;margin:0.5em 0}td,th{border:1px solid #ccc;padding:2px 8px}
th{background:#eee}td{vertical-align:top}"""


def render_html(assignment, cells, rows):
    max_score = rows[0].max_score
    n = len(rows)
    counts, messages = outcome_counts(cells, rows), failure_messages(cells, rows)
    bad, timings = problems(cells, rows), notebook_seconds(rows)
    bad_lines = [[s, label(c), o, m] for s, c, o, m in bad]
    now = datetime.datetime.now().strftime("%Y-%m-%d %H:%M")
    esc = html.escape
    parts = [
        f"<!DOCTYPE html>\n<html><head><meta charset='utf-8'><title>{esc(assignment)} report"
        f"</title><style>{STYLE}</style></head><body>",
        f"<h1>Class report: {esc(assignment)}</h1>",
        f"<p>{esc(score_summary(rows, max_score))}. Generated {now}.</p>",
        "<h2>Score distribution</h2>",
        score_plot(rows, max_score),
        "<h2>Test cells</h2>",
        outcome_plot(cells, counts, n),
        cell_table(cells, counts, n),
        "<h2>Most frequent failure messages</h2>",
        message_table(cells, messages),
        f"<h2>Crashed, timed-out and grader-error submissions ({len({b[0] for b in bad})})</h2>",
        table(["student", "test cell", "outcome", "message"], bad_lines) if bad else "<p>none</p>",
        "<h2>Grading time per notebook</h2>",
        time_plot(timings),
        time_table(timings),
        "</body></html>\n",
    ]
    return "\n".join(parts)


def write_report(coursedir, assignment, out_dir, quiet=False):
    """Write <out_dir>/<assignment>.html and .csv -> (html path, csv path)."""
    cells, rows = gradebook_rows(coursedir, assignment)
    cells = attach_verdicts(coursedir, assignment, cells, rows, quiet)
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    html_path, csv_path = out_dir / f"{assignment}.html", out_dir / f"{assignment}.csv"
    html_path.write_text(render_html(assignment, cells, rows), encoding="utf-8")
    with open(csv_path, "w", newline="", encoding="utf-8") as f:
        csv.writer(f).writerows(csv_rows(cells, rows))
    return html_path, csv_path
