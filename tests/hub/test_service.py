"""The grading service on a deployment of the course (hub/testbed.py), without the browser:
students submit with the students' nbgrader, the service grades as its own user, the
instructor grades finally with the course's commands. The deployment closes the repository to
students as hub/deploy.py does by default (group staff, 0750; reopened at the end): the
service and the instructor work from it, the students cannot enter it.

Each test names the accounts it uses; the attempt limit (4 a day) counts over the module:
agt-s01 and agt-s02 submit 4 times in all, agt-s03 five times (the fifth is refused)."""

import grp
import os
import pwd
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from hub import testbed as tb
from tests.hub import chapter
from tests.hub import submissions as subs

ATTEMPTS = 4
WALL_S = 3.0  # per check: the hostile notebook's limit is its 5 checks x 3 s
S1, S2, S3, S4 = tb.students(4)


@pytest.fixture(scope="module")
def hub(needs_root, tmp_path_factory):
    settings = tb.deploy(4, config=f"c.SandboxLimits.wall_s = {WALL_S}\n", protect=True)
    tb.open_for_feedback(settings, ["softmax"], attempts=ATTEMPTS)
    tb.release(settings, "softmax")
    log = tmp_path_factory.mktemp("service") / "stdout.log"
    proc = tb.start_service(settings, jobs=2, log=log)
    try:
        tb.service_ready(settings)
        settings["proc"] = proc
        settings["log"] = log
        yield settings
    finally:
        tb.stop(settings.get("proc", proc))
        tb.reopen_repo(settings)


def restart(hub, sig):
    tb.stop(hub["proc"], sig)
    hub["proc"] = tb.start_service(hub, jobs=2, log=hub["log"])


def submit(hub, student, nb, name=None):
    """``nb`` as the student's only notebook of softmax (``name``: another file name), then the
    student's nbgrader submit -> (timestamp, secret, stems, time before submitting)."""
    folder = home_nb(student).parent
    if not folder.exists():
        tb.fetch_assignment(hub, student, "softmax")
    for old in folder.glob("*.ipynb"):
        old.unlink()
    tb.write_notebook(student, folder / (name or "softmax.ipynb"), nb)
    return tb.submit(hub, student, "softmax")


def home_nb(student):
    return Path(pwd.getpwnam(student).pw_dir) / "softmax" / "softmax.ipynb"


def release_nb(hub):
    import json

    return json.loads((Path(hub["course"]) / "release/softmax/softmax.ipynb").read_text())


def test_feedback_is_what_the_final_grading_says_renamed_notebooks_included(hub):
    """A mistake and a renamed notebook: each student fetches a page, byte for byte the one
    the instructor's final grading writes (the chapter's commands: collect, the batch command,
    generate_feedback); the instructor's release_feedback reaches the renamed notebook too."""
    rel = release_nb(hub)
    ts1, secret1, stems1, _ = submit(hub, S1, subs.filled(rel, softmax=subs.NAIVE))
    ts2, secret2, stems2, _ = submit(hub, S2, subs.filled(rel), name="softmax (1).ipynb")
    assert stems2 == ["softmax (1)"]
    pages1, _ = tb.wait_feedback(hub, S1, "softmax")
    pages2, _ = tb.wait_feedback(hub, S2, "softmax")
    [(name1, page1)] = pages1.items()
    [(name2, page2)] = pages2.items()
    assert name1 == f"{ts1}/softmax.html" and subs.NAIVE_SAYS in page1
    assert name2 == f"{ts2}/softmax (1).html" and "(이)라는 이름으로 제출되어" in page2
    assert "test_softmax_stable" in page1

    # the chapter's final grading, as written (collect, grade, generate and release feedback,
    # export), in the instructor's terminal
    for words in chapter.commands("nbgrader collect softmax"):
        tb.instructor_shell(hub, words)
    for student, page in ((S1, page1), (S2, page2)):
        final = Path(hub["course"]) / "feedback" / student / "softmax" / "softmax.html"
        assert final.read_text(encoding="utf-8") == page
    renamed = tb.released(hub, secret2, "softmax (1)")
    assert renamed.stat().st_uid == pwd.getpwnam(tb.INSTRUCTOR).pw_uid  # the instructor's copy
    assert renamed.read_text(encoding="utf-8") == page2


def test_attempt_limit_answers_in_korean(hub):
    rel = release_nb(hub)
    stamps = [submit(hub, S3, subs.filled(rel))[0] for _ in range(ATTEMPTS + 1)]
    pages, _ = tb.wait_feedback(hub, S3, "softmax", count=ATTEMPTS + 1)
    refused = [name for name, page in pages.items() if "즉시 채점 횟수를 모두 썼습니다" in page]
    assert refused == [f"{stamps[-1]}/softmax.html"]
    assert "하루에 4번까지 즉시 채점합니다" in pages[refused[0]]
    graded = [ln for ln in tb_log(hub) if ln[0].startswith(f"{S3}+")]
    assert sorted(ln[1] for ln in graded) == ["graded"] * ATTEMPTS + ["refused"]


def tb_log(hub):
    text = (Path(hub["grader_state"]) / "graded.log").read_text()
    return [ln.split("\t") for ln in text.splitlines() if ln]


def test_students_see_nothing_of_each_other_nor_of_the_grader(hub):
    s1_home = pwd.getpwnam(S1).pw_dir
    exchange = Path(hub["exchange"]) / "attention-transformers"
    for path in (
        exchange / "inbound",  # others' submissions
        exchange / "feedback",  # others' feedback pages
        s1_home,
        hub["course"],  # the gradebook, submitted/, autograded/
        hub["grader_state"],
    ):
        r = tb.as_user(S4, ["ls", path], check=False)
        assert r.returncode != 0 and "Permission denied" in r.stderr, path
    r = tb.as_user(S4, ["cat", hub["secret"]], check=False)
    assert r.returncode != 0
    # S4 has submitted nothing: asking for S1's feedback by name finds none
    r = tb.student_nbgrader(hub, S4, "fetch_feedback", "softmax", "--student", S1, check=False)
    assert not list(Path(pwd.getpwnam(S4).pw_dir).glob("softmax/feedback/*/*.html"))
    # the service's own account cannot look into a student's home either
    r = tb.as_user(tb.GRADER, ["ls", s1_home], check=False)
    assert r.returncode != 0 and "Permission denied" in r.stderr


def test_the_repository_is_closed_to_students_open_to_staff(hub):
    """--protect-repo (the default): a student reaches the repository's folder (its parents
    are traversable, the control) but can neither list it nor read a reference solution; the
    instructor (staff) can, and the grading service grades from it (the other tests)."""
    info = tb.REPO.stat()
    assert info.st_mode & 0o777 == 0o750 and grp.getgrgid(info.st_gid).gr_name == tb.STAFF_GROUP
    assert tb.as_user(S4, ["stat", tb.REPO], check=False).returncode == 0
    for cmd in (["ls", tb.REPO], ["cat", tb.REPO / "solutions" / "softmax.py"]):
        r = tb.as_user(S4, cmd, check=False)
        assert r.returncode != 0 and "Permission denied" in r.stderr, cmd
    r = tb.as_user(tb.INSTRUCTOR, ["cat", tb.REPO / "solutions" / "softmax.py"], check=False)
    assert r.returncode == 0 and "def softmax" in r.stdout, r.stderr


def test_service_refuses_root_and_readable_student_homes(hub):
    cmd = [sys.executable, "-m", "autograder.service", "serve", "--course", hub["course"]]
    cmd += ["--state", str(Path(hub["grader_state"]).parent / "root-state")]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert r.returncode != 0 and "root로 실행하지 않습니다" in r.stderr
    home = pwd.getpwnam(S4).pw_dir
    os.chmod(home, 0o755)
    try:
        py = Path(hub["repo_venv"]) / "bin" / "python"
        cmd = [py, "-m", "autograder.service", "serve", "--course", hub["course"]]
        cmd += ["--state", "/tmp/agt-refused-state", "--students-group", tb.STUDENTS_GROUP]
        r = tb.as_user(tb.GRADER, cmd, check=False, cwd="/")
        assert r.returncode != 0 and "학생의 홈 폴더를 볼 수 있어" in r.stderr
        assert home in r.stderr
    finally:
        os.chmod(home, 0o700)


def test_killed_mid_burst_then_restarted_grades_every_submission_once(hub):
    rel = release_nb(hub)
    before = len(tb_log(hub))
    burst = []
    for student in (S1, S2, S4):
        for _ in range(2):
            burst.append((student, *submit(hub, student, subs.filled(rel, softmax=subs.NAIVE))))
    t0 = time.monotonic()
    while len(tb_log(hub)) == before:  # the first of the burst is graded: kill mid-burst
        assert time.monotonic() - t0 < 120, tb.tail(hub["log"])
        time.sleep(0.05)
    restart(hub, signal.SIGKILL)
    for _student, _ts, secret, stems, _ in burst:
        tb.wait_released(hub, secret, stems[0], timeout=180)
    keys = [ln[0] for ln in tb_log(hub)[before:]]
    mine = [k for k in keys if any(f"+softmax+{ts}+" in k for _, ts, *_ in burst)]
    assert len(mine) == len(burst) == len(set(mine)), keys
    assert not list((Path(hub["grader_state"]) / "jobs").iterdir())


def test_hostile_notebook_delays_others_by_at_most_its_own_limit(hub):
    rel = release_nb(hub)
    _, secret, stems, t0 = submit(hub, S4, subs.filled(rel))
    alone = tb.wait_released(hub, secret, stems[0]) - t0
    _, h_secret, h_stems, h0 = submit(hub, S1, subs.hostile(rel))
    _, secret, stems, t1 = submit(hub, S2, subs.filled(rel))
    beside = tb.wait_released(hub, secret, stems[0]) - t1
    hostile_limit = 5 * WALL_S  # its five checks, each stopped at the wall clock
    assert beside <= alone + hostile_limit, (alone, beside)
    done = tb.wait_released(hub, h_secret, h_stems[0], timeout=300) - h0
    page = tb.released(hub, h_secret, h_stems[0]).read_text(encoding="utf-8")
    assert "StudentTimeout" in page or "시간" in page
    print(f"alone {alone:.1f} s, beside a hostile notebook {beside:.1f} s, hostile {done:.1f} s")
