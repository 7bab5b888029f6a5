"""The course on JupyterHub in a real browser (headless Chromium), brought up and run with the
commands of the guide's chapter (docs/jupyterhub.md) as it writes them: ``python3 hub/deploy.py
up --students students.csv`` (with the test machine's options, which the chapter lists), the
instructor's three lines of instant-feedback configuration and the release commands.

A student logs in, fetches softmax in JupyterLab's Assignments tab, types a softmax without the
max subtraction into the solution cell, saves, submits, presses Fetch Feedback until the
grading service's page is there and reads the hidden checks' Korean diagnosis in it. A second
student, who submitted too, reaches neither the first's submission nor their feedback, on the
machine or through the hub. The instructor's formgrader collects both submissions and lists
them. Part of `make test`; the service's heavier tests are in test_service.py (`make test-hub`).
"""

import json
import pwd
import time
import urllib.parse
from pathlib import Path

import pytest

from hub import testbed as tb
from tests.hub import chapter, lab
from tests.hub import submissions as subs

S1, S2 = tb.students(2)
COURSE_ID = "attention-transformers"
# what the student types, line by line (the editor indents after the colon)
MISTAKE = [
    "def softmax(x, dim=-1, temperature=1.0):",
    "e = torch.exp(x / temperature)",
    "return e / e.sum(dim=dim, keepdim=True)",
]
TYPED = "def softmax(x, dim=-1, temperature=1.0):\n    e = torch.exp(x / temperature)\n"
TYPED += "    return e / e.sum(dim=dim, keepdim=True)"
FEEDBACK_S = 240  # submit to feedback fetched, service warm-up included, on a busy machine


@pytest.fixture(scope="module")
def hub(needs_root, tmp_path_factory):
    """The chapter's section 1 (deploy and start), then section 2 (open softmax for instant
    feedback, generate and release it), as written there."""
    log = tmp_path_factory.mktemp("hub") / "hub.log"
    [deploy_up] = chapter.commands("hub/deploy.py up")
    t0 = time.monotonic()
    settings, proc = tb.up(deploy_up, 2, log)
    print(f"deployed and up in {time.monotonic() - t0:.1f} s")
    try:
        with open(Path(settings["course"]) / "nbgrader_config.py", "a") as f:
            f.write("\n" + chapter.block("python", "c.InstantFeedback.assignments"))
        for words in chapter.commands("nbgrader release_assignment"):
            tb.instructor_shell(settings, words)
        print(f"softmax released {time.monotonic() - t0:.1f} s after the start")
        settings["log"] = log
        yield settings
    finally:
        tb.stop_hub(proc)
        print(tb.tail(log, 2000))


def test_the_chapter_names_every_option_this_test_deploys_with():
    """The test adds only options that the chapter lists and hub/deploy.py accepts."""
    from hub.deploy import parse

    [deploy_up] = chapter.commands("hub/deploy.py up")
    assert deploy_up[:3] == ["python3", "hub/deploy.py", "up"]
    added = tb.options("students.csv", ip="127.0.0.1", port=1, hub_port=2)
    added += tb.options("s.csv", proxy_api_port=3, service_port=4)
    named = {w for w in added if w.startswith("--")}
    assert named - chapter.options() == set()
    parse([*deploy_up[2:], *added])  # argparse exits on an unknown option


@pytest.mark.slow
@pytest.mark.browser
def test_student_sees_the_diagnosis_others_see_nothing_instructor_sees_submissions(hub, chromium):
    web = lab.Hub(chromium, hub["url"])
    # the first student: JupyterLab's Assignments tab, from fetch to the feedback page
    web.login(S1, tb.PASSWORD)
    web.lab_ready()
    web.open_assignments()
    web.button("released", "softmax", "Fetch")
    web.open_fetched_notebook(COURSE_ID, "softmax", "softmax")
    assert web.type_cell("def softmax(", MISTAKE) == TYPED
    web.save("softmax.ipynb")
    assert solution(home(S1) / "softmax" / "softmax.ipynb", "softmax") == TYPED
    web.tab("Assignments")
    web.button("fetched", "softmax", "Submit")
    web.row("submitted", "softmax")

    # the second student submits a correct notebook with nbgrader's commands meanwhile
    nb2 = tb.fetch_assignment(hub, S2, "softmax")
    tb.write_notebook(S2, nb2, subs.filled(json.loads(nb2.read_text())))
    tb.submit(hub, S2, "softmax")

    stamp = web.fetch_feedback("softmax", FEEDBACK_S)
    web.open_listed_file("softmax.html")
    page = web.html_viewer_text(subs.NAIVE_SAYS)
    assert "test_softmax_stable" in page
    [(_, _, stems)] = tb.cached_submissions(S1, "softmax")
    assert stems == ["softmax"] and stamp in feedback_folders(S1)

    # the second student: their own page only; nothing of the first one's on the machine ...
    pages, _ = tb.wait_feedback(hub, S2, "softmax", timeout=FEEDBACK_S)
    [page2] = pages.values()
    assert subs.NAIVE_SAYS not in page2
    exchange = Path(hub["exchange"]) / COURSE_ID
    for path in (exchange / "inbound", exchange / "feedback", home(S1)):
        r = tb.as_user(S2, ["ls", path], check=False)
        assert r.returncode != 0 and "Permission denied" in r.stderr, path
    tb.student_nbgrader(hub, S2, "fetch_feedback", "softmax", "--student", S1, check=False)
    python = Path(hub["student_venv"]) / "bin" / "python"
    for package in ("solutions", "autograder"):  # the students' venv holds none of the repository
        r = tb.as_user(S2, [python, "-c", f"import {package}"], check=False)
        assert f"No module named '{package}'" in r.stderr, r.stderr
    assert len(list(home(S2).glob("softmax/feedback/*/*.html"))) == 1
    # ... nor through the hub: the first student's server refuses them
    web.login(S2, tb.PASSWORD, next_path="/hub/home")
    page_path = urllib.parse.quote(f"softmax/feedback/{stamp}/softmax.html")
    web.d.get(f"{hub['url']}/user/{S1}/files/{page_path}")
    web.wait(lambda d: d.execute_script("return document.readyState") == "complete")
    seen = web.text()
    assert "403" in seen and subs.NAIVE_SAYS not in web.d.page_source, seen[:500]

    # the instructor: the formgrader collects both submissions and lists them
    web.login(tb.INSTRUCTOR, tb.PASSWORD, next_path=f"/user/{tb.INSTRUCTOR}/formgrader")
    web.launch()
    said = web.collect("softmax")
    assert "Successfully collected" in said, said
    web.wait(lambda _: submissions_count(web) == "2", message="the number of submissions")
    web.click(
        web.formgrader_row("softmax").find_element(lab.By.CSS_SELECTOR, "td.num-submissions a")
    )
    web.wait(lambda d: {S1, S2} <= set(listed_students(d)), message="manage submissions")


def home(student):
    return Path(pwd.getpwnam(student).pw_dir)


def solution(path, grade_id):
    nb = json.loads(Path(path).read_text())
    for cell in nb["cells"]:
        if cell.get("metadata", {}).get("nbgrader", {}).get("grade_id") == grade_id:
            return "".join(cell["source"])
    raise AssertionError(f"no cell {grade_id} in {path}")


def feedback_folders(student):
    """The submission timestamps in the student's feedback folder."""
    return {p.name for p in (home(student) / "softmax" / "feedback").iterdir()}


def submissions_count(web):
    row = web.formgrader_row("softmax")
    return row.find_element(lab.By.CSS_SELECTOR, "td.num-submissions").text.strip()


def listed_students(driver):
    return [e.text.strip() for e in driver.find_elements(lab.By.CSS_SELECTOR, "td.student-id")]
