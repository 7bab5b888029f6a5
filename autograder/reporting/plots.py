"""The class report's plots (class_report.render_html), drawn with matplotlib's object API and
embedded as base64 PNG. Hangul labels use the course font as the book draws it (book/koreanfont.py,
installed as the top-level module koreanfont); the report never changes matplotlib's global rc."""

import base64
import html
import io

from koreanfont import korean_fonts as korean_fonts  # the report's font.family (tests use it)
from koreanfont import korean_plot
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from autograder.report import OUTCOMES
from autograder.reporting.style import COLORS, KOREAN, label


def png(fig, alt):
    FigureCanvasAgg(fig)
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=100, bbox_inches="tight")
    data = base64.b64encode(buf.getvalue()).decode("ascii")
    return f'<img alt="{html.escape(alt)}" src="data:image/png;base64,{data}">'


@korean_plot
def score_plot(rows, max_score, absent=0):
    """Histogram of the scores after the late penalty (Row.final_score, the score of the
    report's text and tables); ``absent`` roster students without a submission stacked in grey
    on the bar of 0."""
    fig = Figure(figsize=(6, 3))
    ax = fig.subplots()
    top = max(max_score, 1)
    bins = [i - 0.5 for i in range(int(top) + 2)] if top <= 30 else 20  # one bar per point
    data, colors, names = [[r.final_score for r in rows]], ["#4c72b0"], ["제출"]
    if absent:
        data.append([0.0] * absent)
        colors.append(COLORS["missing"])
        names.append("미제출 (0점)")
    ax.hist(data, bins=bins, range=(0, top), stacked=True, color=colors, label=names)
    for patch in ax.patches:
        patch.set_edgecolor("white")
    if absent:
        ax.legend(fontsize="small")
    ax.set_xlabel(f"최종 점수, 지각 감점 후 (만점 {max_score:g})")
    ax.set_ylabel("학생 수")
    ax.set_title("점수 분포")
    return png(fig, "점수 분포")


@korean_plot
def outcome_plot(cells, counts, n):
    fig = Figure(figsize=(7, 0.5 * len(cells) + 1.5))
    ax = fig.subplots()
    names = [label(c) for c in reversed(cells)]
    left = [0] * len(cells)
    for outcome in OUTCOMES + ("missing",):
        values = [counts[c[:2]][outcome] for c in reversed(cells)]
        if any(values):
            ax.barh(names, values, left=left, color=COLORS[outcome], label=KOREAN[outcome])
            left = [a + b for a, b in zip(left, values, strict=True)]
    ax.set_xlim(0, max(n, 1))
    ax.set_xlabel("학생 수")
    ax.set_title("테스트 셀별 결과 (초록: 통과)")
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1), fontsize="small")
    return png(fig, "테스트 셀별 결과")


@korean_plot
def time_plot(timings):
    fig = Figure(figsize=(6, 3))
    ax = fig.subplots()
    if timings:
        ax.hist([s for _, _, s in timings], bins=20, color="#55a868")
    else:
        ax.text(0.5, 0.5, "기록된 채점 시간 없음", ha="center", transform=ax.transAxes)
    ax.set_xlabel("노트북 하나의 채점 시간 (초)")
    ax.set_ylabel("노트북 수")
    ax.set_title("채점 시간")
    return png(fig, "노트북별 채점 시간")
