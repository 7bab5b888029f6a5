"""The code base stays ruff-clean (lint and format), as `make lint` checks."""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
RUFF = [sys.executable, "-m", "ruff"]


def test_ruff_check():
    r = subprocess.run([*RUFF, "check", "."], cwd=ROOT, capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr


def test_ruff_format():
    r = subprocess.run([*RUFF, "format", "--check", "."], cwd=ROOT, capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
