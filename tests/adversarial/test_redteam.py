"""Red team: hostile submissions (tests/redteam/*.py) graded by the real engine in its sandbox.

One temporary copy of the repo per test module, with canary strings planted in solutions/, the
hidden checks and the source notebooks. Every assignment is graded once with the batch CLI
(2 sandboxes), feedback is generated, and then each hostile student is checked:

- it scores no more than the blank release notebook;
- the correct student keeps full marks, the blank one zero, and the gradebook stays intact;
- no canary reaches any student-visible output (release/, autograded/, feedback/, CLI output);
- nothing connected to a socket opened on the host, nothing was written outside the sandbox,
  no process of the sandbox uids is left behind.

Attacks with an honest control (specs with ``honest``/``HONEST``, issue #16): the control is honest
code with a real flaw (or the stub left blank where the attack takes a forbidden shortcut), the
attack is the control plus a trick. Both are graded in the same batch run; the attack must score no
more than its control in total and pass no test cell that its control fails, and no host path may
reach its student-visible output.

Hostile code only ever runs inside the sandbox: the fixture first verifies the sandbox's limits
with a probe, and the CLI refuses to grade without bubblewrap (no unsafe flag is ever passed).
"""

import hashlib
import json
import os
import re
import secrets
import shutil
import socket
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import nbformat
import pytest

from autograder import notebook as nbio
from tests.support.book import release as release_tool
from tests.support.redteam_specs import (
    REDTEAM,
    SPEC,
    SPECS,
    WRONG,
    Solutions,
    is_controlled,
    load_spec,
    spec_cells,
    substitute,
)

REPO = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
WALL_S = 8  # per check; the good students need well under a second per check
ASSIGNMENTS = ("softmax", "masking", "multihead", "models", "decoding")


PERSIST = [p for p in SPECS if getattr(SPEC[p], "NEXT_STUDENT", False)]
READERS = [p for p in PERSIST if hasattr(SPEC[p], "READER")]  # the next student reads leftovers
CONTROLLED = [p for p in SPECS if is_controlled(p) and p not in PERSIST]
# persistence attacks get their own sequential test; attacks with a control their own comparison
BATCH = [p for p in SPECS if p not in PERSIST and p not in CONTROLLED]
# Issue #16's attack classes: 1 forbidden shortcut, 2 probes in the student's process, 3 structure
# taken at the module's word, 4 seeded randomness, 5 sandbox hygiene. At least 3 attacks with a
# control per class on each assignment where the class has a target: decoding forbids no
# ready-made function (1) and grades no module (3); multihead has no seeded check but the shared
# dropout seed, which only the right code passes (4).
COVERAGE = {
    (a, k): 3
    for a, classes in (
        ("multihead", (1, 2, 3, 5)),
        ("models", (1, 2, 3, 4, 5)),
        ("decoding", (2, 4, 5)),
    )
    for k in classes
}


def sid(path):
    return "x_" + path.stem


def control_sid(a, cells):
    """Student id of an honest control: controls with the same cells are graded once."""
    digest = hashlib.sha1(json.dumps([a, sorted(cells.items())]).encode()).hexdigest()
    return "y_" + digest[:12]


# ------------------------------------------------------------------ course set-up


def _copy_repo(dst):
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    for name in ("autograder", "solutions"):
        shutil.copytree(REPO / name, dst / name, ignore=ignore)
    (dst / "exercises").mkdir()
    shutil.copytree(REPO / "exercises" / "source", dst / "exercises" / "source", ignore=ignore)
    shutil.copy(REPO / "exercises" / "nbgrader_config.py", dst / "exercises" / "nbgrader_config.py")


def _plant_canaries(repo, tokens):
    for a in ASSIGNMENTS:
        for key, path in (
            ("sol", repo / "solutions" / f"{a}.py"),
            ("chk", repo / "autograder" / "checks" / f"{a}.py"),
        ):
            with open(path, "a", encoding="utf-8") as f:
                f.write(f'\n# {tokens[key]}\n_CANARY = "{tokens[key]}"\n')
        nb_path = repo / "exercises" / "source" / a / f"{a}.ipynb"
        nb = nbformat.read(nb_path, as_version=4)
        for cell in nb.cells:
            cell.source = re.sub(
                r"^([ \t]*)### BEGIN SOLUTION\n",
                lambda m: f"{m.group(1)}### BEGIN SOLUTION\n{m.group(1)}# {tokens['nb']}\n",
                cell.source,
                flags=re.M,
            )
            cell.source = cell.source.replace(
                "### BEGIN HIDDEN TESTS\n", f"### BEGIN HIDDEN TESTS\n# {tokens['hid']}\n"
            )
        nbformat.write(nb, nb_path)


def _env(repo):
    env = dict(os.environ)
    env["PYTHONPATH"] = str(repo)
    env["PATH"] = f"{BIN}{os.pathsep}{env.get('PATH', '')}"
    env.pop("AUTOGRADER_UNSAFE_NO_SANDBOX", None)
    return env


def _run(cmd, course, env, timeout):
    t0 = time.monotonic()
    r = subprocess.run(
        cmd, cwd=course, env=env, capture_output=True, text=True, timeout=timeout, errors="replace"
    )
    return r, time.monotonic() - t0


def _verify_sandbox(repo, course, port):
    """Run a probe in the real sandbox: limits set, no repo/course visible, no network."""
    from autograder.engines.local import Engine

    probe = load_spec(REDTEAM / "probe_checks" / "probe.py")
    cell = probe.PROBE.replace("__REPO__", str(repo)).replace("__COURSE__", str(course))
    cell = cell.replace("__PORT__", str(port))
    eng = Engine(jobs=1, checks_dir=REDTEAM / "probe_checks", assignments=["probe"])
    try:
        # trusted code, run as a given cell: no student solution for the policy to read (it
        # would rightly fail a solution cell that imports resource and socket)
        report = eng.submit("probe", ["test_limits"], [cell], []).result()
    finally:
        eng.close()
    verdict = report.verdicts["test_limits"]
    assert verdict.passed, f"sandbox not safe, refusing to run hostile code: {verdict.message}"


def _release_cells(nb):
    return {nbio.grade_id(c): c for c in nb.cells if nbio.is_solution(c)}


def _write_submission(course, a, student, nb):
    folder = course / "submitted" / student / a
    folder.mkdir(parents=True)
    nbformat.write(nb, folder / f"{a}.ipynb")
    return folder


def _sandbox_processes():
    """Host processes left running as a sandbox uid that no live sandbox holds (another engine
    grading on this machine at the same time keeps its uids locked: its processes are not
    ours to count)."""
    from autograder.judge.sandbox import UIDS, uid_in_use

    out = []
    for p in Path("/proc").iterdir():
        if not p.name.isdigit():
            continue
        try:
            status = (p / "status").read_text()
        except OSError:
            continue
        m = re.search(r"^Uid:\s+(\d+)", status, re.M)
        if m and int(m.group(1)) in UIDS and not uid_in_use(int(m.group(1))):
            out.append(int(p.name))
    return out


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    from autograder.judge.bwrap import check_bwrap

    check_bwrap()  # raises SandboxUnavailable (test error, not a skip) without bubblewrap
    tmp = tmp_path_factory.mktemp("redteam")
    repo = tmp / "repo"
    course = repo / "exercises"
    mark = tmp / "mark"
    mark.mkdir()
    _copy_repo(repo)
    tokens = {k: f"CANARY-{k.upper()}-{secrets.token_hex(8)}" for k in ("sol", "chk", "nb", "hid")}
    _plant_canaries(repo, tokens)
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(16)
    listener.setblocking(False)
    port = listener.getsockname()[1]
    env = _env(repo)
    ctx = {"repo": repo, "course": course, "port": port, "mark": mark}

    release_tool.nbgrader_generate([(course, a) for a in ASSIGNMENTS], course, env)
    _verify_sandbox(repo, course, port)

    specs = {p: SPEC[p] for p in BATCH}
    controls = {}
    for a in ASSIGNMENTS:
        release = nbformat.read(course / "release" / a / f"{a}.ipynb", as_version=4)
        source = nbformat.read(course / "source" / a / f"{a}.ipynb", as_version=4)
        good = json.loads(json.dumps(release))
        good = nbformat.from_dict(good)
        src_cells = _release_cells(source)
        for gid, cell in _release_cells(good).items():
            cell.source = "\n".join(
                ln for ln in src_cells[gid].source.splitlines() if "CANARY" not in ln
            )
        _write_submission(course, a, "good", good)
        _write_submission(course, a, "zz_good_last", good)  # graded after every hostile one
        _write_submission(course, a, "blank", release)
        sol = _solutions(good)
        for path in CONTROLLED:
            if SPEC[path].ASSIGNMENT != a:
                continue
            honest = spec_cells(SPEC[path], "honest", sol)
            controls[path] = control_sid(a, honest)
            for student, cells in (
                (sid(path), spec_cells(SPEC[path], "attack", sol)),
                (controls[path], honest),
            ):
                folder = course / "submitted" / student / a
                if folder.exists():
                    continue  # a control shared with an earlier attack
                nb = nbformat.from_dict(json.loads(json.dumps(release)))
                slots = _release_cells(nb)
                for gid, src in cells.items():
                    slots[gid].source = substitute(src, a, ctx)
                _write_submission(course, a, student, nb)
        for path, spec in specs.items():
            if spec.ASSIGNMENT != a:
                continue
            nb = nbformat.from_dict(json.loads(json.dumps(release)))
            cells = _release_cells(nb)
            for gid, src in spec.CELLS.items():
                cells[gid].source = substitute(src, a, ctx)
            folder = course / "submitted" / sid(path) / a
            folder.mkdir(parents=True)
            if not getattr(spec, "SYMLINK", False):
                data = (
                    spec.build(json.loads(nbformat.writes(nb)), ctx)
                    if hasattr(spec, "build")
                    else nbformat.writes(nb).encode()
                )
                (folder / f"{a}.ipynb").write_bytes(data)
            if hasattr(spec, "extra"):
                spec.extra(folder, ctx)

    out = {"tokens": tokens, "course": course, "repo": repo, "mark": mark, "cli": {}, "times": {}}
    out["controls"] = controls
    out["host_paths"] = _host_paths(tmp)
    # one batch command grades every assignment, as an instructor grading a week would
    cmd = [sys.executable, "-m", "autograder", "grade", *ASSIGNMENTS, "--jobs", "2"]
    r, dt = _run(cmd + ["--wall", str(WALL_S), "--quiet"], course, env, 600 * len(ASSIGNMENTS))
    out["cli"]["grade"], out["times"]["grade"] = r, dt
    for a in ASSIGNMENTS:
        fb, _ = _run([str(BIN / "nbgrader"), "generate_feedback", a, "--force"], course, env, 600)
        out["cli"][a + "_feedback"] = fb
    connections = []
    while True:
        try:
            conn, _ = listener.accept()
        except BlockingIOError:
            break
        connections.append(conn.recv(100))
        conn.close()
    listener.close()
    out["connections"] = connections
    time.sleep(0.5)
    out["leftover"] = _sandbox_processes()
    out["scores"] = _scores(course)
    out["items"] = _item_scores(course)
    return out


def _host_paths(tmp):
    """Host paths that no student may learn: the course copy, this checkout, the venv."""
    paths = {str(tmp), str(REPO), str(BIN.parent)}
    return sorted(p for p in paths if len(Path(p).parts) > 2)  # never '/usr' or '/tmp' alone


def _item_scores(course):
    """{(assignment, student): {test cell grade_id: (score, max_score)}}."""
    from nbgrader.api import Gradebook

    items = {}
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gb:
        for a in ASSIGNMENTS:
            for sub in gb.assignment_submissions(a):
                got = items.setdefault((a, sub.student.id), {})
                for nb in sub.notebooks:
                    for grade in nb.grades:
                        got[grade.name] = (grade.score, grade.max_score)
    return items


def _scores(course):
    from nbgrader.api import Gradebook

    scores = {}
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gb:
        for a in ASSIGNMENTS:
            for sub in gb.assignment_submissions(a):
                scores[(a, sub.student.id)] = (sub.score, sub.max_score)
    return scores


def _student_files(course, student):
    for top in ("autograded", "feedback"):
        base = course / top / student
        if base.exists():
            for p in base.rglob("*"):
                if p.is_file():
                    yield p


def _leaks(data, tokens):
    return [t for t in tokens.values() if t.encode() in data]


# ------------------------------------------------------------------ tests


def test_redteam_has_enough_hostile_submissions():
    assert len(SPECS) >= 25
    kinds = {SPEC[p].ASSIGNMENT for p in SPECS}
    assert kinds == set(ASSIGNMENTS)


def test_every_attack_class_has_attacks_with_controls():
    """Issue #16: at least 3 attacks per class on each of multihead, models and decoding."""
    count = {}
    for p in CONTROLLED + READERS:
        key = (SPEC[p].ASSIGNMENT, SPEC[p].CLASS)
        count[key] = count.get(key, 0) + 1
    short = {k: count.get(k, 0) for k, n in COVERAGE.items() if count.get(k, 0) < n}
    assert not short, f"(assignment, class): attacks with a control {short}"


def test_cli_succeeds_and_is_fast(graded):
    r = graded["cli"]["grade"]
    assert r.returncode == 0, r.stderr[-3000:]
    for a in ASSIGNMENTS:
        assert f"과제 '{a}':" in r.stdout, r.stdout[-3000:]  # its summary
        fb = graded["cli"][a + "_feedback"]
        assert fb.returncode == 0, fb.stderr[-3000:]
    assert graded["times"]["grade"] < 150 * len(ASSIGNMENTS), graded["times"]
    assert len(r.stdout) + len(r.stderr) < 200_000


@pytest.mark.parametrize("a", ASSIGNMENTS)
def test_reference_and_blank_students_unaffected(graded, a):
    assert graded["scores"][(a, "good")] == (10.0, 10.0), graded["scores"]
    assert graded["scores"][(a, "zz_good_last")] == (10.0, 10.0), graded["scores"]
    assert graded["scores"][(a, "blank")][0] == 0.0


@pytest.mark.parametrize("a", ASSIGNMENTS)
def test_gradebook_intact(graded, a):
    import sqlite3

    db = graded["course"] / "gradebook.db"
    con = sqlite3.connect(db)
    try:
        assert con.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        tables = {r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        assert "pwned" not in tables
    finally:
        con.close()
    expected = {"good", "blank", "zz_good_last"} | {
        sid(p) for p in BATCH + CONTROLLED if SPEC[p].ASSIGNMENT == a
    }
    expected |= {graded["controls"][p] for p in CONTROLLED if SPEC[p].ASSIGNMENT == a}
    got = {s for (aa, s) in graded["scores"] if aa == a}
    assert got == expected
    assert all(mx == 10.0 for (aa, _), (_, mx) in graded["scores"].items() if aa == a)


@pytest.mark.parametrize("path", BATCH, ids=lambda p: p.stem)
def test_hostile_scores_no_more_than_blank(graded, path):
    a = load_spec(path).ASSIGNMENT
    assert (a, sid(path)) in graded["scores"], f"{path.stem} is missing from the gradebook"
    score, max_score = graded["scores"][(a, sid(path))]
    assert max_score == 10.0
    assert score <= graded["scores"][(a, "blank")][0], f"{path.stem} scored {score}"


@pytest.mark.parametrize("path", BATCH, ids=lambda p: p.stem)
def test_hostile_leaks_no_canary(graded, path):
    leaks = {}
    for p in _student_files(graded["course"], sid(path)):
        found = _leaks(p.read_bytes(), graded["tokens"])
        if found:
            leaks[str(p.relative_to(graded["course"]))] = found
    assert not leaks


@pytest.mark.parametrize("path", CONTROLLED, ids=lambda p: p.stem)
def test_attack_scores_no_more_than_its_honest_control(graded, path):
    """The trick gains nothing: no test cell that the honest control fails passes."""
    spec = SPEC[path]
    a = spec.ASSIGNMENT
    attack = graded["items"].get((a, sid(path)))
    control = graded["items"].get((a, graded["controls"][path]))
    assert attack and control, f"{path.stem} or its control is missing from the gradebook"
    wrong = [g for g in getattr(spec, "CONTROL_FAILS", ()) if control[g][0] != 0]
    assert not wrong, f"the honest control should fail {wrong} (the comparison means nothing)"
    raised = {
        g: f"{control[g][0]:g} -> {score:g}"
        for g, (score, _) in attack.items()
        if score > control.get(g, (0.0, 0.0))[0]
    }
    total = sum(s for s, _ in attack.values()), sum(s for s, _ in control.values())
    assert not raised and total[0] <= total[1], f"attack beats its control: {raised}, {total}"


@pytest.mark.parametrize("path", CONTROLLED, ids=lambda p: p.stem)
def test_no_host_path_reaches_the_student(graded, path):
    """Nothing a student sees (feedback, autograded notebook) names a host path."""
    found = {}
    for student in (sid(path), graded["controls"][path]):
        for p in _student_files(graded["course"], student):
            data = p.read_bytes()
            hits = [h for h in graded["host_paths"] if h.encode() in data]
            if hits:
                found[str(p.relative_to(graded["course"]))] = hits
    assert not found


def test_no_canary_in_release_or_cli_output(graded):
    for p in (graded["course"] / "release").rglob("*"):
        if p.is_file():
            assert not _leaks(p.read_bytes(), graded["tokens"]), p
    for r in graded["cli"].values():
        assert not _leaks((r.stdout + r.stderr).encode(), graded["tokens"])
    for student in ("good", "blank", "zz_good_last"):
        for p in _student_files(graded["course"], student):
            assert not _leaks(p.read_bytes(), graded["tokens"]), p


def test_no_network_connection_reached_the_host(graded):
    assert graded["connections"] == []


def test_nothing_written_outside_the_sandbox(graded):
    assert list(graded["mark"].iterdir()) == []
    pwned = [p for p in graded["repo"].rglob("*pwned*")]
    assert pwned == []
    assert not Path("/pwned_root").exists()


def test_no_sandbox_process_left_behind(graded):
    assert graded["leftover"] == []


def test_feedback_escapes_html(graded):
    html = graded["course"] / "feedback" / "x_xss_feedback" / "softmax" / "softmax.html"
    text = html.read_text(encoding="utf-8")
    assert "xss-redteam" in text  # the message is shown ...
    assert '<script>alert("xss-redteam")' not in text  # ... but escaped
    assert "<img src=x" not in text


def test_hostile_failures_are_explained(graded):
    """Feedback of a crashing or hanging submission says what happened (not a blank page)."""
    course = graded["course"]
    for name, words in (("x_infinite_loop", "시간 제한"), ("x_os_exit", "실패")):
        nb = nbformat.read(course / "autograded" / name / "softmax" / "softmax.ipynb", as_version=4)
        text = json.dumps([c.get("outputs", []) for c in nb.cells], ensure_ascii=False)
        assert words in text, (name, text[:2000])


# ------------------------------------------------------------------ persistence across students


@pytest.fixture(scope="module")
def sequential_engine():
    """One sandbox (jobs=1): every notebook is graded in the same container, one after another."""
    from autograder.engines.local import Engine
    from autograder.judge.sandbox import SandboxLimits

    eng = Engine(jobs=1, limits=SandboxLimits(wall_s=WALL_S))
    yield eng
    eng.close()


def _notebook_cells(a, spec_cells, ctx):
    src = nbformat.read(REPO / "exercises" / "source" / a / f"{a}.ipynb", as_version=4)
    rel = nbio.release_from_source(src)
    cells = _release_cells(rel)
    for gid, code in spec_cells.items():
        cells[gid].source = substitute(code, a, ctx)
    return [gid for gid, _ in nbio.test_cells(rel)], rel, src


@pytest.mark.parametrize("path", [p for p in PERSIST if p not in READERS], ids=lambda p: p.stem)
def test_hostile_cannot_affect_the_next_student(sequential_engine, tmp_path, path):
    """Grade the hostile notebook, then a correct one in the same sandbox: full marks."""
    spec = load_spec(path)
    a = spec.ASSIGNMENT
    ctx = {"repo": tmp_path, "course": tmp_path, "port": 9, "mark": tmp_path}
    ids, hostile, src = _notebook_cells(a, spec.CELLS, ctx)
    template = nbio.release_from_source(src)
    report, _ = sequential_engine.grade_notebook(a, template, hostile)
    assert not any(v.passed for v in report.verdicts.values())
    for _ in range(2):
        report, _ = sequential_engine.grade_notebook(a, template, src)
        failed = {g: v.message[:300] for g, v in report.verdicts.items() if not v.passed}
        assert not failed


def _solutions(nb):
    """Solutions of a notebook whose solution cells hold the reference (markers dropped)."""
    return Solutions(
        (gid, "\n".join(ln for ln in cell.source.splitlines() if "### " not in ln))
        for gid, cell in _release_cells(nb).items()
    )


@pytest.mark.parametrize("path", READERS, ids=lambda p: p.stem)
def test_next_student_finds_nothing_left_behind(sequential_engine, tmp_path, path):
    """A hostile student leaves something in the sandbox for the next one (a collaborator graded
    next in the same sandbox), whose code is right only if it finds it: the next student must
    pass nothing, and a correct student after both keeps full marks."""
    spec = SPEC[path]
    a = spec.ASSIGNMENT
    ctx = {"repo": tmp_path, "course": tmp_path, "port": 9, "mark": tmp_path}
    _, hostile, src = _notebook_cells(a, spec.CELLS, ctx)
    template = nbio.release_from_source(src)
    sequential_engine.grade_notebook(a, template, hostile)
    gid, find = spec.READER
    solution = _solutions(src)[gid]
    # right only when _found(): the reference, then the wrong definitions again unless found
    # (no exec: a policy that fails hidden code must not be what stops the reader)
    wrong = textwrap.indent(WRONG[a], "    ")
    reader_cell = f"{find}\n{solution}\nif not _found():\n{wrong}\n"
    _, reader, _ = _notebook_cells(a, {gid: reader_cell}, ctx)
    report, _ = sequential_engine.grade_notebook(a, template, reader)
    passed = [g for g, v in report.verdicts.items() if v.passed]
    assert not passed, f"the next student found what {path.stem} left behind: {passed}"
    report, _ = sequential_engine.grade_notebook(a, template, src)
    failed = {g: v.message[:300] for g, v in report.verdicts.items() if not v.passed}
    assert not failed


@pytest.mark.parametrize(
    "path", [REDTEAM / "multihead_probe_switch_off.py", REDTEAM / "multihead_mutation_patch.py"]
)
def test_tampering_is_reported_to_the_instructor(graded, path):
    """An attack that patches the grader's worker is named, with its cell and line, in the
    autograded notebook's problems (read by the batch summary and the class report) and at the
    top of the student's feedback."""
    a = SPEC[path].ASSIGNMENT
    nb = nbformat.read(graded["course"] / "autograded" / sid(path) / a / f"{a}.ipynb", 4)
    problems = nb.metadata["autograder"]["problems"]
    assert any(re.match(r"채점기 조작 의심: `.+` \(.+ 셀, \d+행\)", p) for p in problems), problems
    feedback = (graded["course"] / "feedback" / sid(path) / a / f"{a}.html").read_text()
    assert "채점기 조작 의심" in feedback
