"""Verdicts of one graded notebook, as plain data (no torch: the batch command imports this)."""

from dataclasses import dataclass, field

# starts the diagnosis of a catalogued misconception in a message (checking.assert_close); the
# class report counts failures by it
MISCONCEPTION = "흔한 실수로 보입니다."

OUTCOMES = ("passed", "failed", "crashed", "timeout", "grader-error")


@dataclass
class Verdict:
    """Outcome of one test cell (one of OUTCOMES), the feedback message and the time it took."""

    grade_id: str
    outcome: str
    message: str = ""
    seconds: float = 0.0

    @property
    def passed(self):
        return self.outcome == "passed"


@dataclass
class Report:
    """Verdicts of one notebook: {grade_id: Verdict}, and ``problems``: what the instructor must
    know about the submission as a whole, in Korean (e.g. suspected tampering with the grader,
    with the cell and line), shown in the batch summary and the class report."""

    verdicts: dict = field(default_factory=dict)
    seconds: float = 0.0
    problems: list = field(default_factory=list)

    def to_data(self):
        rows = [[v.grade_id, v.outcome, v.message, v.seconds] for v in self.verdicts.values()]
        return {"seconds": self.seconds, "verdicts": rows, "problems": list(self.problems)}

    @classmethod
    def from_data(cls, data):
        verdicts = {gid: Verdict(gid, o, m, s) for gid, o, m, s in data["verdicts"]}
        return cls(verdicts, data["seconds"], [str(p) for p in data.get("problems", [])])


def empty_report(grade_ids, message, outcome="grader-error"):
    """A Report failing every test cell with the same message."""
    return Report({gid: Verdict(gid, outcome, message) for gid in grade_ids})
