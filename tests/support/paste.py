"""A student's reading of a counterexample: paste the feedback's inputs and the notebook's cells
into a fresh Python, call the function the feedback names, and look at what it printed.

A feedback message whose inputs block says "그대로 붙여 넣어 실행할 수 있습니다" prints each input
as ``name = <Python>`` and, before it, what the result was: a value at a position ("위치 [0, 2]:
기대값 E, 결과 G", "위치 [1]에서 E이어야 하는데 G입니다"), a shape ("shape이 (3, 8)이어야 하는데
(3, 14)입니다") or a scalar ("[1]: E이어야 하는데 G입니다"). :func:`counterexample` reads that,
:func:`reproduce` runs many of them in one subprocess (a fresh namespace each) and returns what
each call gave there.
"""

import ast
import json
import re
import subprocess
import sys

CLAIM = "입력 (그대로 붙여 넣어 실행할 수 있습니다):\n"
AT = re.compile(r"위치 (\[[\d, ]*\]): 기대값 (\S+), 결과 (\S+)\n")
AT_EXACT = re.compile(r"위치 (\[[\d, ]*\])에서 (\S+)이어야 하는데 (\S+)입니다\n")
SHAPE = re.compile(r"shape이 (\([\d, ]*\))이어야 하는데 (\([\d, ]*\))입니다")
NUMBER = r"(-?[\d.]+(?:e[+-]?\d+)?|-?inf|nan)"
SCALAR = re.compile(rf": {NUMBER}이어야 하는데 {NUMBER}입니다")
PART = re.compile(r"[\])]\[(\d+)\]: ")  # "...][1]: ", "-> (output, weights)[0]: "

RUNNER = r"""
import inspect, json, sys
import torch

jobs, out = json.load(open(sys.argv[1], encoding="utf-8")), {}
for key, job in jobs.items():
    torch.set_default_dtype(torch.float32)
    ns = {"__name__": "__main__"}
    try:
        for src in job["cells"]:
            exec(src, ns)
        exec(job["inputs"], ns)
        fn = ns[job["fn"]]
        if isinstance(fn, type):  # a module: its weights are the grader's, not in the inputs
            out[key] = ["module", None]
            continue
        values = [ns[name] for name in job["names"]]
        try:  # by the inputs' names, else in their order (e.g. *masks)
            call = inspect.signature(fn).bind(**dict(zip(job["names"], values)))
        except TypeError:
            try:
                call = inspect.signature(fn).bind(*values)
            except TypeError as e:  # e.g. merge_heads(split_heads(x)): not one call
                out[key] = ["unbound", str(e)]
                continue
        got = fn(*call.args, **call.kwargs)
        if job["part"] is not None:
            got = got[job["part"]]
        if job["kind"] == "shape":
            out[key] = ["ok", list(got.shape)]
        else:
            value = got[tuple(job["at"])] if job["at"] is not None else got
            out[key] = ["ok", value.item() if hasattr(value, "item") else value]
    except Exception as e:  # a paste that does not run is what the test reports
        out[key] = ["error", f"{type(e).__name__}: {e}"[:300]]
print(json.dumps(out))
"""


def counterexample(message, cells):
    """The job that replays ``message``'s counterexample with the notebook ``cells`` (given and
    solution cells, in order), or None when the message claims no paste-runnable inputs or
    prints no result it can be compared with."""
    if CLAIM not in message:
        return None
    head, block = message.split(CLAIM, 1)
    fn = re.match(r"(?:\[[^\]]*\] )?([A-Za-z_]\w*)", head)  # after a leading "[case] "
    if re.match(r"(?:\[[^\]]*\] )?[A-Za-z_]\w*\([A-Za-z_]\w*\(", head):
        return None  # a composition, e.g. merge_heads(split_heads(x)): not one call
    lines = [ln[2:] for ln in block.split("\n") if ln.startswith("  ") and " = " in ln]
    part = PART.search(head)
    job = {
        "cells": list(cells),
        "inputs": "\n".join(lines),
        "names": [ln.split(" = ", 1)[0] for ln in lines],
        "fn": fn.group(1) if fn else "",
        "part": int(part.group(1)) if part else None,
        "at": None,
    }
    if m := AT.search(head) or AT_EXACT.search(head):
        return dict(job, kind="value", at=json.loads(m.group(1)), printed=m.group(3))
    if m := SHAPE.search(head):
        return dict(job, kind="shape", printed=m.group(2))
    if m := SCALAR.search(head):
        return dict(job, kind="value", printed=m.group(2))
    return None


def reproduce(jobs, cwd):
    """{key: ("ok", value) or ("error", text)}: each job of ``jobs`` run in one fresh Python
    process (a namespace of its own per job) with ``cwd`` as its folder."""
    path = f"{cwd}/paste_jobs.json"
    with open(path, "w", encoding="utf-8") as f:
        json.dump(jobs, f)
    proc = subprocess.run(
        [sys.executable, "-c", RUNNER, path], capture_output=True, text=True, cwd=cwd, timeout=600
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return {k: tuple(v) for k, v in json.loads(proc.stdout.strip().splitlines()[-1]).items()}


def matches(job, result):
    """The pasted call gave what the feedback printed (a value printed to 6 digits); a module's
    counterexample, or one whose inputs do not bind to the function it names (a composition
    such as ``merge_heads(split_heads(x))``), is not replayed: see :data:`RUNNER`."""
    status, value = result
    if status in ("module", "unbound"):
        return True
    if status != "ok":
        return False
    if job["kind"] == "shape":
        return tuple(value) == ast.literal_eval(job["printed"])
    if job["printed"] in ("True", "False"):
        return value == (job["printed"] == "True")
    printed = float(job["printed"])
    if printed != printed:
        return value != value
    return value == printed or abs(value - printed) <= 1e-5 * max(1.0, abs(printed))
