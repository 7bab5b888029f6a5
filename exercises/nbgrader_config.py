"""nbgrader configuration of the course (run nbgrader from this directory).

`nbgrader autograde` does not execute notebooks in a kernel: its verdicts come from the
sandboxed grading engine in autograder/ (see README, "Grading"). For many submissions use
`python -m autograder grade <assignment>` from this directory (parallel, same gradebook).
"""

import os
import sys

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if REPO not in sys.path:
    sys.path.insert(0, REPO)
# nbgrader runs `alembic` for the gradebook: make the venv's scripts findable
os.environ["PATH"] = os.path.dirname(sys.executable) + os.pathsep + os.environ.get("PATH", "")

from autograder.nbgrader_plugin import configure  # noqa: E402

c = get_config()  # noqa: F821
c.CourseDirectory.course_id = "attention-transformers"
c.CourseDirectory.root = os.path.dirname(os.path.abspath(__file__))
configure(c)
