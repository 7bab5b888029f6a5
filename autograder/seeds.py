"""The secret run seed and the seeds derived from it (no torch: the engine imports this).

The run seed never reaches a worker: checks draw concrete inputs from generators seeded with
``derive_seed(run_seed, ...)``, and only those inputs are sent. By default it is this machine's
grader secret (:func:`default_run_seed`), so grading the same submission again gives the same
inputs, verdicts and messages; each submission's inputs also depend on its own code
(:func:`submission_seed`), so a counterexample shown to one student is no answer key for
another, nor for a changed submission.
"""

import hashlib
import json
import os
import secrets
from pathlib import Path

SECRET_ENV = "AUTOGRADER_SECRET_FILE"


def new_run_seed():
    return secrets.randbits(63) ^ int.from_bytes(os.urandom(8), "little") >> 1


def derive_seed(run_seed, *parts):
    h = hashlib.sha256(str(run_seed).encode())
    for p in parts:
        h.update(b"\0" + str(p).encode())
    return int.from_bytes(h.digest()[:8], "little") >> 1


def secret_path():
    """The grader secret's file: $AUTOGRADER_SECRET_FILE, else
    $XDG_STATE_HOME/autograder/secret (default ~/.local/state/autograder/secret)."""
    if os.environ.get(SECRET_ENV):
        return Path(os.environ[SECRET_ENV])
    state = os.environ.get("XDG_STATE_HOME") or Path.home() / ".local" / "state"
    return Path(state) / "autograder" / "secret"


def default_run_seed():
    """This machine's grader secret (made on first use, readable by its owner only)."""
    path = secret_path()
    try:
        return int(path.read_text().strip())
    except (OSError, ValueError):
        pass
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    seed = new_run_seed()
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:  # another grader made it first
        return int(path.read_text().strip())
    with os.fdopen(fd, "w") as f:
        f.write(f"{seed}\n")
    return seed


def submission_seed(run_seed, assignment, cells):
    """The run seed of one submission: the run seed mixed with the code it is graded on."""
    code = hashlib.sha256(json.dumps(list(cells)).encode()).hexdigest()
    return derive_seed(run_seed, "submission", assignment, code)
