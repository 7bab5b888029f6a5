"""The service's durable queue: a copy of every submission it accepted, on disk.

    <state>/jobs/<key>/job.json        accepted: student, assignment, times (written last)
    <state>/jobs/<key>/files/          the submitted notebooks, timestamp.txt, submission_secret.txt
    <state>/jobs/<key>/result/         graded: one feedback page per notebook + result.json (last)
    <state>/done/<key>/                released to the student (the job folder, moved)
    <state>/graded.log                 one line per grading that finished: key, status, seconds

``key`` is the exchange's name of the submission, ``student+assignment+timestamp+random``. Each
step ends with an atomic rename, so a service killed at any point finds every submission
either not accepted yet (still only in the exchange), accepted (graded again from its copy),
graded (released again: same page, same file name) or done: nothing is lost and nothing is
graded twice. The copy is taken from the exchange with the student-controlled folder treated
as hostile: only regular files (no symlinks, FIFOs or devices), of bounded size and number,
from a folder the named student owns.
"""

import datetime
import json
import os
import pwd
import shutil
import stat
import tempfile
from dataclasses import dataclass
from pathlib import Path

from autograder import notebook as nbio

SECRET = "submission_secret.txt"
TIMESTAMP = "timestamp.txt"
MAX_NOTEBOOKS = 20
SMALL_FILES = {TIMESTAMP: 200, SECRET: 4096}


class Rejected(Exception):
    """A submission folder the service will not take (reason in English, for its log)."""


@dataclass
class Job:
    key: str
    student: str
    assignment: str
    timestamp: str
    received: str  # ISO time (UTC) the service accepted it
    day: str  # the received day in the course's time zone (attempt limit)
    folder: Path
    status: str = "accepted"  # accepted | graded | done; refused: over the attempt limit

    @property
    def files(self):
        return self.folder / "files"

    @property
    def result(self):
        return self.folder / "result"

    def data(self):
        return {
            k: getattr(self, k)
            for k in ("key", "student", "assignment", "timestamp", "received", "day", "status")
        }


def parse_key(name):
    """(student, assignment, timestamp) of an exchange submission folder name, or None."""
    parts = name.rsplit("+", 3)
    if len(parts) != 4 or not all(parts) or name.startswith("."):
        return None
    student, assignment, timestamp, _ = parts
    if not assignment.isidentifier() or "/" in name or "\0" in name:
        return None
    return student, assignment, timestamp


def submission_finished(folder):
    """True once ``nbgrader submit`` has finished writing ``folder``: it writes the submission
    secret (128 hex digits) after the notebooks, then makes the folder mode 0777 as its very
    last step (nbgrader/exchange/default/submit.py)."""
    try:
        st = os.lstat(folder)
        sec = os.lstat(os.path.join(folder, SECRET))
    except OSError:
        return False
    return (
        stat.S_ISDIR(st.st_mode)
        and st.st_mode & 0o777 == 0o777
        and stat.S_ISREG(sec.st_mode)
        and sec.st_size == 128
    )


def read_limited(path, limit):
    """Bytes of a regular file (not a symlink), or Rejected when it is not one or is larger
    than ``limit`` (nbio.read_regular_file: O_NOFOLLOW, O_NONBLOCK, fstat)."""
    try:
        data = nbio.read_regular_file(path, limit + 1)
    except OSError as e:
        raise Rejected(f"{path}: {e}") from None
    if len(data) > limit:
        raise Rejected(f"{path}: larger than {limit} bytes")
    return data


def copy_submission(src, dest, student, max_bytes, check_owner=True):
    """Copy the exchange folder ``src`` of ``student`` into the new folder ``dest``: its
    top-level ``*.ipynb`` files (at most MAX_NOTEBOOKS), timestamp.txt and
    submission_secret.txt. A notebook over ``max_bytes`` becomes a sparse file one byte over the
    limit (grading flags it as too large, as the final grading does); one that is not a regular
    file (a symlink, a FIFO) is left out (graded as not submitted)."""
    try:
        st = os.lstat(src)
    except OSError as e:
        raise Rejected(f"{src}: {e}") from None
    if not stat.S_ISDIR(st.st_mode):
        raise Rejected(f"{src}: not a folder")
    if check_owner:
        try:
            uid = pwd.getpwnam(student).pw_uid
        except KeyError:
            raise Rejected(f"{src}: no system user {student!r}") from None
        if st.st_uid != uid:
            raise Rejected(f"{src}: owned by uid {st.st_uid}, not by {student!r} ({uid})")
    names = sorted(os.listdir(src))
    notebooks = [n for n in names if n.endswith(".ipynb") and not n.startswith(".")]
    if len(notebooks) > MAX_NOTEBOOKS:
        raise Rejected(f"{src}: {len(notebooks)} notebooks")
    os.makedirs(dest)
    for name, limit in SMALL_FILES.items():
        if name in names:
            (Path(dest) / name).write_bytes(read_limited(os.path.join(src, name), limit))
    for name in notebooks:
        path = os.path.join(src, name)
        try:
            info = os.lstat(path)
        except OSError:
            continue
        if not stat.S_ISREG(info.st_mode):
            continue
        if info.st_size > max_bytes:
            with open(Path(dest) / name, "wb") as f:
                f.truncate(max_bytes + 1)
            continue
        try:
            data = read_limited(path, max_bytes)
        except Rejected:
            continue
        (Path(dest) / name).write_bytes(data)
    return notebooks


class Inbox:
    """The job folders under ``state`` (see the module docstring)."""

    def __init__(self, state):
        self.state = Path(state)
        self.jobs_dir = self.state / "jobs"
        self.done_dir = self.state / "done"
        self.tmp_dir = self.state / "tmp"
        for d in (self.jobs_dir, self.done_dir, self.tmp_dir):
            d.mkdir(parents=True, exist_ok=True)
        for leftover in self.tmp_dir.iterdir():  # half-made copies of a killed service
            shutil.rmtree(leftover, ignore_errors=True)
        self.log_path = self.state / "graded.log"

    def known(self, key):
        return (self.jobs_dir / key).exists() or (self.done_dir / key).exists()

    def accept(self, src, key, student, assignment, timestamp, day, max_bytes, check_owner=True):
        """Copy the exchange folder ``src`` into a new job; -> Job (or Rejected)."""
        tmp = Path(tempfile.mkdtemp(prefix="job-", dir=self.tmp_dir))
        try:
            copy_submission(src, tmp / "files", student, max_bytes, check_owner)
            received = datetime.datetime.now(datetime.UTC).isoformat(timespec="milliseconds")
            job = Job(key, student, assignment, timestamp, received, day, self.jobs_dir / key)
            write_json(tmp / "job.json", job.data())
            os.rename(tmp, job.folder)
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise
        return job

    def pending(self):
        """Jobs accepted or graded but not released (a restarted service resumes them), in the
        order they were received."""
        jobs = []
        for folder in self.jobs_dir.iterdir():
            try:
                job = self.load(folder)
            except (OSError, ValueError, KeyError):
                continue  # never happens: job.json is written before the folder appears
            jobs.append(job)
        return sorted(jobs, key=lambda j: j.received)

    def load(self, folder):
        data = json.loads((folder / "job.json").read_text())
        job = Job(folder=folder, **{k: data[k] for k in data if k != "status"})
        job.status = data.get("status", "accepted")
        if job.status == "accepted" and (folder / "result" / "result.json").exists():
            job.status = "graded"
        return job

    def counted(self):
        """[(student, assignment, day)] of every graded or pending job (the attempt limit)."""
        out = []
        for base in (self.jobs_dir, self.done_dir):
            for folder in base.iterdir():
                try:
                    data = json.loads((folder / "job.json").read_text())
                except (OSError, ValueError):
                    continue
                if data.get("status") != "refused":
                    out.append((data["student"], data["assignment"], data["day"]))
        return out

    def graded(self, job, pages, status, seconds):
        """Record ``job`` as graded: ``pages`` {file stem: feedback HTML text}, written into
        result/ with result.json last; one line in graded.log."""
        tmp = Path(tempfile.mkdtemp(prefix="result-", dir=self.tmp_dir))
        for stem, text in pages.items():
            (tmp / f"{page_name(stem)}.html").write_text(text, encoding="utf-8")
        write_json(tmp / "result.json", {"pages": sorted(pages), "status": status})
        shutil.rmtree(job.result, ignore_errors=True)
        os.rename(tmp, job.result)
        if status == "refused":
            data = json.loads((job.folder / "job.json").read_text())
            data["status"] = "refused"
            write_json(job.folder / "job.json", data)
        job.status = "refused" if status == "refused" else "graded"
        with open(self.log_path, "a") as f:
            f.write(f"{job.key}\t{status}\t{seconds:.2f}\n")
            f.flush()
            os.fsync(f.fileno())

    def pages(self, job):
        """{file stem: feedback page path} of a graded job."""
        result = json.loads((job.result / "result.json").read_text())
        return {stem: job.result / f"{page_name(stem)}.html" for stem in result["pages"]}

    def done(self, job):
        os.rename(job.folder, self.done_dir / job.key)
        job.folder = self.done_dir / job.key
        job.status = "done"

    def log_lines(self):
        try:
            return [ln.split("\t") for ln in self.log_path.read_text().splitlines() if ln]
        except FileNotFoundError:
            return []


def page_name(stem):
    """A safe file name for a submitted notebook's stem (it may hold any character)."""
    return stem.encode("utf-8").hex()


def write_json(path, data):
    tmp = Path(f"{path}.tmp")
    tmp.write_text(json.dumps(data, ensure_ascii=False, indent=1))
    os.replace(tmp, path)
