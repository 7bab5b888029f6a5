"""The hidden checks against the reference solutions: ``pytest autograder/checks --reference``
(autograder.judge.plugin), the instructor's command, run as a test of the suite so that it
shares the workers with the rest instead of running before them.

The reference runs in-process through the same wire encoding the sandbox uses; every check
must pass (its CUDA cases skip, with the reason, on a machine without CUDA).
"""

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def test_every_check_passes_on_the_reference_solutions():
    cmd = [sys.executable, "-m", "pytest", "autograder/checks", "--reference", "-q"]
    cmd += ["-p", "no:cacheprovider"]
    r = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, timeout=900)
    assert r.returncode == 0, r.stdout[-6000:] + r.stderr[-3000:]
    summary = r.stdout.strip().splitlines()[-1]
    assert " passed" in summary and "failed" not in summary and "error" not in summary, summary
    print(summary)
