"""Students run every chapter as a notebook from the bundle's chapters/ folder.

`make release` (tools/release.py, through book/_ext/coursebook.py's write_chapters) writes each
chapter page as chapters/NN_<topic>.ipynb next to the answer-free helpers the pages import
(bookplot.py, bookdata.py, ... and matplotlibrc) and zips the folder as chapters.zip. Here that
folder is written afresh with the same code, copied out of the repository into a temporary
folder, and every notebook is executed there by a new virtual environment that has only
requirements-student.txt installed (the session's `student_env` fixture,
tests/student/conftest.py): the kernel's working directory is the folder, nothing of the
repository is importable, nothing needs the network. Two notebooks run at a time. The executed
folder, outputs included, then passes the release leak scan (tools/release.py leaks) and imports
no instructor-only package.

The fast tests check the folder's contents, the page link and that the scan looks inside
chapters.zip (the built book's links: tests/book/test_release.py).
"""

import json
import shutil
import subprocess
import time
import zipfile
from pathlib import Path

import pytest

from tests.support.book import coursebook, release

ROOT = Path(__file__).resolve().parents[2]
CHAPTER_PAGES = [p.stem for p in coursebook.chapter_pages(ROOT)]
# chapter 9 loads the weights chapter 8 trained (book/numwords.py caches them next to the
# folder), so both run in the same worker, 8 first; the rest alternate between two workers
SAME_WORKER = ["08_models", "09_decoding"]


@pytest.fixture(scope="module")
def chapters(tmp_path_factory):
    """The bundle's chapters/ folder and chapters.zip, as `make release` writes them."""
    out = tmp_path_factory.mktemp("bundle")
    release.write_chapters(out)
    return out / coursebook.CHAPTERS_DIR


def test_every_chapter_is_a_notebook_with_its_helpers(chapters):
    assert len(CHAPTER_PAGES) >= 9
    names = {p.name for p in chapters.iterdir()}
    assert {f"{stem}.ipynb" for stem in CHAPTER_PAGES} <= names
    assert {"bookplot.py", "bookdata.py", "matplotlibrc"} <= names, names
    assert not any(n.startswith(("solutions", "autograder")) for n in names), names
    for stem in CHAPTER_PAGES:
        nb = json.loads((chapters / f"{stem}.ipynb").read_text(encoding="utf-8"))
        code = [c for c in nb["cells"] if c["cell_type"] == "code"]
        assert code and all(not c["outputs"] for c in code), stem
        assert nb["metadata"]["kernelspec"]["name"] == "python3"
        text = "".join("".join(c["source"]) for c in nb["cells"])
        assert "{{" not in text, stem  # MyST substitutions are replaced
    with zipfile.ZipFile(chapters.parent / coursebook.CHAPTERS_ZIP) as z:
        zipped = {Path(n).name for n in z.namelist()}
        assert all(n.startswith(f"{coursebook.CHAPTERS_DIR}/") for n in z.namelist())
    assert zipped == names


def test_helpers_are_answer_free(chapters):
    """No helper or notebook holds a graded answer, a hidden check or reference code, and no
    helper imports an instructor-only package."""
    assert release.leaks(chapters.parent) == []
    helpers = [p for p in chapters.iterdir() if p.suffix == ".py"]
    imports = [(f, m) for f, m in release.instructor_imports(chapters) if f.endswith(".py")]
    assert helpers and not imports, imports


def test_chapter_notebooks_import_no_instructor_package(chapters):
    """What each notebook imports is in the student's folder or environment."""
    assert release.instructor_imports(chapters) == []


def test_leak_scan_looks_inside_the_zip(tmp_path):
    """Control: a solution-only line inside chapters.zip is reported."""
    secret = release.secrets(ROOT)
    line = next(ln for ln, what in secret.items() if what.startswith("solution region"))
    with zipfile.ZipFile(tmp_path / "chapters.zip", "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("chapters/helper.py", f"x = 1\n{line}\n")
    found = release.leaks(tmp_path)
    assert [rel for rel, _ in found] == ["chapters.zip/chapters/helper.py"], found


def test_chapter_page_links_its_notebook():
    html = (
        '<div id="jb-print-docs-body" class="onlyprint"><h1>1. 소프트맥스</h1></div>'
        '<main><section id="id1">\n<h1>1. 소프트맥스<a class="headerlink" href="#id1">#</a></h1>'
        "<p>text</p></section></main>"
    )
    linked = coursebook.link_chapter_notebook(html, "01_softmax")
    assert 'href="../chapters/01_softmax.ipynb"' in linked
    assert f'href="../{coursebook.CHAPTERS_ZIP}"' in linked
    title_end = linked.index("#</a></h1>") + len("#</a></h1>")
    assert linked.index("01_softmax.ipynb") > title_end  # under the title, not the print header
    assert linked[title_end:].lstrip().startswith('<p class="chapter-notebook">')
    assert coursebook.link_chapter_notebook(linked, "01_softmax") == linked  # once
    link = coursebook.chapter_link("01_softmax")
    misplaced = html.replace("</h1></div>", f"</h1>\n{link}</div>")  # where an earlier build put it
    assert coursebook.link_chapter_notebook(misplaced, "01_softmax") == linked


RUNNER = r"""
import json, pathlib, sys, time
import nbformat
from nbclient import NotebookClient

results = {}
for path in sys.argv[1:]:
    path = pathlib.Path(path)
    nb = nbformat.read(path, as_version=4)
    start = time.perf_counter()
    client = NotebookClient(nb, timeout=600, kernel_name="python3", allow_errors=True,
                            resources={"metadata": {"path": str(path.parent)}})
    client.execute()
    errors = []
    for k, cell in enumerate(nb.cells):
        for o in cell.get("outputs", []):
            if o.output_type == "error":
                errors.append({"cell": k, "ename": o.ename, "evalue": o.evalue[:300],
                               "source": cell.source[:200]})
    nbformat.write(nb, path)  # with its outputs, for the leak scan
    results[path.stem] = {"seconds": round(time.perf_counter() - start, 1), "errors": errors}
print(json.dumps(results))
"""


def split_in_two(stems):
    """Two lists of chapters for two workers: SAME_WORKER together (in order), the rest
    alternating."""
    first = [s for s in SAME_WORKER if s in stems]
    second = []
    for s in (s for s in stems if s not in first):
        (second if len(second) <= len(first) else first).append(s)
    return first, second


def test_split_keeps_chapters_8_and_9_together():
    a, b = split_in_two(CHAPTER_PAGES)
    assert sorted(a + b) == sorted(CHAPTER_PAGES)
    together = a if "08_models" in a else b
    assert together.index("08_models") < together.index("09_decoding")


@pytest.mark.slow
def test_every_chapter_runs_from_the_bundle(chapters, student_env, tmp_path):
    python, env, _ = student_env
    folder = tmp_path / "student" / coursebook.CHAPTERS_DIR  # outside the repository
    shutil.copytree(chapters, folder)
    env = dict(env, MPLCONFIGDIR=str(tmp_path / "mplconfig"))
    env.pop("PYTHONPATH", None)
    # the student's Python cannot import the course's instructor code from this folder
    probe = subprocess.run(
        [str(python), "-c", "import solutions"], cwd=folder, env=env, capture_output=True
    )
    assert probe.returncode != 0, "solutions is importable in the student environment"
    (tmp_path / "runner.py").write_text(RUNNER, encoding="utf-8")

    start = time.perf_counter()
    procs = []
    for group in split_in_two(CHAPTER_PAGES):
        cmd = [str(python), str(tmp_path / "runner.py")]
        cmd += [str(folder / f"{s}.ipynb") for s in group]
        procs.append(
            subprocess.Popen(
                cmd, cwd=folder, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE
            )
        )
    results = {}
    for proc in procs:
        out, err = proc.communicate(timeout=3000)
        assert proc.returncode == 0, err.decode()[-3000:]
        results.update(json.loads(out.decode().strip().splitlines()[-1]))
    elapsed = time.perf_counter() - start
    seconds = {s: r["seconds"] for s, r in results.items()}
    print(f"{len(results)} chapter notebooks in {elapsed:.0f} s (two at a time): {seconds}")

    assert sorted(results) == sorted(CHAPTER_PAGES)
    failed = {s: r["errors"][:2] for s, r in results.items() if r["errors"]}
    assert not failed, json.dumps(failed, ensure_ascii=False, indent=1)
    # the executed folder, outputs included, holds no answer and no hidden check
    shutil.copyfile(chapters.parent / coursebook.CHAPTERS_ZIP, folder.parent / "chapters.zip")
    assert release.leaks(folder.parent) == []
    assert release.instructor_imports(folder) == []
