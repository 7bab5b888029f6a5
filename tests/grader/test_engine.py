"""Grading engine: wire format, validation, notebook rebuild, sandbox limits, nbgrader round trip.

Uses the fixture course tests/fixtures/grader_course (assignment `demo`, pytest checks in
fixture_checks/demo.py whose references are plain torch functions, not the engine).
"""

import json
import math
import os
import re
import shutil
import struct
import subprocess
import sys
import time
import uuid
from pathlib import Path

import nbformat
import numpy as np
import pytest
import torch

from autograder import notebook as nbio
from autograder.engines.local import Engine
from autograder.judge import bwrap
from autograder.judge import sandbox as sbx
from autograder.judge.checking import CheckFailed, assert_close, expect_tensor, source
from autograder.judge.diagnosis import StudentCrashed, StudentTimeout
from autograder.judge.grading import Grading, SandboxBackend
from autograder.report import MISCONCEPTION
from autograder.sandboxed import wire
from autograder.sandboxed.protocol import child_reply
from autograder.seeds import new_run_seed

REPO = Path(__file__).resolve().parents[2]
FIXTURE = REPO / "tests" / "fixtures" / "grader_course"
CHECKS = FIXTURE / "fixture_checks"
BIN = Path(sys.executable).parent

GOOD = {
    "softmax_sol": "def softmax(x, dim=-1):\n    return torch.softmax(x, dim=dim)\n",
    "scale_sol": (
        "class Scale(nn.Module):\n    def __init__(self, d):\n        super().__init__()\n"
        "        self.weight = nn.Parameter(torch.ones(d))\n\n"
        "    def forward(self, x):\n        return x * self.weight\n"
    ),
}
NAIVE = "def softmax(x, dim=-1):\n    return x.exp() / x.exp().sum(dim, keepdim=True)\n"


# ----------------------------------------------------------------------------- wire


def reader(data):
    """recv(n) over a byte string."""
    buf = [data]

    def recv(n):
        out, buf[0] = buf[0][:n], buf[0][n:]
        return out

    return recv


def roundtrip(values, device=None):
    head, blob = wire.read_frame(reader(wire.encode({"op": "x"}, values)))
    return wire.decode(head, blob, device=device)


def test_wire_roundtrip_keeps_types_values_and_dtypes():
    x = torch.randn(3, 4, dtype=torch.float64)
    vals = {
        "a": [1, 2.5, float("inf"), True, None, "텍스트"],
        "b": (x, torch.tensor([True, False]), torch.arange(3, dtype=torch.int32)),
        "c": {"k": torch.ones(2, dtype=torch.bfloat16), "n": -(2**62)},
    }
    header, out = roundtrip(vals)
    assert header == {"op": "x"}
    assert (
        out["a"][:2] == [1, 2.5]
        and out["a"][2] == float("inf")
        and out["a"][3:] == [True, None, "텍스트"]
    )
    assert (
        isinstance(out["b"], tuple)
        and torch.equal(out["b"][0], x)
        and out["b"][0].dtype == torch.float64
    )
    assert out["b"][1].dtype == torch.bool and out["b"][2].dtype == torch.int32
    assert out["c"]["k"].dtype == torch.bfloat16 and out["c"]["n"] == -(2**62)
    assert type(out["b"][0]) is torch.Tensor


def test_wire_carries_devices_and_refuses_meta_tensors():
    _, out = roundtrip({"d": torch.device("cpu"), "t": torch.ones(2)})
    assert out["d"] == torch.device("cpu") and out["t"].device.type == "cpu"
    # the receiver's device override moves devices and tensors alike (the check's device)
    head = json.dumps({"values": {"d": {"D": "cuda"}}}).encode()
    assert wire.decode(head, b"", device="cpu")[1]["d"] == torch.device("cpu")
    # a tensor without data cannot travel, nor can an unknown device
    with pytest.raises(wire.WireError):
        wire.encode({"ok": True}, {"m": torch.empty(3, device="meta")})
    for bad in ({"m": [2], "dtype": "float32"}, {"D": "tpu"}, {"D": "meta"}):
        with pytest.raises(wire.WireError):
            wire.decode(json.dumps({"values": {"v": bad}}).encode(), b"")


def test_wire_rejects_malformed_frames_and_values():
    good = wire.encode({"ok": True}, {"v": torch.ones(2)})
    bad_magic = b"XXXX" + good[4:]
    with pytest.raises(wire.WireError):
        wire.read_frame(reader(bad_magic))
    huge = wire.HEAD.pack(wire.MAGIC, wire.MAX_HEADER + 1, 0)
    with pytest.raises(wire.WireError):
        wire.read_frame(reader(huge))
    cases = [
        (b'{"values": {"v": {"t": "t9"}}}', b""),  # unknown tensor key
        (b'{"values": {"v": {"x": 1}}}', b""),  # unknown tag
        (b'{"values": {"v": NaN}}', b""),  # JSON constants are refused
        (b'{"values": {"v": {"t": "t0"}}}', b"\x80\x04pickle-bytes"),  # not safetensors
        (b"[1, 2]", b""),
    ]
    nested = {"l": []}
    node = nested
    for _ in range(wire.MAX_DEPTH + 2):
        child = {"l": []}
        node["l"].append(child)
        node = child
    cases.append((json.dumps({"values": {"v": nested}}).encode(), b""))
    for head, blob in cases:
        with pytest.raises(wire.WireError):
            wire.decode(head, blob)
    # a tensor claimed to be on a device this judge does not have is refused
    if not torch.cuda.is_available():
        frame = wire.encode({}, {"v": torch.ones(1)})
        hl, bl = struct.unpack("<IQ", frame[4:16])
        head = frame[16 : 16 + hl].replace(b'"dev": "cpu"', b'"dev": "cuda"')
        with pytest.raises(wire.WireError):
            wire.decode(head, frame[16 + hl :])


def test_wire_blob_is_a_safetensors_file_that_safetensors_itself_reads():
    """The frame's blob writer against safetensors' own loader (the independent oracle): every
    dtype the wire carries, a 0-dim, an empty and a transposed tensor, bit for bit (the
    transposed one arrives transposed)."""
    from safetensors.torch import load

    values = {str(d): torch.randn(2, 3).mul(50).to(d) for d in wire.DTYPES}
    values.update(
        scalar=torch.tensor(2.5),
        empty=torch.zeros(0, 4, dtype=torch.int64),
        transposed=torch.arange(12.0).view(3, 4).t(),
        nan=torch.tensor([float("nan"), -0.0]),
    )
    tensors = {}
    plain = wire.to_plain(values, tensors)
    blob = wire.safetensors_bytes(tensors)
    assert struct.unpack("<Q", blob[:8])[0] % 8 == 0  # the header is padded to 8 bytes
    loaded = load(blob)
    out = wire.from_plain(plain, loaded)
    for k, v in values.items():
        assert out[k].dtype == v.dtype and out[k].shape == v.shape, k
        assert out[k].contiguous().view(-1).view(torch.uint8).tolist() == (
            v.contiguous().view(-1).view(torch.uint8).tolist()
        ), k
    assert out["transposed"].stride() == values["transposed"].stride()  # the layout travels


def test_cells_compiled_by_the_judge_run_in_the_child_as_their_own_cells():
    """The judge compiles each cell once per submission and sends the code as data; the child
    takes only a code object named as that cell, else compiles the source itself (a cell that
    does not compile reports its own SyntaxError in the child)."""
    from autograder.judge.grading import wire_code
    from autograder.sandboxed import child as worker

    src = "def f(x):\n    return x + 1\n"
    data = wire_code(2, src)
    code = worker.cell_code(2, src, [None, None, data])
    namespace = {}
    exec(code, namespace)
    assert namespace["f"](1) == 2 and code.co_filename == "<solution cell 3>"
    assert wire_code(0, "def f(:\n") is None
    assert worker.cell_code(0, src, [data]) is None  # another cell's code
    assert worker.cell_code(0, src, ["def f(x): ..."]) is None
    assert worker.cell_code(0, src, None) is None
    sent = wire.encode({"op": "load"}, {"code": [data]})
    _, back = wire.decode(*wire.read_frame(reader(sent)))
    assert worker.cell_code(0, src, back["code"]) is None
    assert worker.cell_code(2, src, [None, None, back["code"][0]]).co_code == code.co_code


def test_the_zygote_lives_on_huge_pages_where_the_kernel_offers_them():
    """The judge reads the zygote's heaps from the host's /proc, and the zygote collapses them
    into transparent huge pages (fewer page-table entries for every fork and exit), wherever
    THP is not switched off."""
    mode = Path("/sys/kernel/mm/transparent_hugepage/enabled")
    thp = mode.exists() and "[never]" not in mode.read_text()
    with sbx.Sandbox(slot=7) as box:
        box.start()
        regions = sbx.anonymous_regions(box.proc.pid)
        assert regions and all(lo < hi for lo, hi in regions)
        rollup = Path(f"/proc/{sbx.zygote_pid(box.proc.pid)}/smaps_rollup")
        deadline = time.monotonic() + 10
        huge = 0
        while thp and huge == 0 and time.monotonic() < deadline:
            huge = int(re.search(r"AnonHugePages:\s+(\d+)", rollup.read_text()).group(1))
            time.sleep(0.1)
        assert huge > 0 or not thp


# ----------------------------------------------------------------------------- compare


def significant_digits(text):
    mantissa = text.lower().split("e")[0].replace("-", "").replace(".", "").strip("0")
    return max(1, len(mantissa))


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32, torch.float16, torch.bfloat16])
def test_counterexample_numbers_print_short_and_exact(dtype):
    """A counterexample's inputs print as numbers that give back the same tensor when pasted,
    and no longer than the shortest repr that round-trips (Python's for float64, NumPy's for
    float32 and float16; bfloat16 keeps 8 bits of mantissa: 4 digits at most): 0.7, not
    0.69999999999999996 (float64) or 0.699999988 (float32)."""
    values = [0.7, 1 / 3, -2.5e5, 3.0, 1e-8, 0.1 + 0.2, float("nan"), float("-inf")]
    t = torch.tensor(values, dtype=dtype)
    text = source(t)
    back = eval(text, {"torch": torch})
    assert back.dtype == dtype and torch.equal(back.isnan(), t.isnan())
    assert torch.equal(back.nan_to_num(), t.nan_to_num())
    printed = text[len("torch.tensor([") : text.index("], dtype")].split(", ")
    assert printed[0] == "0.7", text
    oracle = {torch.float64: repr, torch.float32: lambda v: str(np.float32(v))}
    oracle[torch.float16] = lambda v: str(np.float16(v))
    for number, v in zip(printed[:6], t[:6].tolist(), strict=True):
        if not math.isfinite(v):  # -2.5e5 is -inf in float16
            continue
        shortest = oracle[dtype](v) if dtype in oracle else "1234"
        assert significant_digits(number) <= significant_digits(shortest), (number, shortest)


def test_assert_close_validates_before_comparing():
    ref = torch.tensor([[0.25, 0.75], [0.5, 0.5]])
    assert_close(ref + 1e-7, ref)  # within tolerance
    for bad, word in [
        (ref.double(), "dtype"),
        (ref.T.contiguous()[:1], "shape"),
        (ref.tolist(), "Tensor"),
        (torch.tensor([[0.25, float("nan")], [0.5, 0.5]]), r"위치 \[0, 1\]"),
        (ref + 1e-2, "4개 중 4개"),
    ]:
        with pytest.raises(CheckFailed, match=word):
            assert_close(bad, ref, what="f(x)", inputs={"x": ref})
    with pytest.raises(CheckFailed, match="입력"):
        assert_close(ref * 2, ref, inputs={"x": ref})
    # -inf where the reference has -inf is accepted; elsewhere refused
    ref_inf = torch.tensor([float("-inf"), 0.0])
    assert_close(ref_inf.clone(), ref_inf)
    with pytest.raises(CheckFailed):
        assert_close(torch.tensor([0.0, 0.0]), ref_inf)
    with pytest.raises(CheckFailed, match="NaN"):
        expect_tensor(torch.tensor([1.0, float("inf")]))
    with pytest.raises(CheckFailed):
        assert_close(torch.tensor([1, 2]), torch.tensor([1, 3]))
    with pytest.raises(CheckFailed):
        assert_close((ref,), (ref, ref))


# ----------------------------------------------------------------------------- notebooks


def source_nb():
    return nbformat.read(FIXTURE / "source" / "demo" / "demo.ipynb", as_version=4)


def test_assert_close_names_the_misconception_a_wrong_result_matches():
    """A check's catalogue maps a diagnosis to the value that mistake gives: a wrong result
    equal to one (dtype aside) is named before the counterexample; others are not, and a
    catalogue entry that cannot be computed is skipped."""
    x = torch.tensor([1.0, 2.0, 3.0])
    expected = torch.softmax(x / 2, -1)
    known = {
        "broken entry": lambda: 1 / 0,
        "not for these inputs": lambda: None,
        "temperature ignored": lambda: torch.softmax(x.double(), -1),
    }
    with pytest.raises(CheckFailed) as e:
        assert_close(torch.softmax(x, -1), expected, "softmax", {"x": x}, misconceptions=known)
    first, rest = str(e.value).split("\n", 1)
    assert first == "softmax: 흔한 실수로 보입니다. temperature ignored"
    assert "기대값" in rest and "입력" in rest  # the counterexample still follows
    with pytest.raises(CheckFailed) as e:
        assert_close(torch.zeros(3), expected, "softmax", misconceptions=known)
    assert "흔한 실수" not in str(e.value)
    assert_close(expected.clone(), expected, misconceptions=known)  # right: nothing computed
    # wrong only in dtype: a misconception that rounds to the right answer is not named
    x64 = x.double()
    same = {"no shift (same values here)": lambda: torch.exp(x64) / torch.exp(x64).sum()}
    with pytest.raises(CheckFailed) as e:
        assert_close(torch.softmax(x64, -1).float(), torch.softmax(x64, -1), misconceptions=same)
    assert "흔한 실수" not in str(e.value) and "dtype" in str(e.value)


def test_release_template_hides_solutions_and_hidden_tests():
    rel = nbio.release_from_source(source_nb())
    text = json.dumps(rel)
    assert "amax" not in text and "BEGIN SOLUTION" not in text
    assert "SECRET_HIDDEN_MARKER" not in text and "NotImplementedError" in text
    assert nbio.test_cells(rel) == [("test_softmax", 2.0), ("test_scale", 3.0)]


def test_read_submission_survives_broken_files(tmp_path):
    rel = nbio.release_from_source(source_nb())
    good = nbio.rebuild(rel, rel)
    for c in good.cells:
        if nbio.grade_id(c) in GOOD:
            c.source = GOOD[nbio.grade_id(c)]
    files = {
        "bad.ipynb": b"{not json",
        "latin1.ipynb": json.dumps(good, ensure_ascii=False)
        .replace("return torch.softmax", "# \u00e9\\nreturn torch.softmax")
        .encode("utf-8")
        .replace("\u00e9".encode(), b"\xe9"),
        "list.ipynb": b"[1, 2, 3]",
        "nocells.ipynb": b'{"cells": 5}',
        "v3.ipynb": json.dumps(
            {
                "nbformat": 3,
                "nbformat_minor": 0,
                "metadata": {},
                "worksheets": [{"cells": [{"cell_type": "code", "input": "x = 1", "outputs": []}]}],
            }
        ).encode(),
    }
    for name, data in files.items():
        (tmp_path / name).write_bytes(data)
    nb, problems = nbio.read_submission(tmp_path / "bad.ipynb")
    assert nb.cells == [] and "올바른 JSON이 아니라서(1행 2열)" in problems[0]
    nb, problems = nbio.read_submission(tmp_path / "latin1.ipynb")
    assert any("UTF-8" in p for p in problems)
    src = nbio.student_sources(rel, nb)
    assert "\ufffd" in src["softmax_sol"] and "return torch.softmax" in src["softmax_sol"]
    for name in ("list.ipynb", "nocells.ipynb"):
        nb, problems = nbio.read_submission(tmp_path / name)
        assert nb.cells == [] and problems
    nb, problems = nbio.read_submission(tmp_path / "v3.ipynb")
    assert [c.source for c in nb.cells] == ["x = 1"] and "nbformat 3" in problems[0]


def test_read_submission_refuses_symlinks_and_special_files(tmp_path):
    secret = tmp_path / "source.ipynb"
    secret.write_text(json.dumps(source_nb()))  # the instructor's notebook with solutions
    (tmp_path / "link.ipynb").symlink_to(secret)
    os.mkfifo(tmp_path / "fifo.ipynb")  # would block a plain open()
    (tmp_path / "linkdir").symlink_to(tmp_path)
    for name in ("link.ipynb", "fifo.ipynb", "linkdir/source.ipynb"):
        nb, problems = nbio.read_submission(tmp_path / name)
        assert nb.cells == [] and problems, name
    nb, _ = nbio.read_submission(secret)
    assert "amax" in json.dumps(nb)  # the same file read directly is parsed (oracle)


def test_a_trusted_notebook_is_read_once_per_version_and_handed_out_as_copies(tmp_path):
    path = tmp_path / "demo.ipynb"
    shutil.copy(FIXTURE / "source" / "demo" / "demo.ipynb", path)
    first = nbio.read_trusted(path)
    first.cells[0].source = "changed by a caller"
    second = nbio.read_trusted(path)
    assert second.cells[0].source != "changed by a caller"
    assert second == nbformat.read(str(path), as_version=4)  # nbformat's own reading
    nb = nbformat.read(str(path), as_version=4)
    nb.cells[0].source = "a new release"
    nbformat.write(nb, str(path))
    os.utime(path, ns=(time.time_ns(), time.time_ns() + 10**9))  # another version of the file
    assert nbio.read_trusted(path).cells[0].source == "a new release"


def test_rebuild_takes_only_solution_sources_from_submission():
    rel = nbio.release_from_source(source_nb())
    sub = nbformat.from_dict(json.loads(json.dumps(rel)))
    for c in sub.cells:
        meta = c.metadata.get("nbgrader", {})
        if meta.get("grade_id") == "softmax_sol":
            c.source = NAIVE
        if meta.get("grade_id") == "test_softmax":
            c.source = "pass"  # edited test cell
            meta["points"] = 100
        if meta.get("grade_id") == "test_scale":
            c.metadata = {}  # metadata deleted
    dup = nbformat.v4.new_code_cell("def softmax(x, dim=-1): return x")
    dup.metadata["nbgrader"] = {"grade_id": "softmax_sol", "solution": True}
    sub.cells.append(dup)  # duplicated grade_id, both filled: the last one wins, noted
    sub.cells.insert(0, nbformat.v4.new_code_cell("import os"))  # extra cell: ignored
    nb = nbio.rebuild(rel, sub)
    assert nbio.test_cells(nb) == [("test_softmax", 2.0), ("test_scale", 3.0)]
    assert nbio.solution_code(nb)[0] == dup.source
    assert "'softmax_sol'이(가) 2개" in nbio.match_cells(rel, sub)[1][0]
    assert "import os" not in json.dumps(nb) and "pass" != nb.cells[3].source
    assert len(nb.cells) == len(rel.cells)


# ----------------------------------------------------------------------------- sandbox


@pytest.fixture(scope="module")
def sandbox():
    with sbx.Sandbox(limits=sbx.SandboxLimits(wall_s=20)) as sb:
        sb.start()
        yield sb


def run_call(sandbox, cells, name, *args, **kwargs):
    """Load ``cells`` in a fresh child and call ``name``: (value, None) or (None, CheckFailed)."""
    grading = Grading(SandboxBackend(sandbox), cells, new_run_seed(), cells)
    try:
        return grading.student("t", torch.device("cpu")).call(name, *args, **kwargs), None
    except CheckFailed as e:
        return None, e
    finally:
        grading.end_function()


@pytest.fixture(scope="module")
def demo_engine():
    eng = Engine(jobs=2, checks_dir=CHECKS, assignments=["demo"])
    yield eng
    eng.close()


def grade_demo(engine, cells):
    return engine.submit("demo", ["test_softmax", "test_scale"], cells, cells).result().verdicts


def test_correct_and_wrong_solutions(demo_engine):
    good = grade_demo(demo_engine, list(GOOD.values()))
    assert all(v.passed for v in good.values()), good
    bad = grade_demo(demo_engine, [NAIVE])
    assert not bad["test_softmax"].passed and "nan" in bad["test_softmax"].message
    assert "입력" in bad["test_softmax"].message  # counterexample shown
    assert not bad["test_scale"].passed and "Scale" in bad["test_scale"].message
    assert bad["test_softmax"].outcome == "failed"


def test_a_failing_public_test_costs_its_item_once(demo_engine):
    """The notebook's own test cells run too: one that fails costs its item although the hidden
    checks pass; one that fails because it calls a function another item already failed on
    does not cost its own item as well (one mistake, one item)."""
    cells = list(GOOD.values())
    public = {
        "test_softmax": "assert softmax(torch.zeros(2)).sum() == 1\nassert 1 == 2, 'wrong'\n",
        "test_scale": "Scale(3)\n",
    }
    verdicts = demo_engine.submit("demo", list(public), cells, cells, public=public).result()
    msg = verdicts.verdicts["test_softmax"].message
    assert not verdicts.verdicts["test_softmax"].passed and "공개 테스트" in msg
    assert "AssertionError: wrong (테스트 셀 2행: `assert 1 == 2, 'wrong'`)" in msg, msg
    assert verdicts.verdicts["test_scale"].passed
    # Scale wrong: its item fails; softmax's public test calling Scale is not charged again
    wrong_scale = GOOD["scale_sol"].replace("x * self.weight", "x + self.weight")
    public["test_softmax"] = "assert softmax(torch.zeros(2)).sum() == 1\nScale(2)(torch.ones(2))\n"
    public["test_softmax"] += "assert torch.equal(Scale(2)(torch.ones(2)), torch.ones(2))\n"
    cells = [GOOD["softmax_sol"], wrong_scale]
    verdicts = demo_engine.submit("demo", list(public), cells, cells, public=public).result()
    assert not verdicts.verdicts["test_scale"].passed
    assert verdicts.verdicts["test_softmax"].passed, verdicts.verdicts["test_softmax"].message
    assert good_public_test_passes(demo_engine)


def test_public_tests_run_in_one_child_and_a_crash_costs_only_its_item(demo_engine):
    """The notebook's test cells run one after another in one child, as in the notebook; one
    that kills its child costs its own item only: the cells after it get a new child."""
    cells = list(GOOD.values())
    public = {
        "test_softmax": "import builtins\nbuiltins.seen_by_next_cell = 1\n",
        "test_scale": "import builtins\nassert builtins.seen_by_next_cell == 1\n",
    }
    verdicts = demo_engine.submit("demo", list(public), cells, cells, public=public).result()
    assert all(v.passed for v in verdicts.verdicts.values()), verdicts.verdicts
    public = {"test_softmax": "import os\nos._exit(3)\n", "test_scale": "Scale(3)\n"}
    verdicts = demo_engine.submit("demo", list(public), cells, cells, public=public).result()
    assert verdicts.verdicts["test_softmax"].outcome == "crash"
    assert "공개 테스트" in verdicts.verdicts["test_softmax"].message
    assert verdicts.verdicts["test_scale"].passed, verdicts.verdicts["test_scale"].message


def good_public_test_passes(engine):
    public = {"test_softmax": "assert torch.allclose(softmax(torch.zeros(2)), torch.ones(2) / 2)"}
    cells = list(GOOD.values())
    report = engine.submit("demo", ["test_softmax"], cells, cells, public=public).result()
    return report.verdicts["test_softmax"].passed


def test_closed_engine_leaves_no_folder_behind(tmp_path, monkeypatch):
    """A judge is SIGKILLed when its engine closes, so it cannot clean up after itself: its log
    and its sandbox's folder live in a folder the engine removes."""
    monkeypatch.setattr("tempfile.tempdir", str(tmp_path))
    eng = Engine(jobs=1, checks_dir=CHECKS, assignments=["demo"])
    try:
        assert grade_demo(eng, list(GOOD.values()))["test_softmax"].passed
        assert any(tmp_path.glob("autograder-judge0-*/autograder-*/zygote.log"))
    finally:
        eng.close()
    assert not list(tmp_path.iterdir())


def test_ctrl_c_close_stops_running_and_queued_notebooks_at_once(tmp_path, monkeypatch):
    """close(wait=False) (Ctrl-C) kills the judges in the middle of their notebooks, starts no
    judge for the notebooks still queued, raises nothing while the judges' threads clean up at
    the same time, and leaves no folder behind."""
    monkeypatch.setattr("tempfile.tempdir", str(tmp_path))
    hang = "def softmax(x, dim=-1):\n    while True:\n        pass\n"
    eng = Engine(jobs=2, checks_dir=CHECKS, assignments=["demo"])
    futures = [eng.submit("demo", ["test_softmax"], [hang], [hang]) for _ in range(6)]
    deadline = time.monotonic() + 120
    while not (futures[0].running() and futures[1].running()) and time.monotonic() < deadline:
        time.sleep(0.1)
    time.sleep(1)  # the judges are inside the hanging call
    t0 = time.monotonic()
    eng.close(wait=False)
    assert time.monotonic() - t0 < 10
    for f in futures[:2]:
        assert f.result().verdicts["test_softmax"].outcome == "grader-error"
    assert all(f.cancelled() for f in futures[2:])
    assert all(j.proc is None for j in eng.judges)
    assert not list(tmp_path.iterdir())


class RecordingBackend:
    """A backend whose children only record the requests they get."""

    def __init__(self):
        self.children, self.finished = [], []

    def open(self, block=()):
        child = []
        self.children.append(child)
        return RecordingChild(child)

    def finish(self, session):
        self.finished.append(session.requests)
        return "exit"


class RecordingChild:
    def __init__(self, requests):
        self.requests = requests

    def request(self, header, values=None, answer=None):
        self.requests.append(dict(header))
        return child_reply(header["op"], {"errors": [], "value": True})


def test_a_child_never_serves_two_devices():
    """A CPU call runs under the simulated GPU, which stays in its process: the calls of another
    device (a real GPU, or Student.on for a check comparing two devices) get a child of their
    own, loaded for that device alone (on an H100, CUDA calls made in the child of a CPU call
    returned CPU tensors)."""
    backend = RecordingBackend()
    grading = Grading(backend, ["x = 1"], new_run_seed())
    on_gpu = grading.student("check", torch.device("cuda", 0))
    assert on_gpu.has("x")
    on_cpu = on_gpu.on("cpu")
    assert on_cpu.has("x") and on_gpu.has("x")
    loads = [[r for r in child if r["op"] == "load"] for child in backend.children]
    assert [[(r["device"], r.get("simulate", False)) for r in c] for c in loads] == [
        [("cuda", False)],
        [("cpu", True)],
        [("cuda", False)],
    ]
    assert all(len({r["device"] for r in child}) == 1 for child in backend.children)
    assert len(backend.finished) == 2  # each child is finished before the next one opens
    grading.end_function()
    assert len(backend.finished) == 3


def test_student_cannot_fake_results(demo_engine):
    """Monkeypatching torch, always-true __eq__ subclasses and input transformers stay in the
    worker; the judge compares plain tensors itself."""
    hostile = [
        "torch.allclose = lambda *a, **k: True\ntorch.testing.assert_close = lambda *a, **k: None\n"
        "class T(torch.Tensor):\n    def __eq__(self, o): return True\n"
        "    def __sub__(self, o): return torch.zeros(())\n"
        "def softmax(x, dim=-1):\n    return torch.zeros_like(x).as_subclass(T)\n",
        "get_ipython().input_transformers_cleanup.append(lambda lines: ['pass\\n'])\n",
    ]
    v = grade_demo(demo_engine, hostile)["test_softmax"]
    assert (
        not v.passed and "`torch.allclose = ...` (`T`, `softmax` 셀, 1행)" in v.message
    )  # tampering named
    assert torch.allclose(torch.zeros(1), torch.ones(1)) is False  # judge untouched


def test_module_proxy_state_output_and_grads(demo_engine):
    assert grade_demo(demo_engine, [GOOD["scale_sol"]])["test_scale"].passed
    wrong_grad = GOOD["scale_sol"].replace("x * self.weight", "x * self.weight.detach()")
    v = grade_demo(demo_engine, [wrong_grad])["test_scale"]
    assert not v.passed and "weight" in v.message


def test_sandbox_hides_course_and_network(sandbox, tmp_path):
    canary = REPO / "tests" / "fixtures" / f".canary-{uuid.uuid4().hex}"
    canary.write_text("SECRET")
    try:
        probe = (
            "import os, socket\n"
            "def probe(paths):\n"
            "    out = []\n"
            "    for p in paths:\n"
            "        try:\n"
            "            out.append(open(p).read())\n"
            "        except OSError as e:\n"
            "            out.append(type(e).__name__)\n"
            "    try:\n"
            "        socket.create_connection(('1.1.1.1', 53), timeout=1); out.append('net')\n"
            "    except OSError as e:\n"
            "        out.append(type(e).__name__)\n"
            "    try:\n"
            "        open('/usr/pwned', 'w'); out.append('wrote /usr')\n"
            "    except OSError as e:\n"
            "        out.append(type(e).__name__)\n"
            "    out.append(str(os.listdir('/')))\n"
            "    return out\n"
        )
        paths = [str(canary), str(REPO / "solutions" / "__init__.py"), "/etc/passwd"]
        paths += ["/proc/1/environ", "/proc/self/environ"]
        out, err = run_call(sandbox, [probe], "probe", paths)
        assert err is None, err
        assert "SECRET" not in out and out[0] == "FileNotFoundError"
        assert out[1] == "FileNotFoundError" and out[2] == "FileNotFoundError"
        for env in out[3:5]:  # neither bwrap (pid 1) nor the child carry the judge's environment
            assert "PYTHONPATH" not in env and str(REPO) not in env
        assert out[5] != "net" and out[6] != "wrote /usr"
        for name in ("work", "home", "srv"):
            assert f"'{name}" not in out[7]
    finally:
        canary.unlink()


def test_children_run_meta_kernels_without_importing_dynamo(sandbox):
    """The zygote warms torch up without torch._dynamo (a third of every fork's cost): a meta
    kernel decomposed in torch._refs (triu) runs in a child without importing it."""
    cells = [
        "import sys\n"
        "def probe():\n"
        "    y = torch.ones(2, 3, device='meta').softmax(-1).triu(1).tril()\n"
        "    return [tuple(y.shape), 'torch._dynamo' in sys.modules]\n"
    ]
    value, err = run_call(sandbox, cells, "probe")
    assert err is None and list(value) == [(2, 3), False], (value, err)


def test_crash_exit_and_errors_cost_only_that_check(sandbox):
    crashed = "비정상 종료"
    for code, kind, expect in [
        ("import os\ndef f(x):\n    os._exit(3)\n", StudentCrashed, crashed),
        (
            "import os, signal\ndef f(x):\n    os.kill(os.getpid(), signal.SIGSEGV)\n",
            StudentCrashed,
            crashed,
        ),
        ("def f(x):\n    raise SystemExit(0)\n", CheckFailed, "SystemExit"),
        ("def f(x):\n    return object()\n", CheckFailed, "unsupported result type"),
        ("def g(x):\n    return x\n", CheckFailed, "정의되지 않았습니다"),
        ("def f(x):\n    return torch.ones(10**10)\n", CheckFailed, "memory"),
        (
            "import os\ndef f(x):\n    os.kill(1, 9)\n    os.kill(os.getppid(), 9)\n",
            CheckFailed,
            "PermissionError",
        ),
    ]:
        _, err = run_call(sandbox, [code], "f", torch.ones(2))
        assert type(err) is kind and expect in str(err), (code, err)
    value, err = run_call(sandbox, ["def f(x):\n    return x * 2\n"], "f", torch.ones(2))
    assert err is None and torch.equal(value, torch.full((2,), 2.0))  # the sandbox survived
    assert sandbox.starts == 1


def test_crash_message_names_call_shapes_and_line(sandbox):
    code = "def f(x, dim=-1):\n    y = x * 2\n    return y.view(7)\n"
    _, err = run_call(sandbox, [code], "f", torch.ones(2, 3), dim=1)
    msg = str(err)
    assert (
        "f((2, 3) float32, dim=1)" in msg
        and "(`f` 셀, 3행: `return y.view(7)`)" in msg
        and "y.view(7)" in msg
    )


def test_a_runtime_error_of_a_common_mistake_is_named_first(sandbox):
    """A crash whose error a common mistake causes (judge.diagnosis.KNOWN_ERRORS) starts with that
    mistake's diagnosis; the error and its line follow. Another error starts with what it means
    in Korean (judge.diagnosis.error_meaning), then the error as it is."""
    code = "def fill(s, keep):\n    return s.masked_fill(~keep, -1e9)\n"
    scores, keep = torch.zeros(2, dtype=torch.float16), torch.tensor([True, False])
    _, err = run_call(sandbox, [code], "fill", scores, keep)
    first, rest = str(err).split("\n", 1)
    assert first.startswith("fill((2,) float16, (2,) bool): " + MISCONCEPTION)
    assert "torch.finfo(scores.dtype).min" in first and "-1e9" in rest and "(`fill` 셀, 2행" in rest
    _, err = run_call(sandbox, ["def f(x):\n    return x.view(7)\n"], "f", torch.ones(2, 3))
    first, rest = str(err).split("\n", 1)
    assert MISCONCEPTION not in str(err) and "텐서의 모양이 연산에 맞지 않습니다" in first
    assert rest.startswith("f((2, 3) float32) 실행 중 오류: RuntimeError: shape '[7]' is invalid")
    _, err = run_call(sandbox, ["def f(x):\n    return {}[x.shape[0]]\n"], "f", torch.ones(2))
    assert (
        str(err)
        .split("\n")[0]
        .endswith(
            "사전(dict)에 없는 키를 찾았습니다. 아래는 파이썬/PyTorch 가 "
            "낸 원래 오류 메시지와 오류가 난 줄입니다."
        )
    )
    # .T on a batch, torch.bmm on fewer or more than three dimensions: named by the line
    dot_t = "def f(x):\n    return x @ x.T\n"
    assert run_call(sandbox, [dot_t], "f", torch.ones(3, 4))[1] is None
    _, err = run_call(sandbox, [dot_t], "f", torch.ones(2, 3, 4))
    assert MISCONCEPTION in str(err).split("\n")[0] and ".transpose(-2, -1)" in str(err)
    bmm = "def f(x):\n    return torch.bmm(x, x.transpose(1, 2))\n"
    assert run_call(sandbox, [bmm], "f", torch.ones(2, 3, 4))[1] is None
    for shape in ((3, 4), (2, 2, 3, 4)):
        _, err = run_call(sandbox, [bmm], "f", torch.ones(shape))
        assert "torch.bmm 은 3차원" in str(err).split("\n")[0], err


def test_in_place_change_and_default_device_fail(sandbox):
    _, err = run_call(sandbox, ["def f(x):\n    x -= 1\n    return x\n"], "f", torch.ones(3))
    assert "제자리" in str(err)
    eye = "def f(x):\n    return x + torch.eye(x.shape[-1])\n"
    _, err = run_call(sandbox, [eye], "f", torch.ones(3, 3))
    assert "장치" in str(err)
    # the simulated GPU holds real data: value-dependent code runs as it would on a GPU
    dep = "def f(x):\n    return torch.zeros(int(x.sum()), device=x.device)\n"
    value, err = run_call(sandbox, [dep], "f", torch.ones(3))
    assert err is None and value.shape == (3,)


def test_fork_bomb_is_bounded_and_cleaned_up(sandbox):
    bomb = (
        "import os, time\n"
        "def f(x):\n"
        "    n = 0\n"
        "    try:\n"
        "        while True:\n"
        "            if os.fork() == 0:\n"
        "                time.sleep(60)\n"
        "                os._exit(0)\n"
        "            n += 1\n"
        "    except OSError:\n"
        "        return n\n"
    )
    value, err = run_call(sandbox, [bomb], "f", 0)
    assert err is None and value < sandbox.limits.nproc  # fork() failed with EAGAIN
    # the sleeping children were killed before the check ended: none is left on the host
    left = [
        p.name
        for p in Path("/proc").iterdir()
        if p.name.isdigit() and re.search(rf"^Uid:\s+{sandbox.uid}\s", _status(p), re.M)
    ]
    assert left == []


def _status(proc_dir):
    try:
        return (proc_dir / "status").read_text()
    except OSError:  # the process ended meanwhile
        return ""


def test_timeout_kills_child_states_its_limit_and_next_check_runs(sandbox):
    sandbox.limits.wall_s = 1.5
    try:
        _, err = run_call(sandbox, ["def f(x):\n    while True:\n        pass\n"], "f", 1)
    finally:
        sandbox.limits.wall_s = 20
    assert type(err) is StudentTimeout and "시간 제한(1.5초)" in str(err)
    value, err = run_call(sandbox, ["def f(x):\n    return x + 1\n"], "f", 3)
    assert err is None and value == 4


def test_hang_while_loading_cells_is_waited_for_once(sandbox):
    sandbox.limits.wall_s = 1.5
    hang = ["import time\nwhile True:\n    time.sleep(0.01)\n", "def f(x):\n    return x\n"]
    grading = Grading(SandboxBackend(sandbox), hang, new_run_seed(), hang)
    try:
        with pytest.raises(StudentTimeout, match="시간 제한"):
            grading.student("a", torch.device("cpu"))
        t0 = time.monotonic()
        with pytest.raises(StudentTimeout):  # the next test function is not waited for again
            grading.student("b", torch.device("cpu"))
        assert time.monotonic() - t0 < 1.0
        t0 = time.monotonic()
        status = grading.end_function()  # the judge's deadline passed: the child is killed now
        assert status == "timeout" and time.monotonic() - t0 < 1.0  # not at the zygote's backstop
    finally:
        grading.end_function()
        sandbox.limits.wall_s = 20


def test_missing_bwrap_refuses_unless_unsafe(monkeypatch):
    monkeypatch.setattr(shutil, "which", lambda name: None)
    with pytest.raises(sbx.SandboxUnavailable, match="apt-get install bubblewrap"):
        Engine(jobs=1, checks_dir=CHECKS)
    with pytest.raises(sbx.SandboxUnavailable, match=bwrap.UNSAFE_FLAG):
        Engine(jobs=1, checks_dir=CHECKS)
    eng = Engine(jobs=1, unsafe=True, checks_dir=CHECKS, assignments=["demo"])  # no raise
    assert eng.unsafe
    eng.close()


def test_limits_come_from_nbgrader_config(tmp_path):
    from autograder.notebook import course_config

    (tmp_path / "nbgrader_config.py").write_text(
        "c = get_config()  # noqa: F821\nc.SandboxLimits.wall_s = 7.5\nc.SandboxLimits.nproc = 9\n"
    )
    limits = sbx.SandboxLimits(config=course_config(tmp_path))
    assert (limits.wall_s, limits.nproc, limits.cpu_s) == (7.5, 9, 20)


# ----------------------------------------------------------------------------- nbgrader


def run(cmd, cwd, env):
    r = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    return r


def scores(db):
    """(student, test cell, auto_score) rows read back through nbgrader's own Gradebook API."""
    from nbgrader.api import Gradebook

    rows = []
    with Gradebook(f"sqlite:///{db}") as gb:
        for student in gb.students:
            nb = gb.find_submission_notebook("demo", "demo", student.id)
            rows += [(student.id, g.name, g.auto_score) for g in nb.grades]
    return sorted(rows)


@pytest.mark.slow
def test_a_new_gradebook_records_the_revision_alembic_heads_prints(tmp_path, monkeypatch):
    """fixes.alembic_head (nbgrader's get_alembic_version without a subprocess): a new gradebook
    records the head revision the ``alembic heads`` command reads from nbgrader's scripts."""
    import nbgrader.api as api
    from sqlalchemy import create_engine, text

    from autograder.nbgrader import fixes

    ini = tmp_path / "alembic.ini"
    scripts = Path(api.__file__).parent / "alembic"
    ini.write_text(f"[alembic]\nscript_location = {scripts}\n")
    out = subprocess.run(
        [str(BIN / "alembic"), "-c", str(ini), "heads"], capture_output=True, text=True, check=True
    )
    monkeypatch.setattr(api, "get_alembic_version", fixes.alembic_head)
    url = f"sqlite:///{tmp_path / 'gradebook.db'}"
    api.Gradebook(url).close()
    with create_engine(url).connect() as db:
        recorded = db.execute(text("SELECT version_num FROM alembic_version")).scalar_one()
    assert out.stdout.split() == [recorded, "(head)"]


def test_nbgrader_round_trip(tmp_path):
    """generate_assignment -> batch CLI (parallel) -> re-run -> stock `nbgrader autograde` ->
    generate_feedback -> export, on correct, wrong, blank, broken, tampered and hanging
    submissions. The venv is not activated (nbgrader's `alembic` call must still work), and both
    commands take the time limit from nbgrader_config.py."""
    course = tmp_path / "course"
    shutil.copytree(FIXTURE, course, ignore=shutil.ignore_patterns("__pycache__", ".canary-*"))
    with open(course / "nbgrader_config.py", "a") as f:
        f.write("c.SandboxLimits.wall_s = 4.0\n")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env["PATH"] = os.pathsep.join(p for p in env["PATH"].split(os.pathsep) if p != str(BIN))
    run([str(BIN / "nbgrader"), "generate_assignment", "demo", "--force"], course, env)
    release = json.loads((course / "release/demo/demo.ipynb").read_text())
    assert "SECRET_HIDDEN_MARKER" not in json.dumps(release)

    def submit(sid, codes=None, raw=None, tamper=False):
        d = course / "submitted" / sid / "demo"
        d.mkdir(parents=True)
        nb = json.loads(json.dumps(release))
        for c in nb["cells"]:
            meta = c["metadata"].get("nbgrader", {})
            if codes and meta.get("grade_id") in codes:
                c["source"] = codes[meta["grade_id"]]
            if tamper and meta.get("grade_id") == "test_softmax":
                c["source"], meta["points"] = "pass", 50
        (d / "demo.ipynb").write_bytes(raw if raw is not None else json.dumps(nb).encode())

    submit("good", GOOD)
    submit("naive", {"softmax_sol": NAIVE, "scale_sol": GOOD["scale_sol"]})
    submit("blank")
    submit("broken", raw=b"\xff\xfe not a notebook")
    submit("tamper", {"softmax_sol": NAIVE}, tamper=True)
    submit("hang", {"softmax_sol": "def softmax(x, dim=-1):\n    while True:\n        pass\n"})
    expected = [
        ("blank", "test_scale", 0.0),
        ("blank", "test_softmax", 0.0),
        ("broken", "test_scale", 0.0),
        ("broken", "test_softmax", 0.0),
        ("good", "test_scale", 3.0),
        ("good", "test_softmax", 2.0),
        ("hang", "test_scale", 0.0),
        ("hang", "test_softmax", 0.0),
        ("naive", "test_scale", 3.0),
        ("naive", "test_softmax", 0.0),
        ("tamper", "test_scale", 0.0),
        ("tamper", "test_softmax", 0.0),
    ]
    cli = [sys.executable, "-m", "autograder", "grade", "demo", "--jobs", "2", "--quiet"]
    out = run(cli, course, env).stdout
    assert "제출물 6개" in out and "demo/test_softmax" in out
    assert "비정상 종료 또는 시간 초과 1명: hang" in out, out
    assert scores(course / "gradebook.db") == expected
    hang = (course / "autograded/hang/demo/demo.ipynb").read_text()
    assert "시간 제한(4초)" in hang
    run(cli, course, env)  # regrading is idempotent
    assert scores(course / "gradebook.db") == expected
    one = run(cli + ["--student", "naive"], course, env).stdout  # says what it graded
    assert "제출물 1개(노트북 1개)" in one and "제출물 6개 전체" in one, one
    assert scores(course / "gradebook.db") == expected
    # stock command, same config: verdicts from the engine, same scores
    run([str(BIN / "nbgrader"), "autograde", "demo", "--force"], course, env)
    assert scores(course / "gradebook.db") == expected
    assert "시간 제한(4초)" in (course / "autograded/hang/demo/demo.ipynb").read_text()
    auto = (course / "autograded/naive/demo/demo.ipynb").read_text()
    assert "SECRET_HIDDEN_MARKER" not in auto and "BEGIN HIDDEN" not in auto
    assert "amax" not in auto  # the source's solution code never lands in student files
    assert "CheckFailed" in auto and "nan" in auto
    run([str(BIN / "nbgrader"), "generate_feedback", "demo", "--force"], course, env)
    html = (course / "feedback/naive/demo/demo.html").read_text()
    assert "SECRET_HIDDEN_MARKER" not in html and "amax" not in html and "입력" in html
    run([str(BIN / "nbgrader"), "export"], course, env)
    csv = (course / "grades.csv").read_text().splitlines()
    assert any(
        line.startswith("demo,,,good,") and line.endswith(",5.0,0.0,5.0,5.0") for line in csv
    )
