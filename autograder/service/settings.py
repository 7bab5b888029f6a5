"""What the instructor switches in the course's nbgrader_config.py, and the Korean texts.

c.InstantFeedback.assignments = ["softmax", "attention"]   # open for instant feedback
c.InstantFeedback.attempts_per_day = 5                      # graded submissions per day
c.InstantFeedback.show = "full"                             # or "score"
c.InstantFeedback.timezone = "Asia/Seoul"                   # when a day starts
"""

import datetime
import html
import zoneinfo

from traitlets import Enum, Integer, List, Unicode, validate
from traitlets.config import Configurable

SHOW = ("full", "score")


class InstantFeedback(Configurable):
    """The grading service's course settings (read from the instructor's nbgrader_config.py
    whenever that file changes)."""

    assignments = List(
        Unicode(),
        help="Assignments whose submissions the service grades at once (the others wait for "
        "the final grading).",
    ).tag(config=True)
    attempts_per_day = Integer(
        10,
        help="Submissions of one assignment graded per student and day (0: no limit); a "
        "further one gets a notice in its feedback instead.",
    ).tag(config=True)
    show = Enum(
        SHOW,
        "full",
        help="'full': the feedback page the final grading writes (check messages, "
        "counterexamples); 'score': points per test cell, without the check messages.",
    ).tag(config=True)
    timezone = Unicode("Asia/Seoul", help="Time zone of the attempt limit's days.").tag(config=True)

    @validate("assignments")
    def _names(self, proposal):
        for name in proposal["value"]:
            if not str(name).isidentifier():
                raise ValueError(f"bad assignment name {name!r}")
        return proposal["value"]

    def day(self, when):
        """The calendar day (ISO date) of the aware datetime ``when`` in ``timezone``."""
        return when.astimezone(zoneinfo.ZoneInfo(self.timezone)).date().isoformat()


def now():
    return datetime.datetime.now(datetime.UTC)


# The feedback page's text when show = "score" (replaces each failed check's message)
SCORE_ONLY = (
    "이 테스트 셀의 숨은 검사를 통과하지 못했습니다. 강사가 이 과제의 즉시 피드백에서는 점수만 "
    "보이도록 정했습니다. 자세한 내용은 마감 후 채점의 피드백에서 볼 수 있습니다."
)


def attempts_page(student, assignment, limit, day, timezone):
    """The feedback page of a submission over the day's attempt limit (Korean, 합니다체)."""
    title = f"{assignment}: 오늘의 즉시 채점 횟수를 모두 썼습니다"
    body = (
        f"<p>{html.escape(student)}님, 과제 <code>{html.escape(assignment)}</code>는 하루에 "
        f"{limit}번까지 즉시 채점합니다. 오늘({html.escape(day)}, {html.escape(timezone)} 기준) "
        f"이미 {limit}번 채점했으므로 이 제출물은 지금 채점하지 않았습니다.</p>"
        "<p>제출물은 그대로 받았습니다. 마감 후 채점은 마감 전 마지막 제출물로 하므로, 이 "
        "제출물이 마지막이라면 이것으로 채점합니다. 즉시 채점은 내일 다시 제출하면 "
        "받을 수 있습니다.</p>"
    )
    return page(title, body)


def page(title, body):
    return (
        '<!DOCTYPE html>\n<html lang="ko"><head><meta charset="utf-8">'
        f"<title>{html.escape(title)}</title></head>\n<body><h1>{html.escape(title)}</h1>\n"
        f"{body}\n</body></html>\n"
    )
