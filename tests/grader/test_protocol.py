"""The declared protocols (autograder/sandboxed/protocol.py) and the rule they carry: what the
judge measured itself is evidence, read by type, and a child that forges it changes nothing."""

import pytest
import torch

from autograder.judge import sandbox as sbx
from autograder.judge.checking import CheckFailed
from autograder.judge.grading import Grading, SandboxBackend
from autograder.sandboxed import protocol
from autograder.sandboxed.child import Child

EVIDENCE = sorted(
    {f.name for op in protocol.OPERATIONS for f in op.reply if f.kind == protocol.EVIDENCE}
)
HINTS = sorted({f.name for op in protocol.OPERATIONS for f in op.reply if f.kind == protocol.HINT})

# the student's code changes its input in place and, in the forging variant, rewrites every reply
# of its child so that each evidence field's name (and each hint's) carries a forged value: nothing
# changed, nothing seen
HONEST = (
    "def f(x):\n"
    "    x.add_(1.0)\n"
    "    return x * 2\n"
    "class M(nn.Module):\n"
    "    def __init__(self):\n"
    "        super().__init__()\n"
    "        self.w = nn.Parameter(torch.ones(3))\n"
    "    def forward(self, x):\n"
    "        x.mul_(2.0)\n"
    "        return x * self.w\n"
)
FORGE = (
    "import sys\n"
    "_wire = sys.modules['autograder.sandboxed.wire']\n"
    "_encode = _wire.encode\n"
    "def _forged(header, values=None):\n"
    "    if isinstance(values, dict):\n"
    "        values = dict(values, **{name: [] for name in FORGED})\n"
    "    return _encode(header, values)\n"
    "_wire.encode = _forged\n"
)


def test_every_operation_is_declared_once_and_evidence_is_never_a_reply_field():
    names = [(op.protocol, op.name) for op in protocol.OPERATIONS]
    assert len(names) == len(set(names))
    assert EVIDENCE == ["changed"]
    for op in protocol.OPERATIONS:
        kinds = {f.name: f.kind for f in op.reply}
        assert len(kinds) == len(op.reply), op.name  # a field name has one kind
    reply = protocol.child_reply("call", {"value": 1, "changed": [], "mutated": ["x"], "junk": 2})
    assert reply.values == {"value": 1, "mutated": ["x"]}  # evidence and undeclared fields dropped
    assert reply.evidence == protocol.Evidence()


def test_the_child_serves_exactly_the_declared_judge_child_operations():
    served = {name[3:] for name in vars(Child) if name.startswith("op_")}
    declared = {
        op.name
        for op in protocol.OPERATIONS
        if op.protocol == protocol.JUDGE_CHILD and op.sender == "judge" and op.name != "bye"
    }
    assert served == declared


@pytest.fixture(scope="module")
def sandbox():
    with sbx.Sandbox(limits=sbx.SandboxLimits(wall_s=20)) as sb:
        sb.start()
        yield sb


def verdicts(sandbox, cells):
    """The messages of a call and a module check on ``cells`` (both change an input in place)."""
    out = []
    grading = Grading(SandboxBackend(sandbox), cells, 7, cells)
    try:
        student = grading.student("t", torch.device("cpu"))
        with pytest.raises(CheckFailed) as call:
            student.call("f", torch.zeros(4))
        with pytest.raises(CheckFailed) as module:
            student.module("M", inputs=[torch.ones(2, 3)])
        out = [str(call.value), str(module.value)]
    finally:
        grading.end_function()
    return out


def test_a_child_forging_every_evidence_field_changes_no_verdict(sandbox):
    """The in-place edit is caught by the judge's reading of the shared inputs alone: a child
    that clears its hints and forges every evidence field gets the honest child's messages."""
    honest = verdicts(sandbox, [HONEST])
    assert all("제자리에서(in-place)" in m for m in honest), honest
    forged = verdicts(sandbox, [f"FORGED = {EVIDENCE + HINTS!r}\n" + FORGE, HONEST])
    assert forged == honest
