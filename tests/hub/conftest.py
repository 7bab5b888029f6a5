"""Fixtures of the JupyterHub tests: a deployment of the course on this machine (hub/testbed.py)."""

import os
import shutil

import pytest


@pytest.fixture(scope="module")
def needs_root():
    if os.geteuid() != 0 or shutil.which("runuser") is None:
        pytest.skip("the hub's tests create local accounts: run them as root (make test does)")
