"""nbgrader configuration of the course (run nbgrader from this directory).

`nbgrader autograde` does not execute notebooks in a kernel: its verdicts come from the
sandboxed grading engine in autograder/ (see README, "Instructors"). For many submissions use
`python -m autograder grade <assignment>` from this directory (parallel, same gradebook, same
limits: both read c.SandboxLimits below).
"""

import os

from autograder.nbgrader.config import configure

c = get_config()  # noqa: F821
c.CourseDirectory.course_id = "attention-transformers"
c.CourseDirectory.root = os.path.dirname(os.path.abspath(__file__))
configure(c)

# Limits of one hidden check (one sandboxed child); defaults shown.
# c.SandboxLimits.wall_s = 30.0          # wall clock, seconds
# c.SandboxLimits.cpu_s = 20             # CPU seconds
# c.SandboxLimits.memory_bytes = 3 << 30
# c.SandboxLimits.nproc = 16             # processes + threads
