"""Verdicts of one graded notebook, as plain data (no torch: the batch command imports this)."""

from dataclasses import dataclass, field

# starts the diagnosis of a catalogued misconception in a message (checking.assert_close); the
# class report counts failures by it
MISCONCEPTION = "흔한 실수로 보입니다."

OUTCOMES = ("passed", "failed", "crashed", "timeout", "grader-error")
# the error output's ``ename`` of each outcome in an autograded notebook (nbgrader/preprocessors
# writes it, reporting/class_report reads it back)
ENAMES = {
    "failed": "CheckFailed",
    "crashed": "StudentCrashed",
    "timeout": "StudentTimeout",
    "grader-error": "GraderError",
}
# why a Report holds no verdict of the checks (Report.reason), read by code, never by its message
JUDGE_STOPPED = "judge-stopped"  # the judge process died or hung while grading the notebook
CLUSTER_FAILED = "cluster-failed"  # the Dask task failed twice or on every worker


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
    reason: str = ""  # "" when the checks decided, else why not (JUDGE_STOPPED, CLUSTER_FAILED)

    def to_data(self):
        rows = [[v.grade_id, v.outcome, v.message, v.seconds] for v in self.verdicts.values()]
        data = {"seconds": self.seconds, "verdicts": rows, "problems": list(self.problems)}
        return dict(data, reason=self.reason)

    @classmethod
    def from_data(cls, data):
        verdicts = {gid: Verdict(gid, o, m, s) for gid, o, m, s in data["verdicts"]}
        problems = [str(p) for p in data.get("problems", [])]
        return cls(verdicts, data["seconds"], problems, str(data.get("reason", "")))


def empty_report(grade_ids, message, outcome="grader-error", reason=""):
    """A Report failing every test cell with the same message."""
    return Report({gid: Verdict(gid, outcome, message) for gid in grade_ids}, reason=reason)
