"""How the suite is spread over pytest-xdist workers (`make test`: two), derived from its folders.

tests/<folder>/test_*.py: solutions/ (the reference code against PyTorch), grader/ (the engine,
its verdicts, the mistakes catalogue, the assignments), adversarial/ (the red team), book/ (the
built book, its pages and figures, the release bundle), book_code/ (the book's helper code and its
page code, without the built book), student/ (the student's environment: the assignments and the
chapter notebooks run there), instructor/ (the instructor's path: batch grading, class report,
cluster, the guide), hub/ (the course on JupyterHub), repo/ (the code base as a whole). Code the
modules share lives in tests/support/ (a module never imports a test module), fixtures in the
conftest.py of the folder that uses them.

The tests of one module stay on one worker (its module fixtures: an engine, a graded class, a
PostgreSQL server). Every module of a folder in ONE_GROUP shares one worker, for the session
fixtures of that folder's conftest.py (SHARED_FIXTURES): tests/book/ builds and reads _build/
(two workers would build the book into one folder at once), tests/student/ builds one student
venv. The longest groups start first.
xdist's own --dist loadgroup no longer sees xdist_group marks under pytest 9.2
(pytest-dev/pytest-xdist#1386: it still writes the node id's old field), so the scheduler below
groups by path itself.
"""

from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent
# folders of tests/ whose modules all run on one worker, in order: the session fixtures of their
# conftest.py, which a module elsewhere may not use
SHARED_FIXTURES = {"book": {"built_book", "server", "browser"}, "student": {"student_env"}}
ONE_GROUP = set(SHARED_FIXTURES)
# the book group first: it runs on one worker, one test after another, while the gradings of
# test_mistakes and test_redteam (two judges each) can share the other worker and the cores; the
# student group (a venv, then every notebook in it: about 4 minutes) and the hub's browser test
# (about 2 minutes: a deployment, then Chromium) before the short modules
LONGEST_FIRST = (
    "book",
    "grader/test_mistakes.py",
    "adversarial/test_redteam.py",
    "student",
    "hub/test_browser.py",
)


def group(path):
    """The worker group of the test module at ``path``: its folder under tests/ for a folder in
    ONE_GROUP ('book'), else the module's own path relative to tests/ ('grader/test_engine.py');
    a module outside tests/ is a group of its own (its path)."""
    path = Path(path).resolve()
    if not path.is_relative_to(TESTS):
        return str(path)
    rel = path.relative_to(TESTS)
    return rel.parts[0] if len(rel.parts) > 1 and rel.parts[0] in ONE_GROUP else rel.as_posix()


@pytest.hookimpl(optionalhook=True)  # a judge's pytest (the demo checks) runs without xdist
def pytest_xdist_make_scheduler(config, log):
    from xdist.scheduler import LoadScopeScheduling

    class ByGroup(LoadScopeScheduling):
        def _split_scope(self, nodeid):
            return group(config.rootpath / nodeid.split("::", 1)[0])

    return ByGroup(config, log)


def pytest_collection_modifyitems(config, items):
    missing = [g for g in LONGEST_FIRST if not (TESTS / g).exists()]
    if missing:
        raise pytest.UsageError(f"tests/conftest.py: LONGEST_FIRST names no test of {missing}")
    strays = {
        (group(item.path), folder)
        for item in items
        for folder, names in SHARED_FIXTURES.items()
        if names & set(item.fixturenames) and group(item.path) != folder
    }
    if strays:
        raise pytest.UsageError(
            "; ".join(
                f"{g} uses a session fixture of tests/{f}/ ({sorted(SHARED_FIXTURES[f])}):"
                f" move it into tests/{f}/, whose modules share one worker"
                for g, f in sorted(strays)
            )
        )
    rank = {name: n for n, name in enumerate(LONGEST_FIRST)}
    # stable: the order within a group is kept
    items.sort(key=lambda item: rank.get(group(item.path), len(rank)))
