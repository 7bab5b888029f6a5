"""nbgrader 0.9.6 integration: ``configure(c)`` from a course's nbgrader_config.py makes
``nbgrader autograde`` take its verdicts from the engine, and ``nbgrader generate_feedback`` write
pages that show their math offline.

- exporter.RobustExporter reads submissions that are not valid UTF-8/JSON/nbformat-4.
- preprocessors.RebuildSubmission (sanitize) replaces the submitted notebook by the trusted release
  notebook with only the solution cells' sources taken from the submission.
- preprocessors.EngineGrade replaces nbgrader's Execute: no kernel runs; its ``grader``
  (graders.py, handed in as ``c.EngineGrade.grader``) returns the verdicts, and
  preprocessors.write_verdicts writes, per test cell, no output (pass) or an error output with
  the check's message (fail), so that nbgrader's SaveAutoGrades records the engine's scores.
- feedback_page.OfflineMathHTMLExporter writes the feedback pages (MathML, no MathJax CDN).

Every workaround of nbgrader's and nbconvert's internals is in fixes.py.
"""

from nbconvert.preprocessors import ClearMetadataPreprocessor
from nbgrader.preprocessors import (
    AssignLatePenalties,
    ClearOutput,
    DeduplicateIds,
    IgnorePattern,
    LimitOutput,
    OverwriteKernelspec,
)

from autograder.nbgrader import fixes
from autograder.nbgrader.exporter import RobustExporter
from autograder.nbgrader.graders import OnDemandGrader
from autograder.nbgrader.preprocessors import EngineGrade, RebuildSubmission


def configure(c, jobs=1, checks_dir="", unsafe_no_sandbox=False):
    """Apply the engine to an nbgrader config object ``c`` (call from nbgrader_config.py)."""
    fixes.apply()
    # CheckCellMetadata (jsonschema validation of nbgrader metadata) is left out: after
    # RebuildSubmission every cell's metadata is the trusted release notebook's.

    c.Autograde.exporter_class = RobustExporter
    c.Autograde.sanitize_preprocessors = [
        ClearOutput,
        RebuildSubmission,
        DeduplicateIds,
        OverwriteKernelspec,
        fixes.OverwriteCellsOnce,
    ]
    c.Autograde.autograde_preprocessors = [
        EngineGrade,
        IgnorePattern,
        ClearMetadataPreprocessor,
        LimitOutput,
        fixes.SaveAutoGradesOnce,
        AssignLatePenalties,
    ]
    # validate each notebook once, after the last preprocessor, not after every one of them
    # (nbconvert's own option; the rebuilt notebooks are valid by construction)
    c.Exporter.optimistic_validation = True
    # ClearMetadataPreprocessor is off unless a course enables it; then it keeps the grading
    # seconds write_verdicts stores (read by `python -m autograder report`)
    keep = {("language_info", "name"), "autograder"}  # nbconvert's default plus ours
    c.ClearMetadataPreprocessor.preserve_nb_metadata_mask = keep
    c.EngineGrade.grader = OnDemandGrader()
    c.EngineGrade.jobs = jobs
    c.EngineGrade.checks_dir = checks_dir
    c.EngineGrade.unsafe_no_sandbox = unsafe_no_sandbox
    # feedback pages show their math offline: MathML written with the page, no MathJax CDN
    c.GenerateFeedback.exporter_class = "autograder.nbgrader.feedback_page.OfflineMathHTMLExporter"
