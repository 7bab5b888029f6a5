"""How the class report names and colours outcomes and test cells (its tables and its plots)."""

COLORS = {
    "passed": "#4c9a2a",
    "failed": "#d9822b",
    "crashed": "#c23030",
    "timeout": "#8f398f",
    "grader-error": "#555555",
    "missing": "#bbbbbb",
}
# outcomes as the HTML report names them (the CSV keeps report.OUTCOMES' names)
KOREAN = {
    "passed": "통과",
    "failed": "실패",
    "crashed": "비정상 종료",
    "timeout": "시간 초과",
    "grader-error": "채점 오류",
    "missing": "결과 없음",
}


def label(cell):
    """'notebook/grade_id' of a test cell (notebook, grade_id, points)."""
    return f"{cell[0]}/{cell[1]}"
