"""How nbgrader reads a submission: RobustExporter, which never fails on a broken file (invalid
JSON or UTF-8, nbformat 3, a renamed notebook) and hands the problems it found to the sanitize
step (preprocessors.RebuildSubmission).
"""

import datetime
import os
from pathlib import Path

import nbformat
from nbconvert.exporters import NotebookExporter
from nbconvert.exporters.exporter import ResourcesDict
from nbgrader.coursedir import CourseDirectory

from autograder import notebook as nbio
from autograder.nbgrader import fixes


class RobustExporter(fixes.NoCopyExport, NotebookExporter):
    """NotebookExporter whose from_filename never fails on a broken submission, and that
    converts the notebook it read itself without copying it (fixes.NoCopyExport)."""

    def _ours(self, folder, meta):
        """True for the folder autograded/<student>/<assignment>/ that the sanitize step wrote."""
        coursedir = CourseDirectory(config=self.config)
        ours = coursedir.format_path(
            coursedir.autograded_directory, meta["student"], meta["assignment"]
        )
        return Path(folder).resolve() == Path(ours).resolve()

    def from_filename(self, filename, resources=None, **kw):
        """Read a submission with :meth:`Course.submission` (a renamed file found, problems in
        ``resources["autograder_problems"]`` for RebuildSubmission), or, in the autograde step,
        the sanitized copy this course wrote into autograded/ (trusted: its metadata keeps the
        problems)."""
        if resources is None:
            resources = ResourcesDict()
        if "metadata" not in resources or resources["metadata"] == "":
            resources["metadata"] = ResourcesDict()
        path, basename = os.path.split(filename)
        resources["metadata"]["name"] = os.path.splitext(basename)[0]
        resources["metadata"]["path"] = path
        meta = resources.get("nbgrader", {})
        max_bytes = nbio.SubmissionLimits(parent=self).max_bytes
        if "student" not in meta:  # not called by an nbgrader converter: a plain untrusted file
            nb, problems = nbio.read_submission(filename, max_bytes)
        elif not self._ours(path, meta):  # fail closed: all but our own output is untrusted
            nb, problems = course_of(self.config).submission(
                meta["assignment"], meta["student"], meta["notebook"], max_bytes=max_bytes
            )
        else:
            nb, problems = nbformat.read(filename, as_version=4), []
        for p in problems:
            self.log.warning("%s: %s", filename, p)
        if problems:
            resources["autograder_problems"] = problems
        mtime = os.path.getmtime(filename) if os.path.exists(filename) else 0
        mtime = datetime.datetime.fromtimestamp(mtime, tz=datetime.UTC)
        resources["metadata"]["modified_date"] = mtime.strftime("%B %-d, %Y")
        return self._export(nb, resources)


def course_of(config):
    """The notebook.Course of an nbgrader configuration's course root."""
    return nbio.Course(CourseDirectory(config=config).root)
