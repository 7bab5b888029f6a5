"""The grader's three protocols, declared: every operation, who sends it, and what each field of
a reply is worth to a verdict.

- engine <-> judge process: JSON lines on a socket pair; both ends are trusted
  (engines/local.py, judge/process.py).
- judge <-> zygote: JSON datagrams on the sandbox's control socket; ``spawn`` carries the fd of
  a fresh socket to the judge (judge/sandbox.py, zygote.py).
- judge <-> child: wire frames (wire.py), one reply per request; while a request runs, the child
  may ask questions about given helpers (given.py), which the judge answers.

A field of a reply from the sandbox is one of:

- ``RESULT``: the student's answer, which the check validates and compares with the reference
  (forging it is giving a wrong answer);
- ``HINT``: what the sandbox says about itself (an input it changed, a device error it
  swallowed, a generator it drew from, its zygote's status): code in the sandbox can forge it,
  so a hint can only cost points;
- ``EVIDENCE``: what the judge measured itself (the inputs' shared memory read back after the
  call). Never read from a reply: :func:`child_reply` drops every field the operation does not
  declare as RESULT or HINT, and puts the judge's own measurements in :class:`Evidence`, a type
  of its own, so no ordering of lines can let a hint stand in for evidence.

Messages between trusted processes are ``TRUSTED``. Standard library only: the sandbox imports
this module too.
"""

from dataclasses import dataclass, field

RESULT, HINT, EVIDENCE, TRUSTED = "result", "hint", "evidence", "trusted"
ENGINE_JUDGE, JUDGE_ZYGOTE, JUDGE_CHILD = "engine <-> judge", "judge <-> zygote", "judge <-> child"


@dataclass(frozen=True)
class Field:
    name: str
    kind: str  # RESULT, HINT, EVIDENCE or TRUSTED
    doc: str


@dataclass(frozen=True)
class Operation:
    """One message kind: its ``request`` fields, sent by ``sender``, and the fields of the
    answer (``reply``; empty for a message that gets none)."""

    protocol: str
    name: str
    sender: str
    request: tuple[str, ...]
    reply: tuple[Field, ...] = ()


def _f(name, kind, doc):
    return Field(name, kind, doc)


CHANGED = _f("changed", EVIDENCE, "blob keys of the input tensors whose bytes the call changed")
MUTATED = _f("mutated", HINT, "labels of input tensors the child saw changed (e.g. GPU copies)")
DEVICE_HINTS = (
    _f("host", HINT, "a result tensor is on the host while the inputs were on the GPU"),
    _f("caught", HINT, "the device error the student's code swallowed"),
    _f("generators", HINT, "device types of the generators the call drew from"),
    _f("moved", HINT, "the call moved a CPU tensor (not 0-dim) to the GPU"),
    _f("global_rng_used", HINT, "the call drew from the global generator (rng_check)"),
)

OPERATIONS = (
    # engine <-> judge process (judge/process.py JudgeLoop; engines/local.py Judge)
    Operation(ENGINE_JUDGE, "ready", "judge", ("errors",)),
    Operation(ENGINE_JUDGE, "limits", "engine", ("limits",)),
    Operation(
        ENGINE_JUDGE,
        "grade",
        "engine",
        ("id", "assignment", "grade_ids", "cells", "solutions", "public"),
        (_f("report", TRUSTED, "Report.to_data() of the submission"),),
    ),
    # judge <-> zygote (judge/sandbox.py Sandbox; zygote.py main)
    Operation(JUDGE_ZYGOTE, "ready", "zygote", ("pid",)),
    Operation(JUDGE_ZYGOTE, "huge", "judge", ("regions",)),
    Operation(
        JUDGE_ZYGOTE,
        "spawn",
        "judge",
        ("uid", "limits", "wall_s", "block"),
        (_f("status", HINT, "how the child ended: exit, signal N, timeout, dirty"),),
    ),
    Operation(JUDGE_ZYGOTE, "kill", "judge", ()),
    # judge <-> child (judge/student.py, judge/grading.py; child.py Child)
    Operation(
        JUDGE_CHILD,
        "load",
        "judge",
        ("cells", "labels", "editable", "code", "block", "given"),
        (_f("errors", HINT, "errors the cells raised, shown in messages"),),
    ),
    Operation(
        JUDGE_CHILD,
        "call",
        "judge",
        ("name", "args", "kwargs"),
        (
            _f("value", RESULT, "what the student's function returned"),
            MUTATED,
            _f("relaid", HINT, "dict or list arguments whose items changed"),
            _f("aliases", HINT, "the result shares memory with an input"),
            *DEVICE_HINTS,
            CHANGED,
        ),
    ),
    Operation(
        JUDGE_CHILD,
        "module",
        "judge",
        ("name", "init_kwargs", "state_dict", "inputs", "input_kwargs", "train", "seed", "grad"),
        (
            _f("output", RESULT, "the method's output"),
            _f("state", RESULT, "state_dict after init, before loading"),
            _f("grads", RESULT, "gradients of parameters and inputs"),
            _f("after_step", RESULT, "the method's output after one SGD step"),
            MUTATED,
            *DEVICE_HINTS,
            CHANGED,
        ),
    ),
    Operation(
        JUDGE_CHILD, "has", "judge", ("name",), (_f("value", RESULT, "the name is defined"),)
    ),
    Operation(JUDGE_CHILD, "exec", "judge", ("source",)),
    Operation(JUDGE_CHILD, "bye", "judge", ()),
    Operation(
        JUDGE_CHILD,
        "given",
        "child",
        ("args", "kwargs", "module", "init", "grads"),
        (_f("value", TRUSTED, "the judge's answer: the reference helper's result"),),
    ),
)
BY_NAME = {(op.protocol, op.name): op for op in OPERATIONS}


def operation(protocol, name):
    """The declared Operation; KeyError for an undeclared one."""
    return BY_NAME[protocol, name]


def fields(protocol, name, kind):
    """Names of the reply fields of ``name`` of the given ``kind``."""
    return {f.name for f in operation(protocol, name).reply if f.kind == kind}


@dataclass(frozen=True)
class Evidence:
    """What the judge measured itself during one child request."""

    changed: tuple[str, ...] = ()


@dataclass(frozen=True)
class ChildReply:
    """A child's reply to ``op`` as the judge reads it: ``values``, the RESULT and HINT fields the
    operation declares (whatever else the child sent is dropped), and ``evidence``, the judge's
    own measurements."""

    op: str
    values: dict = field(default_factory=dict)
    evidence: Evidence = Evidence()

    def hint(self, name, default=None):
        assert name in fields(JUDGE_CHILD, self.op, HINT), name
        return self.values.get(name, default)


def child_reply(op, values, evidence=Evidence()):
    """The ChildReply of a reply to ``op`` whose values are ``values`` (the child's data)."""
    allowed = fields(JUDGE_CHILD, op, RESULT) | fields(JUDGE_CHILD, op, HINT)
    return ChildReply(op, {k: v for k, v in values.items() if k in allowed}, evidence)
