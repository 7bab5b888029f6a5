"""Collect every module in this folder as hidden checks (their names are the assignments')."""

import pytest


def pytest_collect_file(file_path, parent):
    if file_path.suffix != ".py" or file_path.name in ("conftest.py", "__init__.py"):
        return None
    if parent.session.isinitpath(file_path):
        return None  # named on the command line: pytest collects it already
    return pytest.Module.from_parent(parent, path=file_path)
