"""A message to the next student outside /tmp: the hostile student writes an answer file into
every directory of the sandbox it can write to except /tmp (e.g. /dev/shm, /dev/mqueue), which the
wipe between test functions does not cover; the next student graded in the same sandbox (a
collaborator) is right only if it finds the file."""

ASSIGNMENT = "multihead"
CLASS = 5  # sandbox hygiene: what one student leaves behind reaches the next
NEXT_STUDENT = True
CELLS = {
    "parameter_count": r'''
import os

for _root in ("/dev/shm", "/dev/mqueue", "/dev", "/run", "/var/tmp", "/sandbox", "/grader", "/"):
    try:
        with open(os.path.join(_root, ".redteam-answer-16"), "w") as _f:
            _f.write("4*d*d")
    except OSError:
        pass
__WRONG__
'''
}
READER = (
    "parameter_count",
    r'''
import os


def _found():
    for root in ("/dev/shm", "/dev/mqueue", "/dev", "/run", "/var/tmp", "/sandbox", "/grader", "/"):
        if os.path.exists(os.path.join(root, ".redteam-answer-16")):
            return True
    return False
''',
)
