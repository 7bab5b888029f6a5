"""Grade the OPEN entries of tests/mistakes/<assignment>.py (known grader gaps) and print which
now lose points: the quick loop for closing a gap (an entry that loses exactly its ``fails``,
with ``says`` in the first one's message, can move from OPEN to MISTAKES).

    .venv/bin/python tests/grade_open.py decoding [run_seed]
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the repository: tests.support

from autograder import notebook as nbio  # noqa: E402
from autograder.engines.local import Engine  # noqa: E402
from tests.support.catalogue import SUITES, source_notebook, with_cell  # noqa: E402


def main(assignment, seed=1):
    src = source_notebook(assignment)
    template = nbio.release_from_source(src)
    engine = Engine(jobs=2, assignments=[assignment], run_seed=seed)
    try:
        entries = getattr(SUITES[assignment], "OPEN", [])
        futures = {
            m["name"]: engine.submit_notebook(
                assignment, template, with_cell(src, m["cell"], m["source"])
            )[0]
            for m in entries
        }
        for m in entries:
            verdicts = futures[m["name"]].result().verdicts
            failed = sorted(g for g, v in verdicts.items() if not v.passed)
            said = failed and m.get("says", "") in verdicts[m["fails"][0]].message
            state = "closed" if failed == sorted(m["fails"]) and said else "open"
            print(f"{state:6} {m['name']}: failed {failed}, expected {sorted(m['fails'])}")
    finally:
        engine.close()


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 1)
