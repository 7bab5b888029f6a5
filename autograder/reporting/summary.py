"""The batch command's one-screen summary of a graded assignment, read back from what nbgrader
wrote (the gradebook's scores and late penalties, its roster's students without a submission,
autograded/'s outcomes and problems: see class_report.py), so that it always agrees with the
gradebook and the class report."""

from autograder.reporting.class_report import (
    ReportError,
    absent_note,
    attach_verdicts,
    gradebook_rows,
    label,
    names,
    score_line,
)


def summary(assignment, coursedir, seconds, engine_label, gradebook, not_written=(), graded=None):
    """The batch command's report of one assignment in Korean, read back from what nbgrader
    wrote (the gradebook's scores and late penalties, autograded/'s outcomes and problems: see
    class_report.py), so that it always agrees with the gradebook. ``graded``: how many
    submissions this run graded (default: all the gradebook holds; ``--student`` grades one);
    ``not_written``: students whose notebooks the engine graded but nbgrader did not take (never
    in the gradebook); ``engine_label``: the engine's describe(). Roster students without a
    submission are named and count as 0 in the score line, as in the class report."""
    lines = []
    try:
        cells, rows, absent = gradebook_rows(coursedir, assignment)
        cells = attach_verdicts(coursedir, assignment, cells, rows, quiet=True)
    except ReportError as e:
        cells, rows, absent = [], [], []
        lines.append(f"gradebook에 채점 결과가 없습니다: {e}")
    notebooks = sorted({c[0] for c in cells})
    width = max([40] + [len(label(c)) for c in cells])
    graded = len(rows) if graded is None else graded
    first = (
        f"과제 '{assignment}': 제출물 {graded}개(노트북 {graded * len(notebooks)}개)를 "
        f"{seconds:.1f}초 동안 {engine_label}로 채점했습니다 (gradebook과 autograded/는 nbgrader가 "
        "썼습니다)."
    )
    if graded != len(rows):
        first += f" 아래는 gradebook에 있는 제출물 {len(rows)}개 전체의 결과입니다."
    lines.insert(0, first)
    if rows:
        lines.append(f"{'테스트 셀':<{width - 3}} {'배점':>4} {'통과':>9}")
        for c in cells:
            passed = sum(r.outcomes[c[:2]] == "passed" for r in rows)
            lines.append(f"{label(c):<{width}} {c[2]:>6g} {passed:>4}/{len(rows):<4}")
        who = f"학생 {len(rows) + len(absent)}명" + (", 미제출 0점 포함" if absent else "")
        lines.append(f"점수(지각 감점 후, {who}): {score_line(rows, absent, rows[0].max_score)}")
    unwritten = [s for s in absent if s in not_written]  # said with not_written below
    if len(unwritten) < len(absent):
        lines.append(absent_note([s for s in absent if s not in not_written]))
    late = [r for r in rows if r.late_penalty]
    if late:
        items = ", ".join(f"{r.student} -{r.late_penalty:g}" for r in late[:10])
        lines.append(f"지각 감점 {len(late)}명: {items}{' ...' if len(late) > 10 else ''}")
    crashed = sorted(r.student for r in rows if set(r.outcomes.values()) & {"crashed", "timeout"})
    errors = sorted(r.student for r in rows if "grader-error" in r.outcomes.values())
    for what, students in (("비정상 종료 또는 시간 초과", crashed), ("채점 오류", errors)):
        if students:
            lines.append(f"{what} {len(students)}명: {names(students)}")
    flagged = [r for r in rows if r.problems]
    if flagged:
        lines.append(
            f"제출물 문제 {len(flagged)}명 (학생의 피드백 첫머리와 반 보고서에도 나옵니다):"
        )
        lines += [f"  {r.student}: {p}" for r in flagged for p in r.problems]
    if not_written:
        lines.append(
            f"nbgrader가 gradebook에 기록하지 않은 학생 {len(not_written)}명: "
            f"{', '.join(sorted(not_written))} (제출 폴더에 .ipynb 파일이 하나도 없거나 nbgrader가 "
            "실패했습니다; 위의 nbgrader 오류를 확인하세요"
            + ("; 점수 통계에는 0점으로 넣었습니다)" if unwritten else ")")
        )
    lines.append(f"gradebook: {gradebook}   채점된 노트북: {coursedir.root}/autograded")
    lines.append(f"다음 단계: nbgrader generate_feedback {assignment}; nbgrader export")
    return "\n".join(lines)
