"""The grading service process: scan the exchange, grade, release feedback.

Three kinds of threads share one warm :class:`autograder.engines.local.Engine`:

- the scanner (main thread) lists ``<exchange>/<course>/inbound`` every ``poll_s`` seconds and
  accepts each finished submission of an open assignment into the durable queue (inbox.py),
  checks the attempt limit, and hands the notebooks to the engine's judges at once;
- the engine's judge threads grade them in parallel, a slow or hostile notebook occupying one
  judge only (its sandbox limits bound it);
- the writer takes the submissions whose verdicts are all in, as they come (several at once
  when a class submits together), runs nbgrader's Autograde and GenerateFeedback over them in
  the service's course root (pipeline.py) and releases each page to its student (exchange.py).

A small HTTP endpoint at ``$JUPYTERHUB_SERVICE_URL`` (the hub proxies it at
``/services/<name>/``) answers ``status`` with counts only, no names.
"""

import collections
import grp
import http.server
import json
import logging
import os
import pwd
import queue
import signal
import threading
import time
import urllib.parse
from pathlib import Path

from autograder.service import exchange, inbox
from autograder.service.pipeline import PipelineError, ServiceCourse
from autograder.service.settings import InstantFeedback, attempts_page, now, page

log = logging.getLogger("autograder.service")

ERROR_PAGE = page(
    "채점 오류",
    "<p>이 제출물을 즉시 채점하는 중에 채점기 쪽 오류가 났습니다. 학생의 잘못이 아니며, 마감 후 "
    "채점에는 영향이 없습니다. 강사에게 알려 주세요.</p>",
)


def course_config(root):
    """The traitlets Config of the course's nbgrader_config.py."""
    from traitlets.config.loader import PyFileConfigLoader

    path = Path(root) / "nbgrader_config.py"
    return PyFileConfigLoader(path.name, path=str(path.parent)).load_config()


class Refused(SystemExit):
    """The service will not start (message in Korean, for the instructor)."""


def refuse_root():
    if os.geteuid() == 0:
        raise Refused(
            "채점 서비스는 root로 실행하지 않습니다: 학생 코드를 채점하는 프로세스는 학생의 홈 "
            "폴더와 시스템을 바꿀 수 없는 전용 사용자(예: attention-grader)로 실행하세요 "
            "(JupyterHub 서비스 설정의 'user')."
        )


def readable_homes(group):
    """[(student, home)] of the members of ``group`` whose home folder this process can read
    or enter."""
    try:
        g = grp.getgrnam(group)
    except KeyError:
        return []
    members = set(g.gr_mem) | {p.pw_name for p in pwd.getpwall() if p.pw_gid == g.gr_gid}
    out = []
    for name in sorted(members):
        home = pwd.getpwnam(name).pw_dir
        if name != pwd.getpwuid(os.geteuid()).pw_name and os.path.isdir(home):
            if os.access(home, os.R_OK) or os.access(home, os.X_OK):
                out.append((name, home))
    return out


def refuse_student_homes(group):
    seen = readable_homes(group)
    if seen:
        listing = ", ".join(f"{name} ({home})" for name, home in seen[:5])
        raise Refused(
            f"채점 서비스가 학생의 홈 폴더를 볼 수 있어 시작하지 않습니다: {listing}. 학생 홈 "
            "폴더의 권한을 0700으로 하세요(hub/deploy.py가 만든 계정은 그렇게 만들어집니다)."
        )


class Service:
    def __init__(
        self,
        course,
        state,
        jobs=None,
        poll_s=0.5,
        unsafe=False,
        check_owner=True,
    ):
        self.instructor = Path(course).resolve()
        self.state = Path(state).resolve()
        self.jobs = jobs
        self.poll_s = poll_s
        self.unsafe = unsafe
        self.check_owner = check_owner
        self.inbox = inbox.Inbox(self.state)
        self.course = ServiceCourse(self.state / "course", self.instructor)
        self.config_mtime = None
        self.load_config()
        self.attempts = collections.Counter(self.inbox.counted())
        self.ready = queue.Queue()
        self.waiting = {}  # job key -> [(notebook, future, digest)]
        self.synced = {}  # assignment -> when its source was last compared
        self.rejected = set()  # inbound folders not taken (logged once)
        self.lock = threading.Lock()
        self.stopping = threading.Event()
        self.engine = None
        self.started = None
        self.writer = threading.Thread(target=self.write_loop, daemon=True, name="writer")

    # --- configuration ---------------------------------------------------------------------

    def load_config(self):
        """(Re)read the instructor's nbgrader_config.py when it changed."""
        path = self.instructor / "nbgrader_config.py"
        mtime = path.stat().st_mtime_ns
        if mtime == self.config_mtime:
            return
        from nbgrader.coursedir import CourseDirectory
        from nbgrader.exchange.default.exchange import Exchange

        from autograder.judge.sandbox import SandboxLimits
        from autograder.notebook import SubmissionLimits

        config = course_config(self.instructor)
        self.settings = InstantFeedback(config=config)
        self.limits = SandboxLimits(config=config)
        self.max_bytes = SubmissionLimits(config=config).max_bytes
        coursedir = CourseDirectory(config=config, root=str(self.instructor))
        self.course_id = coursedir.course_id
        self.instructor_db = coursedir.db_url
        self.exchange_root = Path(Exchange(config=config, coursedir=coursedir).root)
        self.inbound = self.exchange_root / self.course_id / "inbound"
        self.feedback_dir = self.exchange_root / self.course_id / "feedback"
        self.config_mtime = mtime
        if getattr(self, "engine", None) is not None:
            self.engine.set_limits(self.limits)
        log.info(
            "course %s: open for instant feedback: %s (attempts per day %s, show %s)",
            self.course_id,
            ", ".join(self.settings.assignments) or "none",
            self.settings.attempts_per_day or "unlimited",
            self.settings.show,
        )

    # --- life cycle ------------------------------------------------------------------------

    def start(self):
        pending = self.inbox.pending()
        self.engine = self.start_engine({j.assignment for j in pending})
        self.started = time.monotonic()
        self.writer.start()
        for job in pending:  # what a stopped service left: grade or release it
            if job.status in ("graded", "refused"):
                self.ready.put(job)
            else:
                self.submit(job)
        log.info("grading service ready: %s", self.engine.describe())

    def start_engine(self, extra=()):
        """Judges for the open assignments (and ``extra``), warmed up: each has graded the
        release notebook of every one of them once (check modules collected, sandbox
        forked), so that the first student waits for no start-up."""
        from autograder.engines.local import Engine

        names = sorted(set(self.settings.assignments) | set(extra))
        engine = Engine(
            jobs=self.jobs, limits=self.limits, unsafe=self.unsafe, assignments=names or None
        )
        engine.assignments = set(names)
        warm = []
        for a in names:
            try:
                self.sync(a)
                for n in self.course.notebook_names(a):
                    template = self.course.course.template(a, n)
                    for _ in range(engine.jobs):
                        warm.append(engine.submit_notebook(a, template, template)[0])
            except Exception:
                log.exception("warming up the judges on %s failed", a)
        for future in warm:
            future.result()
        return engine

    def follow_open_assignments(self):
        """A newly opened assignment gets judges that load its checks (the old ones finish
        what they hold, then stop)."""
        if set(self.settings.assignments) <= self.engine.assignments:
            return
        old = self.engine
        self.engine = self.start_engine(old.assignments)
        threading.Thread(target=old.close, daemon=True, name="old-engine").start()
        log.info("judges restarted for %s", ", ".join(sorted(self.engine.assignments)))

    def run(self):
        while not self.stopping.is_set():
            try:
                self.load_config()
                self.follow_open_assignments()
                self.scan()
            except Exception:
                log.exception("scan failed")
            self.stopping.wait(self.poll_s)

    def stop(self):
        self.stopping.set()
        self.ready.put(None)
        if self.engine is not None:
            self.engine.close(wait=False)

    # --- scanning --------------------------------------------------------------------------

    def scan(self):
        try:
            names = os.listdir(self.inbound)
        except FileNotFoundError:
            return
        open_ = set(self.settings.assignments)
        for name in sorted(names):
            parsed = inbox.parse_key(name)
            if parsed is None or parsed[1] not in open_ or name in self.rejected:
                continue
            if self.inbox.known(name):
                continue
            folder = self.inbound / name
            if not inbox.submission_finished(folder):
                continue
            student, assignment, timestamp = parsed
            day = self.settings.day(now())
            try:
                job = self.inbox.accept(
                    folder,
                    name,
                    student,
                    assignment,
                    timestamp,
                    day,
                    self.max_bytes,
                    check_owner=self.check_owner,
                )
            except inbox.Rejected as e:
                log.warning("submission %s not taken: %s", name, e)
                self.rejected.add(name)
                continue
            except FileExistsError:
                continue
            self.admit(job)

    def admit(self, job):
        limit = self.settings.attempts_per_day
        key = (job.student, job.assignment, job.day)
        if limit and self.attempts[key] >= limit:
            tz = self.settings.timezone
            text = attempts_page(job.student, job.assignment, limit, job.day, tz)
            stems = self.course_stems(job)
            self.inbox.graded(job, {s: text for s in stems}, "refused", 0.0)
            log.info("%s: over the attempt limit (%d today)", job.key, limit)
            self.ready.put(job)
            return
        self.attempts[key] += 1
        self.submit(job)

    def course_stems(self, job):
        names = set()
        try:
            names.update(self.course.notebook_names(job.assignment))
        except Exception:
            pass
        names.update(p.stem for p in job.files.glob("*.ipynb"))
        return sorted(names or {job.assignment})

    # --- grading ---------------------------------------------------------------------------

    def submit(self, job):
        """Hand the notebooks of ``job`` to the judges; it goes to the writer when all are in."""
        from autograder.nbgrader.graders import digest
        from autograder.notebook import graded_code

        job.t0 = time.monotonic()
        try:
            self.sync(job.assignment)
            names = self.course.notebook_names(job.assignment)
            expected = []
            for n in names:
                template, nb = self.course.read(job.assignment, job.files, n, self.max_bytes)
                future, rebuilt = self.engine.submit_notebook(
                    job.assignment, template, nb, name=f"{job.student}/{n}"
                )
                expected.append((n, future, digest(graded_code(rebuilt))))
        except Exception:
            log.exception("%s: could not be handed to the judges", job.key)
            self.fail(job)
            return
        with self.lock:
            self.waiting[job.key] = expected
        remaining = [len(expected)]

        def one_done(_future):
            with self.lock:
                remaining[0] -= 1
                if remaining[0]:
                    return
            self.ready.put(job)

        for _, future, _ in expected:
            future.add_done_callback(one_done)

    def sync(self, assignment):
        last = self.synced.get(assignment)
        if last is None or time.monotonic() - last > 5:
            self.course.sync(assignment, self.instructor_db)
            self.synced[assignment] = time.monotonic()

    def fail(self, job):
        self.inbox.graded(job, {s: ERROR_PAGE for s in self.course_stems(job)}, "error", 0.0)
        self.ready.put(job)

    def write_loop(self):
        while True:
            job = self.ready.get()
            if job is None or self.stopping.is_set():
                return
            batch = [job]
            while True:  # what else is ready now goes into the same nbgrader run
                try:
                    more = self.ready.get_nowait()
                except queue.Empty:
                    break
                if more is None:
                    self.ready.put(None)
                    break
                batch.append(more)
            try:
                self.write(batch)
            except Exception:
                log.exception("writing feedback failed")

    def write(self, batch):
        """Grade with nbgrader (one run per assignment, one submission per student in a run)
        and release what is graded; what waits for a second run of the same student goes
        back into the queue first."""
        release = [j for j in batch if j.status in ("graded", "refused", "error")]
        todo = [j for j in batch if j.status == "accepted"]
        by_assignment = collections.defaultdict(list)
        later = []
        for job in todo:
            group = by_assignment[job.assignment]
            if any(j.student == job.student for j in group):
                later.append(job)
            else:
                group.append(job)
        for assignment, jobs in by_assignment.items():
            release += self.grade(assignment, jobs)
        for job in release:
            self.publish(job)
        for job in later:
            self.ready.put(job)

    def grade(self, assignment, jobs):
        from autograder.nbgrader.graders import BatchGrader

        grader = BatchGrader(self.engine)
        with self.lock:
            for job in jobs:
                for n, future, digest in self.waiting.pop(job.key, []):
                    grader.expect((assignment, job.student, n), future, digest)
        try:
            self.sync(assignment)
            pages = self.course.grade(assignment, jobs, grader, self.settings.show)
        except (PipelineError, OSError) as e:
            log.error("nbgrader failed on %s: %s", ", ".join(j.key for j in jobs), e)
            for job in jobs:
                self.fail(job)
            return []
        names = self.course.notebook_names(assignment)
        for job in jobs:
            stems = exchange.stems_for(names, job.files)
            texts = {s: pages[job.key][n] for n in names for s in stems[n]}
            seconds = time.monotonic() - getattr(job, "t0", time.monotonic())
            self.inbox.graded(job, texts, "graded", seconds)
            log.info("%s: graded in %.1f s", job.key, seconds)
        return jobs

    def publish(self, job):
        secret_file = job.files / inbox.SECRET
        try:
            secret = secret_file.read_text()
        except OSError:
            log.warning("%s: no submission secret, feedback not released", job.key)
            self.inbox.done(job)
            return
        try:
            self.feedback_dir.mkdir(mode=0o2771, exist_ok=True)
            exchange.release(self.feedback_dir, secret, self.inbox.pages(job))
        except OSError as e:
            log.error("%s: feedback not released: %s", job.key, e)
            return
        self.inbox.done(job)
        log.info("%s: feedback released", job.key)

    # --- status ----------------------------------------------------------------------------

    def status(self):
        lines = self.inbox.log_lines()
        with self.lock:
            grading = len(self.waiting)
        return {
            "ready": self.started is not None,
            "open": list(self.settings.assignments),
            "waiting": grading,
            "queued": self.ready.qsize(),
            "graded": sum(1 for ln in lines if len(ln) > 1 and ln[1] == "graded"),
            "refused": sum(1 for ln in lines if len(ln) > 1 and ln[1] == "refused"),
            "judges": self.engine.describe() if self.engine else None,
        }


def serve_status(service, url, prefix):
    """``GET <prefix>status`` -> the service's counts as JSON, on the address of ``url``."""
    parsed = urllib.parse.urlparse(url)

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            path = urllib.parse.urlparse(self.path).path
            if path.rstrip("/") in (prefix.rstrip("/") + "/status", "/status"):
                body = json.dumps(service.status()).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
            else:
                body = b"not found"
                self.send_response(404)
                self.send_header("Content-Type", "text/plain")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    httpd = http.server.ThreadingHTTPServer((parsed.hostname, parsed.port), Handler)
    httpd.daemon_threads = True
    threading.Thread(target=httpd.serve_forever, daemon=True, name="status").start()
    return httpd


def main(args):
    refuse_root()
    if args.students_group:
        refuse_student_homes(args.students_group)
    service = Service(
        args.course,
        args.state,
        jobs=args.jobs,
        poll_s=args.poll,
        unsafe=args.unsafe,
        check_owner=not args.any_owner,
    )

    def on_signal(signum, frame):
        log.info("stopping (signal %d)", signum)
        service.stopping.set()

    (Path(args.state) / "service.pid").write_text(f"{os.getpid()}\n")
    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    url = os.environ.get("JUPYTERHUB_SERVICE_URL")
    if url:
        serve_status(service, url, os.environ.get("JUPYTERHUB_SERVICE_PREFIX", "/"))
    service.start()
    service.run()
    service.stop()
    return 0
