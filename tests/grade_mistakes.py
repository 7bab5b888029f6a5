"""Grade one assignment's mistakes (and correct variants) now and print each verdict: the quick
loop for writing tests/mistakes/<assignment>.py (tests/grader/test_mistakes.py grades them all).

    .venv/bin/python tests/grade_mistakes.py softmax [name ...]

Prints, per notebook, the items it failed (expected ones first) and a line when the result
differs from the entry's ``fails`` and ``says`` (a mistake) or from full marks (a correct
variant), as tests/grader/test_mistakes.py judges them.
"""

import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the repository: tests.support

from autograder.engines.local import Engine  # noqa: E402
from autograder.report import MISCONCEPTION  # noqa: E402
from tests.support.catalogue import SUITES, notebooks  # noqa: E402

RULE_KINDS = {"device", "in-place", "forbidden", "randomness"}
# what a generic failure says: a crash, a failing public test cell, a value or type mismatch
# (checking.assert_close, expect_tensor) with its counterexample
GENERIC = re.compile(
    r"실행 중 오류|공개 테스트|값이 다릅니다|이어야 하는데|필요한데|NaN/inf가 있습니다"
)
NAMED = ("catalogue", "rule", "statement")


def diagnosis_kind(entry, message):
    """'catalogue' when the message names a catalogued misconception (a check's catalogue, or a
    runtime error the judge recognises), 'rule' when the mistake is of a kind a grader rule
    names (device, in-place edit, forbidden function, global random state, dtype), 'statement'
    when the first line is a check's own statement of the rule the code broke (e.g. "h 가 h_kv
    의 배수가 아니면 ValueError 를 일으켜야 합니다"), else 'counterexample' (a generic mismatch
    or crash with its inputs). Read the statements (printed with each mistake) to see that
    each names the mistake."""
    if MISCONCEPTION in message:
        return "catalogue"
    if entry["kind"] in RULE_KINDS or re.search(r"dtype이 \S+이어야 하는데", message):
        return "rule"
    if not GENERIC.search(message.split("\n", 1)[0]):
        return "statement"
    return "counterexample"


def main(assignment, names=()):
    suite = SUITES[assignment]
    mistakes = {m["name"]: m for m in suite.MISTAKES}
    entries = {m["name"]: m for m in suite.MISTAKES + getattr(suite, "CORRECT", [])}
    todo = {
        k: v for k, v in notebooks().items() if k[0] == assignment and (not names or k[1] in names)
    }
    engine = Engine(assignments=[assignment], run_seed=1)  # a judge per core
    try:
        futures = {k: engine.submit_notebook(k[0], t, nb)[0] for k, (t, nb) in todo.items()}
        bad, named = 0, {}
        for (_, name), future in futures.items():
            verdicts = future.result().verdicts
            failed = sorted(g for g, v in verdicts.items() if not v.passed)
            entry = entries.get(name, {})
            want = sorted(entry.get("fails", [])) if name != "release" else failed
            if name == "source":
                want = []
            ok = failed == want
            says = entry.get("says")
            if ok and failed and says and says not in verdicts[entry["fails"][0]].message:
                ok, want = False, f"{want} with {says!r} in {entry['fails'][0]}'s message"
            bad += not ok
            kind = ""
            if name in mistakes and failed:
                kind = diagnosis_kind(mistakes[name], verdicts[failed[0]].message)
                named[kind] = named.get(kind, 0) + 1
            print(f"{'ok ' if ok else 'BAD'} {name}: failed {failed}, expected {want} {kind}")
            for g in failed:
                print(f"      {g}: {verdicts[g].message[:300]!r}")
        print(f"{bad} of {len(futures)} differ from their entry")
        print(
            f"feedback names the mistake for {sum(named.get(k, 0) for k in NAMED)} of "
            f"{len(mistakes)} mistakes ({named.get('catalogue', 0)} by a misconception "
            f"catalogue, {named.get('rule', 0)} by a grader rule: device, in-place, forbidden, "
            f"random, dtype; {named.get('statement', 0)} by a check's statement of the rule)"
        )
    finally:
        engine.close()


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2:])
