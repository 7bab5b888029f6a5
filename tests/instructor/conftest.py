"""Fixtures of the instructor-path tests: a throw-away PostgreSQL server (the gradebook of
test_cluster.py and of the guide's PostgreSQL snippets in test_instructor_guide.py)."""

import glob
import os
import pwd
import shutil
import socket
import subprocess
import tempfile

import pytest


def _run(cmd, cwd, timeout=300):
    r = subprocess.run(
        cmd, cwd=cwd, env=os.environ, capture_output=True, text=True, timeout=timeout
    )
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    return r


def pg_binary(name):
    """A PostgreSQL server program: on PATH or in Debian's /usr/lib/postgresql/<version>/bin."""
    found = shutil.which(name)
    if found:
        return found
    hits = sorted(glob.glob(f"/usr/lib/postgresql/*/bin/{name}"))
    return hits[-1] if hits else None


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def postgres():
    """A throw-away PostgreSQL server on 127.0.0.1 (initdb + pg_ctl in a temporary folder, run as
    the `postgres` user when this is root) -> SQLAlchemy URL of an empty database."""
    initdb, pg_ctl = pg_binary("initdb"), pg_binary("pg_ctl")
    if not (initdb and pg_ctl):
        pytest.skip("PostgreSQL server not installed (make sysdeps installs Debian's postgresql)")
    psycopg2 = pytest.importorskip("psycopg2")
    as_user = []
    base = tempfile.mkdtemp(prefix="autograder-pg-")
    if os.geteuid() == 0:  # the server refuses to run as root
        try:
            user = pwd.getpwnam("postgres")
        except KeyError:
            shutil.rmtree(base)
            pytest.skip("running as root and there is no `postgres` user to run the server as")
        os.chown(base, user.pw_uid, user.pw_gid)
        as_user = ["runuser", "-u", "postgres", "--"]
    data, port = os.path.join(base, "data"), free_port()
    opts = f"-p {port} -k {base} -c listen_addresses=127.0.0.1 -c fsync=off"
    try:
        init = [initdb, "-D", data, "-U", "postgres", "--auth=trust", "-E", "UTF8", "--locale=C"]
        _run([*as_user, *init, "--no-sync"], base)
        start = [pg_ctl, "-D", data, "-o", opts, "-l", os.path.join(base, "log"), "-w", "start"]
        _run([*as_user, *start], base, timeout=120)
        conn = psycopg2.connect(host="127.0.0.1", port=port, user="postgres", dbname="postgres")
        conn.autocommit = True
        with conn.cursor() as cur:
            cur.execute("CREATE DATABASE gradebook")
        conn.close()
        yield f"postgresql+psycopg2://postgres@127.0.0.1:{port}/gradebook"
    finally:
        stop = [*as_user, pg_ctl, "-D", data, "-m", "immediate", "stop"]
        subprocess.run(stop, capture_output=True, timeout=60)
        shutil.rmtree(base, ignore_errors=True)
