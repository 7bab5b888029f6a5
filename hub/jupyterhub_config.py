"""JupyterHub configuration of the course (started by ``hub/deploy.py up``).

Reads $COURSE_HUB_SETTINGS (the hub.json that hub/deploy.py writes). Local system accounts log
in with their password (PAM); each gets a JupyterLab server running as that account
(LocalProcessSpawner): students from the students' environment (nbgrader's Assignments tab),
the instructor from the repository's venv in the course root (nbgrader's Formgrader, and the
batch command in a terminal). The grading service runs as its own account, managed by the hub
(started with it, restarted if it stops).
"""

import json
import os

from jupyterhub.spawner import LocalProcessSpawner, set_user_setuid

c = get_config()  # noqa: F821
S = json.load(open(os.environ["COURSE_HUB_SETTINGS"]))

c.JupyterHub.bind_url = f"http://{S['ip']}:{S['port']}"
c.JupyterHub.hub_ip = "127.0.0.1"
c.JupyterHub.hub_port = S["hub_port"]
c.ConfigurableHTTPProxy.command = [S["chp"]]
c.ConfigurableHTTPProxy.api_url = f"http://127.0.0.1:{S['proxy_api_port']}"
c.ConfigurableHTTPProxy.pid_file = os.path.join(S["state"], "proxy.pid")
c.JupyterHub.db_url = f"sqlite:///{os.path.join(S['state'], 'jupyterhub.sqlite')}"
c.JupyterHub.cookie_secret_file = os.path.join(S["state"], "jupyterhub_cookie_secret")
c.JupyterHub.cleanup_servers = True

c.JupyterHub.authenticator_class = "pam"
c.Authenticator.allowed_groups = {S["students_group"], S["staff_group"]}
c.Authenticator.admin_users = {S["instructor"]}


class CourseSpawner(LocalProcessSpawner):
    """Local processes as each account; the instructor's server starts in the course root, where
    nbgrader (the Formgrader, a terminal's commands) reads the course's nbgrader_config.py
    (LocalProcessSpawner starts every server in its user's home)."""

    def make_preexec_fn(self, name):
        as_user = set_user_setuid(name)
        folder = S["course"] if name == S["instructor"] else None

        def preexec():
            as_user()
            if folder:
                os.chdir(folder)

        return preexec


c.JupyterHub.spawner_class = CourseSpawner
c.Spawner.default_url = "/lab"
c.Spawner.http_timeout = 120
c.Spawner.start_timeout = 120
c.Spawner.mem_limit = None


def course_server(spawner):
    """Students: the students' environment in their home; the instructor: the repository's
    venv in the course root (Formgrader reads its nbgrader_config.py), with the grader secret
    the service uses (same check inputs, same verdicts)."""
    staff = spawner.user.name == S["instructor"]
    venv = S["repo_venv"] if staff else S["student_venv"]
    spawner.cmd = [os.path.join(venv, "bin", "jupyterhub-singleuser")]
    env = {
        "PATH": f"{os.path.join(venv, 'bin')}:/usr/local/bin:/usr/bin:/bin",
        "MPLBACKEND": "Agg",
    }
    if staff:
        spawner.notebook_dir = S["course"]
        env["AUTOGRADER_SECRET_FILE"] = S["secret"]
    spawner.environment.update(env)


c.Spawner.pre_spawn_hook = course_server

c.JupyterHub.services = [
    {
        "name": "grader",
        "user": S["grader_user"],
        "url": f"http://127.0.0.1:{S['service_port']}",
        "cwd": S["grader_state"],
        "command": [
            os.path.join(S["repo_venv"], "bin", "python"),
            "-m",
            "autograder.service",
            "serve",
            "--course",
            S["course"],
            "--state",
            S["grader_state"],
            "--students-group",
            S["students_group"],
            *(["--jobs", str(S["jobs"])] if S.get("jobs") else []),
        ],
        "environment": {
            "AUTOGRADER_SECRET_FILE": S["secret"],
            "PATH": f"{os.path.join(S['repo_venv'], 'bin')}:/usr/bin:/bin",
        },
    }
]
