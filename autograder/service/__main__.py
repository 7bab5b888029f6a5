"""``python -m autograder.service serve --course DIR --state DIR``: the grading service.

Started by JupyterHub as a managed service (hub/jupyterhub_config.py), as the grader's own
system user; refuses to run as root.
"""

import argparse
import logging
import sys
from pathlib import Path


def parse(argv):
    p = argparse.ArgumentParser(prog="python -m autograder.service")
    sub = p.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("serve", help="grade submissions from the exchange as they come")
    s.add_argument("--course", required=True, help="the instructor's course root (its config)")
    s.add_argument("--state", required=True, help="the service's own folder (queue, gradebook)")
    s.add_argument("--jobs", type=int, default=None, help="judges (default: cores)")
    s.add_argument("--poll", type=float, default=0.5, help="seconds between inbound scans")
    s.add_argument(
        "--students-group",
        default="",
        help="refuse to start while this group's home folders are readable",
    )
    s.add_argument(
        "--any-owner",
        action="store_true",
        help="accept submissions whose folder the named student does not own (tests only)",
    )
    s.add_argument(
        "--unsafe-no-sandbox",
        dest="unsafe",
        action="store_true",
        help="UNSAFE: run student code WITHOUT bubblewrap (throw-away machines only)",
    )
    return p.parse_args(argv)


def main(argv=None):
    from autograder.nbgrader.fixes import without_iri_checker

    without_iri_checker()
    args = parse(sys.argv[1:] if argv is None else argv)
    fmt = "%(asctime)s %(levelname)s %(name)s %(message)s"
    logging.basicConfig(level=logging.WARNING, format=fmt, force=True)
    log = logging.getLogger("autograder.service")
    log.setLevel(logging.INFO)
    Path(args.state).mkdir(parents=True, exist_ok=True)
    to_file = logging.FileHandler(Path(args.state) / "service.log", encoding="utf-8")
    to_file.setFormatter(logging.Formatter(fmt))
    log.addHandler(to_file)
    from autograder.service import server

    return server.main(args)


if __name__ == "__main__":
    sys.exit(main())
