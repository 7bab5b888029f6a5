"""Reading submissions robustly and rebuilding them on the trusted release notebook.

A submission is untrusted: invalid JSON, non-UTF-8 bytes, nbformat v3, deleted, duplicated or
re-labelled cells and edited metadata all occur. The grader therefore takes the *structure*
(which cells exist, their order, types, grade_ids, points, test code) from the trusted
notebooks in the course directory and only the *source text of solution cells* from the
submission, matched by grade_id.
"""

import collections
import copy
import functools
import json
import os
import re
import stat
import sys
from pathlib import Path

import nbformat
from nbformat.corpus.words import generate_corpus_id
from traitlets import Integer
from traitlets.config import Config, Configurable
from traitlets.config.loader import PyFileConfigLoader

MAX_BYTES = 20 << 20  # default of SubmissionLimits.max_bytes
MAX_CELL_CHARS = 200_000
STUB = "# YOUR CODE HERE\nraise NotImplementedError()"
HIDDEN = re.compile(
    r"^[ \t]*### BEGIN HIDDEN TESTS[^\n]*\n.*?^[ \t]*### END HIDDEN TESTS[^\n]*(\n|$)",
    re.S | re.M,
)
SOLUTION = re.compile(
    r"^([ \t]*)### BEGIN SOLUTION[^\n]*\n.*?^[ \t]*### END SOLUTION[^\n]*(\n|$)", re.S | re.M
)


class SubmissionLimits(Configurable):
    """Limits on a submitted file, set in the course's nbgrader_config.py
    (``c.SubmissionLimits.max_bytes``); read by ``nbgrader autograde`` and the batch command."""

    max_bytes = Integer(
        MAX_BYTES,
        help="Largest submitted notebook file read (bytes); a larger one is flagged and graded "
        "as empty (its outputs are usually what makes it large).",
    ).tag(config=True)


def empty_notebook():
    return nbformat.v4.new_notebook()


def size_text(n):
    for unit, size in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= size:
            return f"{n / size:.1f} {unit}".replace(".0 ", " ")
    return f"{n} B"


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


def read_submission(path, max_bytes=MAX_BYTES):
    """Read an untrusted notebook -> (NotebookNode v4, list of problems). Never raises for
    bad content: an unreadable file becomes an empty notebook (every exercise then fails), and
    each problem (in Korean, for the student and the instructor) says what to do."""
    problems = []
    name = Path(path).name
    if through_symlink(path):
        return empty_notebook(), [
            f"{name}이(가) 심볼릭 링크라서 읽지 않았습니다(빈 답안으로 채점). "
            "노트북 파일 자체를 다시 제출하세요."
        ]
    try:
        raw = read_regular_file(path, max_bytes + 1)
    except OSError as e:
        return empty_notebook(), [
            f"{name}을(를) 읽을 수 없었습니다({e.strerror or e}; 빈 답안으로 채점). "
            "노트북 파일을 다시 제출하세요."
        ]
    if len(raw) > max_bytes:
        return empty_notebook(), [
            f"{name}이(가) 제출 파일 크기 제한 {size_text(max_bytes)}보다 커서 읽지 않았습니다"
            "(빈 답안으로 채점). 셀 출력을 모두 지우고(Edit → Clear All Outputs) 저장한 뒤 "
            "다시 제출하세요."
        ]
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        text = raw.decode("utf-8", errors="replace")
        problems.append(
            f"{name}에 UTF-8이 아닌 바이트가 있어 그 글자를 \ufffd로 바꿔 읽었습니다. "
            "Jupyter에서 다시 저장해 제출하세요."
        )
    try:
        data = json.loads(text)
    except (ValueError, RecursionError) as e:
        where = f"({e.lineno}행 {e.colno}열)" if isinstance(e, json.JSONDecodeError) else ""
        return empty_notebook(), problems + [
            f"{name}이(가) 올바른 JSON이 아니라서{where} 노트북으로 읽을 수 없었습니다(빈 답안으로 "
            "채점). Jupyter에서 열리는지 확인하고 다시 저장해 제출하세요."
        ]
    if not isinstance(data, dict):
        return empty_notebook(), problems + [
            f"{name}이(가) Jupyter 노트북 형식이 아닙니다(빈 답안으로 채점). "
            "배포된 노트북에 답을 적어 제출하세요."
        ]
    if data.get("nbformat") == 3 or "worksheets" in data:
        try:
            data = nbformat.convert(nbformat.from_dict(data), 4)
            problems.append(f"{name}은(는) 옛 노트북 형식(nbformat 3)이라 4로 바꿔 채점했습니다.")
        except Exception:
            return empty_notebook(), problems + [
                f"{name}은(는) 옛 노트북 형식(nbformat 3)인데 바꿀 수 없었습니다(빈 답안으로 "
                "채점). 배포된 노트북에 답을 옮겨 제출하세요."
            ]
    nb = empty_notebook()
    cells = data.get("cells")
    if not isinstance(cells, list):
        return nb, problems + [
            f"{name}에 셀 목록이 없습니다(빈 답안으로 채점). 배포된 노트북에 답을 적어 제출하세요."
        ]
    for cell in cells:
        if not isinstance(cell, dict):
            continue
        kind = cell.get("cell_type")
        src = _text(cell.get("source"))
        meta = nbgrader_meta(cell)
        new = {"cell_type": "raw", "id": new_cell_id(), "metadata": {}, "source": src}
        if kind in ("code", "markdown"):
            new["cell_type"] = kind
        if kind == "code":
            new.update(outputs=[], execution_count=None)
        if meta:
            new["metadata"]["nbgrader"] = json.loads(json.dumps(meta))
        nb.cells.append(nbformat.from_dict(new))  # plain data; no per-cell schema validation
    return nb, problems


def new_cell_id():
    """A fresh nbformat 4.5 cell id (a submission's own ids may be missing or duplicated), made
    the way nbformat.v4.new_raw_cell makes one, without validating a whole cell for it."""
    return generate_corpus_id()


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


def match_cells(template, submission):
    """({grade_id: source}, problems): the student's source of each solution cell of the
    template, and what in the submission's graded cells did not match the template (Korean).

    A solution cell the submission lacks (deleted, or its grade_id renamed) keeps the release
    stub and is flagged. A duplicated solution cell is graded from its one filled copy (a copy
    that differs from the release stub); when several are filled, from the last of them in
    notebook order (what running every cell from the top leaves defined); both are noted.
    Test cells are always the template's: a missing or duplicated one is noted, with no effect
    on the grade. Cells without a grade_id and extra cells are ignored."""
    if not submission.cells:  # unreadable file: read_submission has said so
        return {}, []
    copies = collections.defaultdict(list)
    for cell in submission.cells:
        copies[grade_id(cell)].append(_text(cell.get("source")))
    known = {grade_id(c) for c in template.cells}
    found, problems = {}, []
    for cell in template.cells:
        gid = grade_id(cell)
        versions = copies.get(gid, [])
        if is_solution(cell) and cell.get("cell_type") == "code":
            if not versions:
                problems.append(
                    f"답안 셀 '{gid}'이(가) 제출본에 없습니다(셀을 지웠거나 grade_id를 "
                    "바꿨습니다). 이 셀은 빈 답안으로 채점했습니다. 배포된 노트북의 그 셀에 "
                    "답을 옮겨 다시 제출하세요."
                )
                continue
            filled = [v for v in versions if v.strip() != cell.source.strip()]
            found[gid] = (filled or versions)[-1]
            if len(versions) > 1:
                which = (
                    "채워진 하나로"
                    if len(filled) == 1
                    else "채워진 것 중 마지막 셀로"
                    if filled
                    else "빈 답안으로"
                )
                problems.append(
                    f"답안 셀 '{gid}'이(가) {len(versions)}개 있어(셀 복제) {which} 채점했습니다. "
                    "셀을 하나만 남겨 다시 제출하세요."
                )
        elif is_solution(cell):  # a written answer: graded by hand, never by the engine
            if versions:
                found[gid] = versions[-1]
        elif is_test(cell) and len(versions) != 1:
            what = (
                "없습니다(셀을 지웠거나 grade_id를 바꿨습니다)"
                if not versions
                else (f"{len(versions)}개 있습니다")
            )
            problems.append(
                f"테스트 셀 '{gid}'이(가) 제출본에 {what}. 채점은 배포본의 테스트 셀로 했으므로 "
                "점수에는 영향이 없습니다."
            )
    strangers = sorted(
        gid
        for gid in copies
        if gid is not None
        and gid not in known
        and any(is_solution(c) or is_test(c) for c in submission.cells if grade_id(c) == gid)
    )
    if strangers:
        names = ", ".join(f"'{gid[:40]}'" for gid in strangers[:5])
        more = f" 외 {len(strangers) - 5}개" if len(strangers) > 5 else ""
        problems.append(
            f"배포본에 없는 grade_id의 채점 셀({names}{more})은 채점하지 않았습니다. 답은 배포된 "
            "노트북의 답안 셀에 적으세요."
        )
    return found, problems


def student_sources(template, submission):
    """{grade_id: source} for the template's solution cells, from the submission (see
    match_cells)."""
    return match_cells(template, submission)[0]


def rebuild(template, submission):
    """Template (release) notebook with only its solution cells' sources taken from the
    submission (see match_cells). A solution cell missing from the submission keeps the release
    stub."""
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


def public_tests(nb):
    """{grade_id: source} of the test cells of a trusted notebook ``nb`` (a release template, or
    a submission rebuilt on one) as the student sees them (hidden parts removed): each is run
    against the submission too (judge)."""
    return {grade_id(c): strip_hidden(c.source) for c in nb.cells if is_test(c)}


def grading_job(nb):
    """What a judge grades of a notebook rebuilt on its trusted template (:func:`rebuild`; see
    protocol.py, "grade"): the test cells' grade_ids, the cells the worker runs, the student's
    cells alone and the test cells' public code. The batch command, ``nbgrader autograde``, a
    Dask worker and ``pytest --notebook`` all grade this same job."""
    return {
        "grade_ids": [gid for gid, _ in test_cells(nb)],
        "cells": graded_code(nb),
        "solutions": solution_code(nb),
        "public": public_tests(nb),
    }


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
    """A trusted notebook (release or source). Read and validated once per version of the file
    (a batch grading reads each release notebook once per submission); every call returns a
    copy of its own."""
    st = os.stat(path)
    return nbformat.from_dict(json.loads(trusted_json(str(path), st.st_mtime_ns, st.st_size)))


@functools.lru_cache(maxsize=64)
def trusted_json(path, mtime_ns, size):
    return json.dumps(nbformat.read(path, as_version=4))


def course_config(root, required=True):
    """The traitlets Config of the course (its nbgrader_config.py, which sets c.SandboxLimits).
    Without one: exit with a hint (the commands run in exercises/), or an empty Config when not
    ``required``."""
    path = Path(root) / "nbgrader_config.py"
    if not path.is_file():
        if required:
            sys.exit(f"no nbgrader_config.py in {root} (run from exercises/)")
        return Config()
    return PyFileConfigLoader(path.name, path=str(path.parent)).load_config()


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

    def notebook_names(self, assignment):
        return [p.stem for p in self.source_notebooks(assignment)]

    def notebook_name(self, assignment, path):
        """The source notebook of ``assignment`` that the submitted file ``path`` answers."""
        names = self.notebook_names(assignment)
        if not names:
            raise FileNotFoundError(f"no source/{assignment}/*.ipynb under {self.root}")
        stem = Path(path).stem
        return stem if stem in names else names[0]

    def submitted_folder(self, assignment, student):
        return self.root / "submitted" / student / assignment

    def submissions(self, assignment, student=None):
        """[(student_id, notebook_dir)] under submitted/."""
        base = self.root / "submitted"
        out = []
        for d in sorted(base.glob(f"*/{assignment}")) if base.exists() else []:
            sid = d.parent.name
            if d.is_dir() and (student is None or sid == student):
                out.append((sid, d))
        return out

    def submission(self, assignment, student, notebook, template=None, max_bytes=MAX_BYTES):
        """(submitted notebook, problems) of one student's notebook: the file found by
        :func:`locate`, read by :func:`read_submission` and matched against the trusted
        ``template`` by :func:`match_cells` (all their problems, in that order). A notebook
        that is not there is an empty one, flagged."""
        folder = self.submitted_folder(assignment, student)
        path, problems = locate(folder, notebook, self.notebook_names(assignment))
        if path is None:
            return empty_notebook(), problems
        nb, read_problems = read_submission(path, max_bytes)
        template = template if template is not None else self.template(assignment, notebook)
        return nb, problems + read_problems + match_cells(template, nb)[1]


def locate(folder, name, names):
    """(path or None, problems): the file in a student's submission ``folder`` that answers
    notebook ``name`` of an assignment whose notebooks are ``names``.

    ``<name>.ipynb`` when it is there. Otherwise a notebook saved under another file name is
    taken when that is unambiguous (noted): the only unknown ``.ipynb`` whose name contains
    ``name`` (``masking (1).ipynb``, ``Masking-Copy1.ipynb``), or the only unknown ``.ipynb``
    when ``name`` is the only notebook missing. Else None, flagged with the files found."""
    folder = Path(folder)
    exact = folder / f"{name}.ipynb"
    if exact.exists() or exact.is_symlink():
        return exact, []
    present = sorted(p for p in folder.glob("*.ipynb") if not p.name.startswith("."))
    others = [p for p in present if p.stem not in names]
    missing = [n for n in names if not (folder / f"{n}.ipynb").exists()]
    like = [p for p in others if name.lower() in p.stem.lower()]
    chosen = None
    if len(like) == 1:
        chosen = like[0]
    elif not like and len(others) == 1 and missing == [name]:
        chosen = others[0]
    if chosen is not None:
        return chosen, [
            f"{name}.ipynb 대신 '{chosen.name}'(이)라는 이름으로 제출되어 그 파일을 {name}.ipynb로 "
            f"보고 채점했습니다. 다음부터는 파일 이름을 바꾸지 말고 {name}.ipynb로 제출하세요."
        ]
    listing = ", ".join(f"'{p.name}'" for p in (like or others))
    if like:
        return None, [
            f"{name}.ipynb가 없고 비슷한 이름의 노트북이 여러 개({listing}) 있어 어느 것을 "
            f"채점할지 알 수 없습니다(0점). 하나만 {name}.ipynb라는 이름으로 다시 제출하세요."
        ]
    found = f" 폴더에 있는 노트북: {listing}." if others else ""
    return None, [
        f"{name}.ipynb가 제출되지 않았습니다(0점).{found} 배포된 노트북을 {name}.ipynb라는 "
        "이름 그대로 제출하세요."
    ]
