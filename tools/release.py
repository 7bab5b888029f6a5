"""What the course publishes to students, and nothing else.

    python tools/release.py notebooks [ASSIGNMENT ...]  # stale exercises/release/<a>/<a>.ipynb
    python tools/release.py bundle                      # _build/release/: _build/html + nbgrader

`notebooks` generates the student release notebooks with nbgrader's generate_assignment (its
API, the code the command runs, all assignments in one Python process that imports nbgrader
once), each assignment in its own temporary copy of the course root (its own gradebook: the
course's gradebook.db is never touched); an assignment is regenerated only when its source
notebook or nbgrader_config.py is newer than its release notebook. The book links these
notebooks (book/_ext/coursebook.py copies them into the HTML as notebooks/<a>/<a>.ipynb).

`bundle` writes _build/release/: a copy of the built HTML book whose notebooks/ folder holds
the release notebooks of exercises/release/ (the stale ones generated again first, as `notebooks`
does, so each is nbgrader's output for the current source), so the chapters' download
links (../notebooks/<a>/<a>.ipynb) work offline, and whose chapters/ folder (and chapters.zip)
holds every chapter page as a notebook with the answer-free helper modules it imports, written
afresh by book/_ext/coursebook.py (write_chapters); students run those notebooks from that folder
with requirements-student.txt only. A chapter notebook or helper there that imports an
instructor-only package (solutions, autograder) fails the command. It then scans every file of the
bundle (the members of a .zip too) for leaks:
nbgrader region markers, any line that only a solution region or a hidden-test region of a source
notebook has, and any line of the hidden checks (autograder/checks/) or the reference code
(solutions/) that no public page or notebook shows. A leak fails the command and the bundle
is removed.
"""

import argparse
import html
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "book" / "_ext"))
try:
    import coursebook  # the book's extension: writes the chapter notebooks (write_chapters)
finally:
    sys.path.remove(str(ROOT / "book" / "_ext"))
SOLUTION_RE = re.compile(r"### BEGIN SOLUTION\n(.*?)### END SOLUTION", re.S)
HIDDEN_RE = re.compile(r"### BEGIN HIDDEN TESTS\n(.*?)### END HIDDEN TESTS", re.S)
REGION_MARKERS = ("BEGIN SOLUTION", "END SOLUTION", "BEGIN HIDDEN TESTS", "END HIDDEN TESTS")
MIN_LINE = 30  # shorter lines ("return out", "import torch") are too common to be evidence
WORD_RE = re.compile(r"[^\W_]")  # a line without a letter or digit (a "# ----" rule) is no evidence
TEXT_SUFFIXES = {".html", ".ipynb", ".md", ".txt", ".js", ".json", ".py", ".css", ".svg"}


def assignments(root=ROOT):
    source = Path(root) / "exercises" / "source"
    return sorted(p.name for p in source.iterdir() if (p / f"{p.name}.ipynb").is_file())


# nbgrader's generate_assignment through its API (nbgrader.apps.api, what the command and the
# formgrader run), for each (course root, assignment) of argv in turn, in one process: the
# course's nbgrader_config.py read from that root, its gradebook in that root
GENERATE = r"""
import sys
from nbgrader.apps.api import NbGraderAPI
from nbgrader.coursedir import CourseDirectory
from traitlets.config.loader import PyFileConfigLoader

args = sys.argv[1:]
for root, name in zip(args[::2], args[1::2]):
    config = PyFileConfigLoader("nbgrader_config.py", path=root).load_config()
    config.CourseDirectory.root = root
    config.CourseDirectory.db_url = f"sqlite:///{root}/gradebook.db"
    api = NbGraderAPI(coursedir=CourseDirectory(config=config), config=config)
    result = api.generate_assignment(name, force=True)
    if not result["success"]:
        sys.exit(f"generate_assignment {name}: {result.get('error')}\n{result.get('log', '')}")
"""


def nbgrader_generate(pairs, cwd, env=None):
    """nbgrader's generate_assignment for each (course root, assignment) of ``pairs``, in one
    process (GENERATE), with ``env`` (default: this one's without PYTHONPATH); a failure raises
    RuntimeError with nbgrader's error and log."""
    if env is None:
        env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    cmd = [sys.executable, "-c", GENERATE, *(str(x) for pair in pairs for x in pair)]
    proc = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"nbgrader generate_assignment failed:\n{proc.stderr[-3000:]}")


def generate(names, out, root=ROOT):
    """Release notebooks of ``names`` made by nbgrader's generate_assignment, each in its own
    temporary course root (its own gradebook) copied from exercises/, all in one process;
    written to ``out/<a>/<a>.ipynb``."""
    course = Path(root) / "exercises"
    names = list(names)
    with tempfile.TemporaryDirectory() as tmp:
        for name in names:
            course_root = Path(tmp) / name
            course_root.mkdir()
            shutil.copy2(course / "nbgrader_config.py", course_root)
            shutil.copytree(
                course / "source" / name,
                course_root / "source" / name,
                ignore=shutil.ignore_patterns(".ipynb_checkpoints"),
            )
        nbgrader_generate([(Path(tmp) / name, name) for name in names], cwd=tmp)
        for name in names:
            made = Path(tmp) / name / "release" / name / f"{name}.ipynb"
            if not made.is_file():
                raise RuntimeError(f"nbgrader generate_assignment {name} wrote no {made.name}")
            dst = Path(out) / name / made.name
            dst.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(made, dst)
    return names


def stale(root=ROOT, out=None):
    """Assignments whose release notebook in ``out`` (exercises/release) is missing or older than
    its source notebook or the course configuration."""
    course = Path(root) / "exercises"
    out = Path(out) if out else course / "release"
    config_time = (course / "nbgrader_config.py").stat().st_mtime
    names = []
    for name in assignments(root):
        src = course / "source" / name / f"{name}.ipynb"
        dst = out / name / f"{name}.ipynb"
        if not dst.is_file() or dst.stat().st_mtime < max(src.stat().st_mtime, config_time):
            names.append(name)
    return names


def release_notebooks(root=ROOT):
    """exercises/release/, with every assignment's release notebook current (`make notebooks`:
    the stale ones are generated first)."""
    out = Path(root) / "exercises" / "release"
    names = stale(root, out)
    if names:
        generate(names, out, root=root)
    return out


# ---------------------------------------------------------------------------------------------
# Leak scan


def _lines(text):
    return {ln.strip() for ln in text.splitlines()}


def _notebook_text(path):
    """Every string of a notebook (sources and outputs), one per line."""
    out = []

    def walk(v):
        if isinstance(v, str):
            out.append(v)
        elif isinstance(v, list):
            if all(isinstance(x, str) for x in v):
                out.append("".join(v))
            else:
                for x in v:
                    walk(x)
        elif isinstance(v, dict):
            for x in v.values():
                walk(x)

    walk(json.loads(Path(path).read_text(encoding="utf-8")))
    return "\n".join(out)


def _code_cells(nb_path):
    cells = json.loads(Path(nb_path).read_text(encoding="utf-8"))["cells"]
    return ["".join(c["source"]) for c in cells if c["cell_type"] == "code"]


def solution_lines(root=ROOT):
    """{line: assignment} of the stripped lines (>= MIN_LINE characters) of every solution region
    of the source notebooks, public or not (the book's pages must not show them either)."""
    lines = {}
    for name in assignments(root):
        for src in _code_cells(Path(root) / "exercises" / "source" / name / f"{name}.ipynb"):
            for region in SOLUTION_RE.findall(src):
                for ln in _lines(region):
                    if len(ln) >= MIN_LINE:
                        lines.setdefault(ln, name)
    return lines


def secrets(root=ROOT):
    """Lines that must never reach students, each with where it comes from.

    A line counts when it is at least MIN_LINE characters long and no public text has it: public
    text is the book's pages (book/*.md) and the parts of the source notebooks outside solution
    and hidden-test regions (what the release notebooks show)."""
    root = Path(root)
    public = set()
    for page in sorted((root / "book").glob("*.md")):
        public |= _lines(page.read_text(encoding="utf-8"))
    hidden = {}
    for name in assignments(root):
        nb = root / "exercises" / "source" / name / f"{name}.ipynb"
        for src in _code_cells(nb):
            outside = HIDDEN_RE.sub("", SOLUTION_RE.sub("", src))
            public |= _lines(outside)
            for region in SOLUTION_RE.findall(src):
                hidden.update(dict.fromkeys(_lines(region), f"solution region of {name}"))
            for region in HIDDEN_RE.findall(src):
                hidden.update(dict.fromkeys(_lines(region), f"hidden tests of {name}"))
        # given code the notebook shows in its markdown
        cells = json.loads(nb.read_text(encoding="utf-8"))["cells"]
        for c in cells:
            if c["cell_type"] == "markdown":
                public |= _lines("".join(c["source"]))
    for folder in ("autograder/checks", "solutions"):
        for module in sorted((root / folder).glob("*.py")):
            what = f"{folder}/{module.name}"
            for ln in _lines(module.read_text(encoding="utf-8")):
                hidden.setdefault(ln, what)
    return {
        ln: what
        for ln, what in hidden.items()
        if len(ln) >= MIN_LINE and ln not in public and WORD_RE.search(ln)
    }


def _file_text(path):
    if path.suffix == ".ipynb":
        return _notebook_text(path)
    text = path.read_text(encoding="utf-8", errors="replace")
    if path.suffix == ".html":  # highlighted code: drop the tags, keep the line structure
        text = html.unescape(re.sub(r"<[^>]+>", "", text))
    return text


def _scan(rel, path, raw, secret, markers):
    found = []
    for m in markers:
        if m.encode() in raw:
            found.append((rel, f"marker {m}"))
    if path.suffix == ".zip":  # every member, as if it were a file of the bundle
        with zipfile.ZipFile(path) as z, tempfile.TemporaryDirectory() as tmp:
            for info in z.infolist():
                if info.is_dir():
                    continue
                member = Path(tmp) / f"member{Path(info.filename).suffix}"
                member.write_bytes(z.read(info))
                inner = f"{rel}/{info.filename}"
                found += _scan(inner, member, member.read_bytes(), secret, markers)
        return found
    if path.suffix not in TEXT_SUFFIXES:
        return found
    text = _file_text(path)
    for m in REGION_MARKERS:
        if f"### {m}" in text:
            found.append((rel, f"nbgrader region marker '### {m}'"))
    for ln in sorted(_lines(text) & secret.keys()):
        found.append((rel, f"line of {secret[ln]}: {ln[:80]}"))
    return found


def leaks(bundle, root=ROOT, markers=()):
    """Problems found in the files under ``bundle`` (and inside its .zip files): (relative path,
    what)."""
    bundle = Path(bundle)
    secret = secrets(root)
    found = []
    for path in sorted(p for p in bundle.rglob("*") if p.is_file()):
        rel = str(path.relative_to(bundle))
        found += _scan(rel, path, path.read_bytes(), secret, markers)
    return found


INSTRUCTOR_PACKAGES = {"solutions", "autograder"}


def instructor_imports(folder):
    """(file, module) for every import of an instructor-only package (solutions, autograder) in
    the chapter notebooks and helper modules of ``folder`` (the bundle's chapters/): students do
    not have them, so such a notebook cannot run."""
    found = []
    for path in sorted(Path(folder).iterdir()):
        if path.suffix == ".ipynb":
            cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
            sources = ["".join(c["source"]) for c in cells if c["cell_type"] == "code"]
        elif path.suffix == ".py":
            sources = [path.read_text(encoding="utf-8")]
        else:
            continue
        for src in sources:
            for name in sorted(coursebook._imported_modules(src) & INSTRUCTOR_PACKAGES):
                found.append((path.name, name))
    return found


# ---------------------------------------------------------------------------------------------
# Commands


def build_bundle(html_dir, out, root=ROOT):
    """_build/release/: the built book plus the current release notebooks in notebooks/."""
    html_dir, out = Path(html_dir), Path(out)
    if not (html_dir / "index.html").is_file():
        raise RuntimeError(f"{html_dir} holds no built book: run `make book` first")
    if out.exists():
        shutil.rmtree(out)
    shutil.copytree(html_dir, out, ignore=shutil.ignore_patterns(".buildinfo", ".doctrees"))
    shutil.rmtree(out / "notebooks", ignore_errors=True)
    made = release_notebooks(root)
    for name in assignments(root):
        (out / "notebooks" / name).mkdir(parents=True)
        shutil.copyfile(made / name / f"{name}.ipynb", out / "notebooks" / name / f"{name}.ipynb")
        write_student_config(out / "notebooks" / name)
    write_chapters(out, root=root)
    return out


# nbgrader (`nbgrader validate`, JupyterLab's nbgrader extensions) warns "No nbgrader_config.py
# file found" in a folder without one: the students' copy, saved next to their notebook
STUDENT_CONFIG = '''"""학생용 nbgrader 설정: 과제 노트북과 같은 작업 폴더에 두세요(고칠 것 없음).

`nbgrader validate`와 JupyterLab의 nbgrader 확장이 이 파일을 읽습니다. 이 파일이 없으면
"No nbgrader_config.py file found"라는 경고가 나옵니다(채점에는 영향이 없습니다).
"""

c = get_config()  # noqa: F821
c.CourseDirectory.course_id = "attention-transformers"
# 강좌 서버(JupyterHub)의 nbgrader exchange 폴더: 강사가 다른 경로를 알려 주면 그 경로로 바꾸세요.
c.Exchange.root = "/usr/local/share/nbgrader/exchange"
'''


def write_student_config(folder):
    """``folder``/nbgrader_config.py: the students' nbgrader configuration (STUDENT_CONFIG)."""
    path = Path(folder) / "nbgrader_config.py"
    path.write_text(STUDENT_CONFIG, encoding="utf-8")
    return path


def write_chapters(out, root=ROOT):
    """The chapter notebooks and their helpers in ``out``/chapters/ and ``out``/chapters.zip,
    written afresh from the pages (the same code the book build runs)."""
    out = Path(out)
    return coursebook.write_chapters(
        root, out / coursebook.CHAPTERS_DIR, out / coursebook.CHAPTERS_ZIP
    )


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    nbs = sub.add_parser("notebooks", help="generate stale release notebooks")
    nbs.add_argument("names", nargs="*", help="assignments (default: the stale ones)")
    nbs.add_argument("--out", default=str(ROOT / "exercises" / "release"))
    bun = sub.add_parser("bundle", help="write the student bundle and scan it for leaks")
    bun.add_argument("--html", default=str(ROOT / "_build" / "html"))
    bun.add_argument("--out", default=str(ROOT / "_build" / "release"))
    bun.add_argument("--root", default=str(ROOT), help="course repository (default: this one)")
    args = parser.parse_args(argv)

    if args.command == "notebooks":
        names = args.names or stale(out=args.out)
        if names:
            generate(names, args.out)
            print(f"release notebooks: {' '.join(names)} -> {args.out}")
        return 0

    out = build_bundle(args.html, args.out, root=args.root)
    found = leaks(out, root=args.root)
    found += [
        (f"{coursebook.CHAPTERS_DIR}/{name}", f"imports {module}, which students do not have")
        for name, module in instructor_imports(out / coursebook.CHAPTERS_DIR)
    ]
    if found:
        shutil.rmtree(out)
        for rel, what in found[:50]:
            print(f"LEAK {rel}: {what}", file=sys.stderr)
        print(f"{len(found)} leaks: bundle removed", file=sys.stderr)
        return 1
    count = len(list((out / "notebooks").glob("*/*.ipynb")))
    chapters = len(list((out / coursebook.CHAPTERS_DIR).glob("*.ipynb")))
    print(
        f"Student bundle: {out}/index.html ({count} notebooks in {out}/notebooks, "
        f"{chapters} chapter notebooks in {out}/{coursebook.CHAPTERS_DIR}, no leaks)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
