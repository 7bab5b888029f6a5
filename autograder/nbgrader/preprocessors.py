"""The course's own nbgrader preprocessors: RebuildSubmission (sanitize: the trusted release
structure with the student's solution cells) and EngineGrade (autograde: the engine's verdicts
instead of a kernel), and write_verdicts, which puts a Report into a notebook the way nbgrader's
SaveAutoGrades, generate_feedback and the class report read it.
"""

import html
import re

import nbformat
from nbgrader.preprocessors import NbGraderPreprocessor
from traitlets import Bool, Instance, Integer, Unicode, default

from autograder import notebook as nbio
from autograder.nbgrader.exporter import course_of
from autograder.nbgrader.graders import Grader, OnDemandGrader
from autograder.report import ENAMES, Report, Verdict


class RebuildSubmission(NbGraderPreprocessor):
    """Sanitize step: trusted release structure + the student's solution-cell sources; the
    submission's problems (see RobustExporter.from_filename) go into the notebook metadata
    ``autograder`` for EngineGrade."""

    def preprocess(self, nb, resources):
        assignment = resources["nbgrader"]["assignment"]
        notebook = resources["nbgrader"]["notebook"]
        template = course_of(self.config).template(assignment, notebook)
        rebuilt = nbio.rebuild(template, nb)
        rebuilt.metadata["autograder"] = {"problems": resources.get("autograder_problems", [])}
        return rebuilt, resources


class EngineGrade(NbGraderPreprocessor):
    """Autograde step replacing Execute: verdicts from the sandboxed engine via ``grader``."""

    grader = Instance(Grader, help="Where the verdicts come from (see Grader).").tag(config=True)
    jobs = Integer(1, help="Sandboxes used by `nbgrader autograde` (one notebook at a time).").tag(
        config=True
    )
    unsafe_no_sandbox = Bool(
        False, help="UNSAFE: run student code without bubblewrap (throw-away machines only)."
    ).tag(config=True)
    checks_dir = Unicode(
        "", help="Folder of <assignment>.py check modules (default: built in)."
    ).tag(config=True)

    @default("grader")
    def _default_grader(self):
        return OnDemandGrader()

    def preprocess(self, nb, resources):
        report = self.grader.grade(self, resources, nb)
        meta = nb.metadata.get("autograder")
        found = meta.get("problems", []) if isinstance(meta, dict) else []
        write_verdicts(nb, Report(report.verdicts, report.seconds, found + report.problems))
        return nb, resources


def write_verdicts(nb, report):
    """Test cells: hidden region removed; no output on pass, an error output on failure, named
    by its outcome (ENAMES). The notebook metadata ``autograder`` gets the grading seconds and
    the report's problems, which also go into a markdown cell at the top (the student's
    feedback page shows it)."""
    for cell in nb.cells:
        if not nbio.is_test(cell):
            continue
        cell.source = nbio.strip_hidden(cell.source)
        cell.execution_count = None
        gid = nbio.grade_id(cell)
        verdict = report.verdicts.get(gid) or Verdict(gid, "grader-error", "not graded")
        if verdict.passed:
            cell.outputs = []
            continue
        ename = ENAMES.get(verdict.outcome, "CheckFailed")
        cell.outputs = [
            nbformat.v4.new_output(
                "error",
                ename=ename,
                evalue=verdict.message,
                traceback=[f"{ename}: {verdict.message}"],
            )
        ]
    problems = [str(p) for p in report.problems]
    nb.metadata["autograder"] = {"seconds": round(report.seconds, 3), "problems": problems}
    if problems:
        items = "\n".join(f"- {markdown_text(p)}" for p in problems)
        cell = nbformat.v4.new_markdown_cell(f"{PROBLEMS_HEADING}\n\n{items}")
        cell.metadata["autograder"] = {"problems": True}
        nb.cells.insert(0, cell)


PROBLEMS_HEADING = "### ⚠ 채점 안내: 제출물에서 발견한 문제\n\n점수는 아래 내용대로 매겼습니다."
MARKDOWN_SPECIAL = re.compile(r"([\\`*_\[\]#|~$])")


def markdown_text(text):
    """``text`` as literal markdown (it may hold a student's file or cell names): HTML and
    markdown syntax escaped."""
    escaped = html.escape(str(text)[:2000], quote=False)
    return MARKDOWN_SPECIAL.sub(r"\\\1", escaped).replace("\n", " ")
