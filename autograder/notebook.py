"""Reading submissions robustly and rebuilding them on the trusted release notebook.

A submission is untrusted: invalid JSON, non-UTF-8 bytes, nbformat v3, deleted, duplicated or
re-labelled cells and edited metadata all occur. The grader therefore takes the *structure*
(which cells exist, their order, types, grade_ids, points, test code) from the trusted
notebooks in the course directory and only the *source text of solution cells* from the
submission, matched by grade_id.
"""

import copy
import json
import os
import re
import stat
from pathlib import Path

import nbformat

MAX_BYTES = 20 << 20  # larger submissions are treated as empty
MAX_CELL_CHARS = 200_000
STUB = "# YOUR CODE HERE\nraise NotImplementedError()"
HIDDEN = re.compile(
    r"^[ \t]*### BEGIN HIDDEN TESTS[^\n]*\n.*?^[ \t]*### END HIDDEN TESTS[^\n]*(\n|$)",
    re.S | re.M,
)
SOLUTION = re.compile(
    r"^([ \t]*)### BEGIN SOLUTION[^\n]*\n.*?^[ \t]*### END SOLUTION[^\n]*(\n|$)", re.S | re.M
)


def empty_notebook():
    return nbformat.v4.new_notebook()


def _text(value):
    if isinstance(value, str):
        return value[:MAX_CELL_CHARS]
    if isinstance(value, list) and all(isinstance(x, str) for x in value):
        return "".join(value)[:MAX_CELL_CHARS]
    return ""


def nbgrader_meta(cell):
    md = cell.get("metadata") if isinstance(cell, dict) else None
    nb = md.get("nbgrader") if isinstance(md, dict) else None
    return nb if isinstance(nb, dict) else {}


def read_submission(path):
    """Read an untrusted notebook -> (NotebookNode v4, list of problems). Never raises for
    bad content: an unreadable file becomes an empty notebook (every exercise then fails)."""
    problems = []
    if through_symlink(path):
        return empty_notebook(), ["submission is (inside) a symbolic link"]
    try:
        raw = read_regular_file(path, MAX_BYTES + 1)
    except OSError as e:
        return empty_notebook(), [f"cannot read file: {e}"]
    if len(raw) > MAX_BYTES:
        return empty_notebook(), [f"file larger than {MAX_BYTES} bytes"]
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        text = raw.decode("utf-8", errors="replace")
        problems.append("file is not valid UTF-8 (undecodable bytes replaced)")
    try:
        data = json.loads(text)
    except (ValueError, RecursionError):
        return empty_notebook(), problems + ["file is not valid JSON"]
    if not isinstance(data, dict):
        return empty_notebook(), problems + ["file is not a notebook"]
    if data.get("nbformat") == 3 or "worksheets" in data:
        try:
            data = nbformat.convert(nbformat.from_dict(data), 4)
            problems.append("nbformat v3 converted to v4")
        except Exception:
            return empty_notebook(), problems + ["nbformat v3 file could not be converted"]
    nb = empty_notebook()
    cells = data.get("cells")
    if not isinstance(cells, list):
        return nb, problems + ["notebook has no cell list"]
    for cell in cells:
        if not isinstance(cell, dict):
            continue
        kind = cell.get("cell_type")
        src = _text(cell.get("source"))
        meta = nbgrader_meta(cell)
        new = {"cell_type": "raw", "metadata": {}, "source": src}
        if kind in ("code", "markdown"):
            new["cell_type"] = kind
        if kind == "code":
            new.update(outputs=[], execution_count=None)
        if meta:
            new["metadata"]["nbgrader"] = json.loads(json.dumps(meta))
        nb.cells.append(nbformat.from_dict(new))  # plain data; no per-cell schema validation
    return nb, problems


def through_symlink(path, levels=3):
    """True when ``path`` or one of its ``levels - 1`` parent folders is a symlink
    (submitted/<student>/<assignment>/<file>: each of these is student-controlled)."""
    p = Path(os.path.abspath(path))
    for _ in range(levels):
        if p.is_symlink():
            return True
        p = p.parent
    return False


def read_regular_file(path, limit):
    """Read at most ``limit`` bytes of a regular file that is not a symlink (a submitted file may
    point at the instructor's solutions, or be a FIFO/device that never ends)."""
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(f"{path} is not a regular file")
        chunks, size = [], 0
        while size < limit:
            chunk = os.read(fd, min(1 << 20, limit - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)


def is_solution(cell):
    return nbgrader_meta(cell).get("solution") is True


def is_test(cell):
    """An autograded test cell: code, grade: true, not a solution cell."""
    meta = nbgrader_meta(cell)
    return cell.get("cell_type") == "code" and meta.get("grade") is True and not is_solution(cell)


def grade_id(cell):
    gid = nbgrader_meta(cell).get("grade_id")
    return gid if isinstance(gid, str) else None


def test_cells(nb):
    """[(grade_id, points)] of autograded test cells of a trusted notebook, in order."""
    return [(grade_id(c), float(nbgrader_meta(c).get("points", 0))) for c in nb.cells if is_test(c)]


def student_sources(template, submission):
    """{grade_id: source} for the template's solution cells, from the submission.

    The first submission cell carrying a wanted grade_id wins; cells without one, extra
    cells and duplicates are ignored."""
    wanted = {grade_id(c) for c in template.cells if is_solution(c)}
    found = {}
    for cell in submission.cells:
        gid = grade_id(cell)
        if gid in wanted and gid not in found:
            found[gid] = _text(cell.get("source"))
    return found


def rebuild(template, submission):
    """Template (release) notebook with only its solution cells' sources taken from the
    submission. A solution cell missing from the submission keeps the release stub."""
    found = student_sources(template, submission)
    nb = nbformat.from_dict(json.loads(json.dumps(template)))  # a deep copy, 5x faster
    for cell in nb.cells:
        if cell.get("cell_type") == "code":
            cell.outputs = []
            cell.execution_count = None
        if is_solution(cell) and grade_id(cell) in found:
            cell.source = found[grade_id(cell)]
    return nb


def solution_code(nb):
    """Sources of the code solution cells (the student's code), in notebook order."""
    return [c.source for c in nb.cells if is_solution(c) and c.cell_type == "code"]


def is_given(cell):
    """A read-only code cell the notebook gives (imports, helpers): locked, not a test."""
    meta = nbgrader_meta(cell)
    return cell.get("cell_type") == "code" and meta.get("locked") is True and not is_test(cell)


def graded_code(nb):
    """What the worker runs before the checks, in notebook order: the given (locked) cells and
    the solution cells. Call on a rebuilt notebook: its given cells are the trusted template's,
    never the student's copy."""
    return [c.source for c in nb.cells if c.cell_type == "code" and (is_solution(c) or is_given(c))]


def strip_hidden(source):
    return HIDDEN.sub("", source)


def strip_solution(source):
    return SOLUTION.sub(lambda m: m.group(1) + STUB.replace("\n", "\n" + m.group(1)) + "\n", source)


def release_from_source(source_nb):
    """A release-like notebook made from the source in memory: solution regions replaced by
    the stub, hidden tests removed, outputs cleared (used when release/ does not exist)."""
    nb = copy.deepcopy(source_nb)
    for cell in nb.cells:
        if is_solution(cell):
            cell.source = strip_solution(cell.source)
        if cell.cell_type == "code":
            cell.source = strip_hidden(cell.source)
            cell.outputs = []
            cell.execution_count = None
    return nb


def read_trusted(path):
    return nbformat.read(str(path), as_version=4)


class Course:
    """Paths of an nbgrader course root (the directory holding nbgrader_config.py)."""

    def __init__(self, root="."):
        self.root = Path(root).resolve()

    def source_notebooks(self, assignment):
        return sorted((self.root / "source" / assignment).glob("*.ipynb"))

    def template(self, assignment, notebook):
        """Trusted release version of a notebook (release/ if generated, else from source/)."""
        rel = self.root / "release" / assignment / f"{notebook}.ipynb"
        if rel.exists():
            return read_trusted(rel)
        return release_from_source(
            read_trusted(self.root / "source" / assignment / f"{notebook}.ipynb")
        )

    def notebook_name(self, assignment, path):
        """The source notebook of ``assignment`` that the submitted file ``path`` answers."""
        names = [p.stem for p in self.source_notebooks(assignment)]
        if not names:
            raise FileNotFoundError(f"no source/{assignment}/*.ipynb under {self.root}")
        stem = Path(path).stem
        return stem if stem in names else names[0]

    def submissions(self, assignment, student=None):
        """[(student_id, notebook_dir)] under submitted/."""
        base = self.root / "submitted"
        out = []
        for d in sorted(base.glob(f"*/{assignment}")) if base.exists() else []:
            sid = d.parent.name
            if d.is_dir() and (student is None or sid == student):
                out.append((sid, d))
        return out
