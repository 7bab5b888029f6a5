"""Feedback through nbgrader's exchange, under the name the student's nbgrader looks for.

``nbgrader fetch_feedback`` (and JupyterLab's "Fetch Feedback") looks, for every notebook file
in the student's cached copy of a submission, for ``<exchange>/<course>/feedback/<hash>.html``
with ``hash = md5(submission secret + file stem)``. nbgrader's ``release_feedback`` publishes
each page under the stem of the gradebook's notebook (``decoding``), so a student who submitted
``decoding (1).ipynb`` never finds the feedback of the notebook the grader found and graded
(``Could not find feedback for 'attention-transformers/decoding/decoding (1)'``).
:func:`release` publishes each page under the stem of the file that was graded, and the
notebook's own stem; :class:`ReleaseFeedback` does the same for ``nbgrader release_feedback``
(``c.ExchangeFactory.release_feedback = "autograder.service.exchange.ReleaseFeedback"``).
"""

import os
import re
import shutil
import tempfile
from pathlib import Path

from nbgrader.exchange.default.release_feedback import ExchangeReleaseFeedback
from nbgrader.utils import notebook_hash

from autograder import notebook as nbio


def feedback_name(secret, stem):
    """The file name of a feedback page in the exchange's feedback folder."""
    return f"{notebook_hash(secret=secret, notebook_id=stem)}.html"


def stems_for(names, files):
    """{notebook: [the stems of the submitted files whose feedback is that notebook's page]}.

    A notebook's own stem always; the stem of a renamed file that notebook.locate graded as it;
    and every other submitted ``.ipynb`` (an ambiguous or unrelated one) gets the page of the
    first notebook no file answers (its page says why it was graded empty), so that every file
    the student submitted has a page to fetch."""
    files = Path(files)
    out = {n: [n] for n in names}
    submitted = sorted(p.stem for p in files.glob("*.ipynb") if not p.name.startswith("."))
    used = set(names)
    unanswered = []
    for n in names:
        path, _ = nbio.locate(files, n, names)
        if path is None:
            unanswered.append(n)
        elif Path(path).stem != n:
            out[n].append(Path(path).stem)
            used.add(Path(path).stem)
    target = (unanswered or names or [None])[0]
    for stem in submitted:
        if stem not in used and target is not None:
            out[target].append(stem)
    return out


def release(feedback_dir, secret, pages):
    """Publish ``pages`` {submitted stem: page file} into the exchange's ``feedback_dir``,
    each through a temporary file and a rename (a fetch never reads half a page); readable by
    all (the name is the secret), like nbgrader's own pages."""
    names = []
    for stem, source in pages.items():
        name = feedback_name(secret, stem)
        fd, tmp = tempfile.mkstemp(prefix=".tmp-", suffix=".html", dir=feedback_dir)
        try:
            with os.fdopen(fd, "wb") as f, open(source, "rb") as src:
                shutil.copyfileobj(src, f)
            os.chmod(tmp, 0o644)
            os.replace(tmp, os.path.join(feedback_dir, name))
        except BaseException:
            if os.path.exists(tmp):
                os.unlink(tmp)
            raise
        names.append(name)
    return names


class ReleaseFeedback(ExchangeReleaseFeedback):
    """nbgrader's ReleaseFeedback that also publishes each page under the stem of the renamed
    file the grader graded (``decoding (1).ipynb``), found in submitted/ as the grader found it
    (notebook.locate), so that the student's Fetch Feedback finds it."""

    def copy_files(self):
        super().copy_files()
        course = nbio.Course(self.coursedir.root)
        for html_file in sorted(Path(p) for p in _glob(self.src_path, "*.html")):
            folder = html_file.parent
            student = self._student_of(folder)
            if student is None or not (folder / "submission_secret.txt").is_file():
                continue
            assignment = self.coursedir.assignment_id
            names = course.notebook_names(assignment)
            notebook = html_file.stem
            if notebook not in names:
                continue
            submitted = Path(
                self.coursedir.format_path(self.coursedir.submitted_directory, student, assignment)
            )
            extra = [s for s in stems_for(names, submitted).get(notebook, []) if s != notebook]
            if not extra:
                continue
            secret = (folder / "submission_secret.txt").read_text()
            release(self.dest_path, secret, {stem: html_file for stem in extra})
            for stem in extra:
                self.log.info(
                    "Releasing feedback of %s for student '%s' also as '%s' (the submitted name)",
                    notebook,
                    student,
                    stem,
                )

    def _student_of(self, folder):
        regexp = re.escape(os.path.sep).join(
            [
                self.coursedir.format_path(
                    self.coursedir.feedback_directory,
                    "(?P<student_id>[^/]+)",
                    self.coursedir.assignment_id,
                    escape=True,
                )
            ]
        )
        m = re.fullmatch(regexp, str(folder))
        return m.group("student_id") if m else None


def _glob(pattern_dir, pattern):
    import glob

    return glob.glob(os.path.join(pattern_dir, pattern))
