"""The student bundle (`make release`, tools/release.py) holds no graded answer, hidden test or
hidden check.

The planted-marker test copies the repository (git ls-files), puts a unique marker into every
solution region and every hidden-test region of every source notebook and into every module of
autograder/checks/, and runs there the step of `make release` that follows the book build
(`tools/release.py bundle`, with this session's built book as its HTML): release notebooks by
nbgrader, chapter notebooks and their helpers, the bundle written and scanned. Then no byte of the
bundle may hold a marker. The book itself is built once per session (the built_book fixture, as
`make book` and `make release` build it) and scanned (test_built_book_holds_no_answers) for every
line that only a solution region, a hidden-test region, a check module or solutions/ has: what the
book build could carry into the bundle is caught there. The bundle's chapter notebooks are run by a
student environment in tests/student/test_chapter_notebooks.py.
"""

import json
import os
import re
import shutil
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from tests.support.book import coursebook, release

ROOT = Path(__file__).resolve().parents[2]

BEGIN_SOLUTION = re.compile(r"^([ \t]*)### BEGIN SOLUTION[ \t]*$", re.M)
BEGIN_HIDDEN = re.compile(r"^([ \t]*)### BEGIN HIDDEN TESTS[ \t]*$", re.M)


def copy_repository(dest):
    """The working tree's tracked and untracked-but-not-ignored files (what a clone would have,
    plus work in progress)."""
    out = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        capture_output=True,
        check=True,
    ).stdout.decode()
    for rel in filter(None, out.split("\0")):
        src = ROOT / rel
        if src.is_file():
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / rel)
    return dest


def plant(repo, tag):
    """Put a marker into every solution region, hidden-test region and check module; return
    the markers."""
    markers = []

    def mark(kind):
        markers.append(f"LEAKMARK-{tag}-{kind}-{len(markers)}")
        return markers[-1]

    for nb_path in sorted((repo / "exercises" / "source").glob("*/*.ipynb")):
        nb = json.loads(nb_path.read_text(encoding="utf-8"))
        for cell in nb["cells"]:
            src = "".join(cell["source"])
            src = BEGIN_SOLUTION.sub(
                lambda m: f"{m.group(0)}\n{m.group(1)}# {mark('solution')}", src
            )
            src = BEGIN_HIDDEN.sub(lambda m: f"{m.group(0)}\n{m.group(1)}# {mark('hidden')}", src)
            cell["source"] = src
        nb_path.write_text(json.dumps(nb, ensure_ascii=False, indent=1), encoding="utf-8")
    for module in sorted((repo / "autograder" / "checks").glob("*.py")):
        m = mark("check")
        with module.open("a", encoding="utf-8") as f:
            f.write(f'\n# {m}\nLEAK_MARKER = "{m}"\n')
    return markers


def release_bundle(repo, html):
    """`make release` in ``repo`` but for its book build, on the built book ``html``: the release
    notebooks (its prerequisite `make notebooks`), then the bundle."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    out = None
    for step in (
        ["notebooks"],
        ["bundle", "--html", str(html), "--out", str(repo / "_build" / "release")],
    ):
        cmd = [sys.executable, "tools/release.py", *step]
        out = subprocess.run(cmd, cwd=repo, env=env, capture_output=True, text=True, timeout=1800)
        if out.returncode:
            break
    return out


def test_release_runs_the_bundle_step_after_the_book_build():
    """The Makefile's release target is the book build and then the step the planted test runs."""
    make = (ROOT / "Makefile").read_text(encoding="utf-8")
    recipe = make.split("\nrelease:", 1)[1].split("\n\n", 1)[0]
    assert recipe.startswith(" $(STAMP) sysdeps notebooks\n")  # `make notebooks` first
    assert "jupyter-book build" in recipe and recipe.rstrip().endswith("tools/release.py bundle")


@pytest.mark.slow
def test_bundle_holds_no_planted_marker(built_book, tmp_path):
    repo = copy_repository(tmp_path / "repo")
    markers = plant(repo, uuid.uuid4().hex)
    names = release.assignments(repo)
    assert len(names) >= 9
    for kind in ("solution", "hidden", "check"):
        assert len([m for m in markers if f"-{kind}-" in m]) >= len(names), kind
    # control: every marker is in the copy, where the scan finds it
    planted = release.leaks(repo / "exercises" / "source", root=repo, markers=markers)
    planted += release.leaks(repo / "autograder" / "checks", root=repo, markers=markers)
    assert {what for _, what in planted} >= {f"marker {m}" for m in markers}

    r = release_bundle(repo, built_book)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    bundle = repo / "_build" / "release"
    assert "no leaks" in r.stdout, r.stdout[-3000:]

    # the whole book, and each chapter links its notebook, which nbgrader made without answers
    chapters = sorted((bundle / "book").glob("0*.html"))
    assert (bundle / "index.html").is_file() and len(chapters) >= 9
    assert (bundle / "requirements-student.txt").is_file()
    for name in names:
        nb = bundle / "notebooks" / name / f"{name}.ipynb"
        text = nb.read_text(encoding="utf-8")
        assert "YOUR CODE HERE" in text and "NotImplementedError" in text, name
        assert '"nbgrader"' in text, name  # cell metadata written by generate_assignment
        pages = [p for p in chapters if f'href="../notebooks/{name}/{name}.ipynb"' in p.read_text()]
        assert len(pages) == 1, (name, pages)
    # every chapter also as a notebook in chapters/ (with its helpers, and zipped), linked from
    # its page under the title; the notebooks import no instructor-only package
    for page in chapters:
        assert (bundle / "chapters" / f"{page.stem}.ipynb").is_file(), page.stem
        assert f'href="../chapters/{page.stem}.ipynb"' in page.read_text(), page.stem
    assert (bundle / "chapters" / "bookplot.py").is_file()
    assert (bundle / "chapters.zip").is_file()
    assert release.instructor_imports(bundle / "chapters") == []
    files = [p for p in bundle.rglob("*") if p.is_file()]
    assert len(files) > 100
    found = [
        (str(p.relative_to(bundle)), m)
        for p in files
        for m in markers
        if m.encode() in p.read_bytes()
    ]
    assert not found, found
    # the same scan `make release` ran finds nothing either
    assert release.leaks(bundle, root=repo, markers=markers) == []


def test_leak_scan_catches_answers(tmp_path):
    """Control: a solution-only line in highlighted HTML, a region marker in a notebook and a
    line of a check module are all reported."""
    secret = release.secrets(ROOT)
    sol = next(ln for ln, what in secret.items() if what.startswith("solution region"))
    check = next(ln for ln, what in secret.items() if what.startswith("autograder/checks"))
    words = re.split(r"(\W+)", sol)
    highlighted = "".join(f'<span class="n">{w}</span>' if w.strip() else w for w in words)
    (tmp_path / "page.html").write_text(f"<pre>{highlighted}\n</pre>", encoding="utf-8")
    nb = {"cells": [{"cell_type": "code", "source": ["### BEGIN HIDDEN TESTS\n"], "outputs": []}]}
    (tmp_path / "a.ipynb").write_text(json.dumps(nb), encoding="utf-8")
    (tmp_path / "searchindex.js").write_text(f"x\n{check}\n", encoding="utf-8")
    found = {rel: what for rel, what in release.leaks(tmp_path, root=ROOT)}
    assert set(found) == {"page.html", "a.ipynb", "searchindex.js"}, found


def test_built_book_holds_no_answers():
    """The book `make book` built here (and the bundle `make release` wrote, if any) shows no
    line that only a solution region, a hidden-test region, a check module or solutions/ has."""
    html = ROOT / "_build" / "html"
    if not (html / "index.html").is_file():
        pytest.skip("the book is not built (make book)")
    found = release.leaks(html)
    bundle = ROOT / "_build" / "release"
    if (bundle / "index.html").is_file():
        found += release.leaks(bundle)
    assert not found, found


def test_built_book_links_every_chapter_notebook():
    """The book `make book` built here links each chapter's notebook, which sits in chapters/."""
    html = ROOT / "_build" / "html"
    if not (html / "index.html").is_file():
        pytest.skip("the book is not built (make book)")
    for stem in (p.stem for p in coursebook.chapter_pages(ROOT)):
        page = (html / "book" / f"{stem}.html").read_text(encoding="utf-8")
        if 'class="chapter-notebook"' not in page:
            pytest.skip("the built book predates the chapter notebooks (make book)")
        assert f'href="../chapters/{stem}.ipynb"' in page, stem
        assert (html / "chapters" / f"{stem}.ipynb").is_file(), stem


INSTRUCTOR_ONLY = ["solutions/", "autograder/", "autograder.checks", "exercises/", "checks/"]


def _prose(text):
    return re.sub(r"```\{code-cell\}.*?```", " ", text, flags=re.S)


@pytest.mark.parametrize("page", sorted(p.name for p in (ROOT / "book").glob("*.md")))
def test_pages_do_not_point_to_instructor_files(page):
    """Student-facing text never says where the reference code or the hidden checks live."""
    text = _prose((ROOT / "book" / page).read_text(encoding="utf-8"))
    named = [s for s in INSTRUCTOR_ONLY if s in text]
    assert not named, named


def test_notebooks_do_not_point_to_instructor_files():
    for nb in sorted((ROOT / "exercises" / "source").glob("*/*.ipynb")):
        cells = json.loads(nb.read_text(encoding="utf-8"))["cells"]
        text = "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "markdown")
        named = [s for s in INSTRUCTOR_ONLY if s in text]
        assert not named, (nb.name, named)
