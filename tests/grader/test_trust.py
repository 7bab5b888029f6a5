"""Verdicts no submission can fake (autograder/sandboxed/README.md): each piece of evidence the
judge relies on, shown against code that tries to defeat it, in the real sandbox."""

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from autograder.judge import sandbox as sbx
from autograder.judge.checking import CheckFailed, source
from autograder.judge.grading import Grading, SandboxBackend
from autograder.judge.policy import CodeFacts, cell_label, forbidden_ops
from autograder.judge.student import Spec
from autograder.seeds import derive_seed, submission_seed

REPO = Path(__file__).resolve().parents[2]


# ----------------------------------------------------------------------------- source rules


def test_forbidden_names_catch_aliases_imports_and_bare_names():
    src = (
        "from torch.nn.functional import scaled_dot_product_attention as sdpa\n"
        "from torch.nn.functional import *\n"
        "def a(q):\n    return torch.nn.functional.scaled_dot_product_attention(q, q, q)\n"
        "def b(q):\n    return scaled_dot_product_attention(q, q, q)\n"
        "def c(q):\n    return getattr(F, 'scaled_dot_product_attention')(q, q, q)\n"
        "def d(q):\n    return q @ q.mT\n"
    )
    facts = CodeFacts([src])
    names = {"scaled_dot_product_attention"}
    lines = sorted(line for _, _, line in facts.forbidden(names, {"a", "b", "c", "d"}))
    assert lines == [1, 4, 6, 8]  # the import at the top counts for every check
    assert [line for _, _, line in facts.dynamic(set())] == [2]  # import *: cannot follow


def test_students_own_names_are_not_forbidden():
    src = "def softmax(x, dim=-1):\n    return x.exp() / x.exp().sum(dim, keepdim=True)\n"
    src += "def log_softmax(x):\n    return softmax(x).log()\n"
    assert CodeFacts([src]).forbidden({"softmax"}, {"softmax", "log_softmax"}) == []


def test_dynamic_lookups_fail_closed_but_self_attributes_do_not():
    src = (
        "def f(x):\n    return getattr(torch, 'soft' + 'max')(x, -1)\n"
        "def g(x):\n    return globals()['helper'](x)\n"
        "class M(nn.Module):\n"
        "    def __init__(self):\n        super().__init__()\n"
        "        for r in ('q', 'k'):\n            setattr(self, 'W_' + r, nn.Linear(2, 2))\n"
        "    def forward(self, x):\n        return getattr(self, 'W_' + 'q')(x)\n"
    )
    facts = CodeFacts([src])
    assert [line for _, _, line in facts.dynamic({"f", "g", "M"})] == [2, 4]


@pytest.mark.parametrize(
    "code",
    [
        "import sys\nsys.modules['__main__'].mutated = lambda s: []",
        "import gc",
        "x = ().__class__.__base__.__subclasses__()",
        "exec('1')",
        "torch.Tensor.clone = lambda self: self",
        "F.softmax = lambda x, dim: x",
        "mode = torch.overrides._get_current_function_mode()",
        "n = torch._C._len_torch_function_stack()",
        "import ctypes",
        "import __main__\n__main__.mutated = lambda snap: []",
        "from wire import encode",
        "class M(nn.Module):\n    def __init__(self):\n        self._register_state_dict_hook(h)",
        "f = sys._getframe(1).f_back.f_globals",
    ],
)
def test_tampering_is_recognised(code):
    assert CodeFacts([code]).tampering(), code


def test_plain_solutions_are_not_tampering():
    src = (REPO / "solutions" / "decoding.py").read_text()
    src += "\n" + (REPO / "solutions" / "models.py").read_text()
    assert CodeFacts([src]).tampering() == []


def test_unparsable_cell_fails_forbid_items_closed():
    deep = "x = " + "[" * 400 + "]" * 400
    grading = Grading(None, None, 1, [deep, "def f(x):\n    return x\n"])
    grading.students = []
    with pytest.raises(CheckFailed, match="분석할 수 없습니다"):
        grading.check_policy(["softmax"])
    grading.check_policy([])  # no forbid rule: nothing to analyse


def test_cells_are_named_by_what_they_define_or_their_first_line():
    assert cell_label("import math\n\ndef f(x):\n    return x\nclass M:\n    pass\n") == (
        "`f`, `M` 셀"
    )
    assert cell_label("# given\nimport math\n") == "첫 줄이 `import math` 인 셀"
    assert cell_label("x = " + "[" * 400 + "]" * 400).startswith("첫 줄이 `x = [[[")
    assert cell_label("") == "빈 셀"


def test_forbidden_ops_cover_private_entry_points():
    ops = forbidden_ops(["scaled_dot_product_attention"])
    assert "_scaled_dot_product_attention_math" in ops
    assert "_scaled_dot_product_flash_attention_for_cpu" in ops
    assert {"_softmax", "softmax"} <= set(forbidden_ops(["softmax"]))


# ----------------------------------------------------------------------------- in the sandbox


@pytest.fixture(scope="module")
def sandbox():
    with sbx.Sandbox(limits=sbx.SandboxLimits(wall_s=20)) as sb:
        sb.start()
        yield sb


def student(sandbox, cells, forbid=()):
    grading = Grading(SandboxBackend(sandbox), cells, 7, cells)
    return grading, grading.student("t", torch.device("cpu"), forbid)


def test_given_helper_is_answered_by_the_judge_forward_and_backward(sandbox):
    """A check that takes a helper as given (``given``): the student's merge_heads, wrong here
    (no transpose), is answered by the judge's reference in the child, gradients included, so
    a correct caller passes; a call the reference cannot take runs the student's own."""
    cells = [
        "def merge_heads(x, *rest):\n"
        "    return x.reshape(x.shape[0], x.shape[2], -1) + len(rest)\n"
        "class M(nn.Module):\n"
        "    def __init__(self):\n"
        "        super().__init__()\n"
        "        self.w = nn.Parameter(torch.tensor(2.0))\n"
        "    def forward(self, x):\n"
        "        return merge_heads(x * self.w) ** 2\n"
        "def odd(x):\n"
        "    return merge_heads(x, 'extra')\n"
    ]
    grading = Grading(SandboxBackend(sandbox), cells, 7, cells)
    reference = {"merge_heads": lambda x: x.transpose(1, 2).reshape(x.shape[0], x.shape[2], -1)}
    x = torch.randn(2, 3, 4, 5)
    try:
        s = grading.student("t", torch.device("cpu"), given=reference)
        out = s.module("M", inputs=[x], grad=True)
        w = torch.tensor(2.0, requires_grad=True)
        xg = x.clone().requires_grad_(True)
        expected = reference["merge_heads"](xg * w) ** 2
        expected.sum().backward()
        assert torch.allclose(out["output"], expected)
        assert torch.allclose(out["grads"]["w"], w.grad)
        assert torch.allclose(out["grads"]["input0"], xg.grad)
        own = x.reshape(2, 4, -1) + 1
        assert torch.equal(s.call("odd", x), own)  # the reference takes one argument
    finally:
        grading.end_function()


class _FF(torch.nn.Module):
    """The judge's reference of a given module class in the test below (names as a notebook's
    FeedForward: linear1, dropout, linear2)."""

    def __init__(self, d, d_ff, p):
        super().__init__()
        self.linear1, self.linear2 = torch.nn.Linear(d, d_ff), torch.nn.Linear(d_ff, d)
        self.dropout = torch.nn.Dropout(p)

    def forward(self, x):
        return self.linear2(self.dropout(torch.nn.functional.gelu(self.linear1(x))))


def test_given_module_is_answered_by_the_judge_with_its_state_and_random_draws(sandbox, device):
    """Module classes taken as given: the student's LayerNorm (unbiased variance) and FF (ReLU,
    dropout in the wrong place, other parameter names) are built as the judge's reference
    modules, whose parameters the student's Block owns (state_dict, load_state_dict,
    gradients) and whose forward the judge computes, dropout included: in train() the Block
    draws the same masks as the same Block made of the reference modules, under the same
    seed (on a GPU: the CUDA generator's draws, answered by the judge on the GPU); a correct Block
    built from wrong parts passes."""
    cells = [
        "class Norm(nn.Module):\n"
        "    def __init__(self, d, eps=1e-5):\n"
        "        super().__init__()\n"
        "        self.g, self.eps = nn.Parameter(torch.ones(d)), eps\n"
        "    def forward(self, x):\n"
        "        v = x.var(-1, keepdim=True)\n"
        "        return (x - x.mean(-1, keepdim=True)) / (v + self.eps).sqrt()\n"
        "class FF(nn.Module):\n"
        "    def __init__(self, d, d_ff, p):\n"
        "        super().__init__()\n"
        "        self.a, self.b = nn.Linear(d, d_ff), nn.Linear(d_ff, d)\n"
        "        self.drop = nn.Dropout(p)\n"
        "    def forward(self, x):\n"
        "        return self.drop(self.b(torch.relu(self.a(x))))\n"
        "class Block(nn.Module):\n"
        "    def __init__(self, d, p):\n"
        "        super().__init__()\n"
        "        self.norm = Norm(d, eps=0.1)\n"
        "        self.ffn = FF(d, 3 * d, p)\n"
        "        self.drop = nn.Dropout(p)\n"
        "    def forward(self, x):\n"
        "        return x + self.drop(self.ffn(self.norm(x))) * 2\n"
        "def handles():\n"
        "    return [k for k in dir(Norm) + dir(Norm(3)) if k in ('child', 'own', 'sock')]\n"
    ]
    given = {"Norm": torch.nn.LayerNorm, "FF": _FF}

    class Block(torch.nn.Module):  # the same Block made of the reference modules
        def __init__(self, d, p):
            super().__init__()
            self.norm, self.ffn = torch.nn.LayerNorm(d, eps=0.1), _FF(d, 3 * d, p)
            self.drop = torch.nn.Dropout(p)

        def forward(self, x):
            return x + self.drop(self.ffn(self.norm(x))) * 2

    torch.manual_seed(3)
    reference = Block(4, 0.5)
    for p in reference.parameters():
        torch.nn.init.normal_(p)
    reference.to(device)
    state = {k: v.detach().clone() for k, v in reference.state_dict().items()}
    x = torch.randn(2, 5, 4, device=device)
    grading = Grading(SandboxBackend(sandbox), cells, 7, cells)
    try:
        s = grading.student("t", device, given=given)
        for train in (False, True):
            out = s.module(
                "Block",
                dict(d=4, p=0.5),
                state_dict=state,
                inputs=[x],
                train=train,
                grad=True,
                forward_seed=11,
            )
            assert set(out["state"]) == set(state)  # the reference modules' names
            reference.train(train)
            xg = x.clone().requires_grad_(True)
            torch.manual_seed(11)
            expected = reference(xg)
            reference.zero_grad()
            expected.sum().backward()
            torch.testing.assert_close(out["output"].cpu(), expected.detach().cpu())
            torch.testing.assert_close(out["grads"]["input0"].cpu(), xg.grad.cpu())
            for name, p in reference.named_parameters():
                torch.testing.assert_close(out["grads"][name].cpu(), p.grad.cpu(), msg=name)
        assert s.call("handles") == []  # no attribute leads to the worker
        eval_out = reference.eval()(x).detach().cpu()
        assert not torch.equal(out["output"].cpu(), eval_out)  # train() dropped something
    finally:
        grading.end_function()


def test_given_module_too_large_for_the_judge_is_the_students_own(sandbox):
    """The judge builds a given module only up to GIVEN_MODULE_ELEMENTS values (sizes are the
    student's arguments): a larger one is refused, and the student's own class is built."""
    cells = [
        "class Huge(nn.Module):\n"
        "    def __init__(self, n, m):\n"
        "        super().__init__()\n"
        "        self.mine = True\n"
        "def own(n):\n"
        "    return hasattr(Huge(n, n), 'mine')\n"
    ]
    grading = Grading(SandboxBackend(sandbox), cells, 7, cells)
    try:
        s = grading.student("t", torch.device("cpu"), given={"Huge": torch.nn.Linear})
        assert s.call("own", 4) is False  # the judge's Linear(4, 4)
        assert s.call("own", 1 << 13) is True  # 2**26 weights: refused
    finally:
        grading.end_function()


def test_policy_and_runtime_messages_name_a_cell_alike(sandbox):
    """A given cell before the solution cell: the forbidden-name message (read from the
    solution cells) and the runtime error (from the cells the worker runs) name the same cell
    the same way, by what it defines, with its own line."""
    given = "import math\nSCALE = 2\n"
    solution = "def f(x):\n    y = F.softmax(x, -1)\n    return y.view(7)\n"
    grading = Grading(SandboxBackend(sandbox), [given, solution], 7, [solution])
    try:
        s = grading.student("t", torch.device("cpu"))
        with pytest.raises(CheckFailed) as runtime:
            s.call("f", torch.zeros(2, 3))
        assert "(`f` 셀, 3행: `return y.view(7)`)" in str(runtime.value)
        with pytest.raises(CheckFailed) as policy:
            grading.check_policy(["softmax"])
        assert "`F.softmax` (`f` 셀, 2행)" in str(policy.value)
    finally:
        grading.end_function()


def test_a_runtime_error_is_located_in_the_students_cell_not_a_given_one(sandbox):
    """An error raised inside a given (locked) cell's code is located at the student's line that
    called it: the feedback never points into a cell the student cannot edit."""
    given = "def lookup(table, i):\n    return table[i]\n"
    solution = "def f(table):\n    n = table.shape[0]\n    return lookup(table, n)\n"
    grading = Grading(SandboxBackend(sandbox), [given, solution], 7, [solution])
    try:
        s = grading.student("t", torch.device("cpu"))
        with pytest.raises(CheckFailed) as err:
            s.call("f", torch.zeros(3))
        assert "(`f` 셀, 3행: `return lookup(table, n)`)" in str(err.value), str(err.value)
        assert "return table[i]" not in str(err.value)
    finally:
        grading.end_function()


def test_blocked_operator_cannot_run_under_any_name(sandbox):
    cells = [
        "def a(x):\n    return torch.ops.aten._softmax(x, -1, False)\n"
        "def b(x):\n    return torch.special.softmax(x, -1)\n"
        "def c(x):\n    f = getattr(torch, 'soft' + 'max')\n    return f(x, -1)\n"
        "def d(x):\n    return x.exp() / x.exp().sum(-1, keepdim=True)\n"
    ]
    grading, s = student(sandbox, cells, ["softmax"])
    try:
        for name in "abc":
            with pytest.raises(CheckFailed, match=r"aten::\w*softmax"):
                s.call(name, torch.randn(2, 3))
        out = s.call("d", torch.randn(2, 3))
        torch.testing.assert_close(out.sum(-1), torch.ones(2))
    finally:
        grading.end_function()
    grading, s = student(sandbox, cells)  # not forbidden in this check: runs
    try:
        assert s.call("a", torch.zeros(1, 2)).tolist() == [[0.5, 0.5]]
    finally:
        grading.end_function()
    grading, s = student(sandbox, cells, ["softmax"])  # the zygote blocks it again
    try:
        with pytest.raises(CheckFailed, match=r"aten::\w*softmax"):
            s.call("a", torch.randn(2, 3))
    finally:
        grading.end_function()


class ZygoteBlocksNothing(SandboxBackend):
    """Children forked without the zygote's blocking (as when it fails there)."""

    def open(self, block=()):
        return self.sandbox.open()


def test_a_child_blocks_what_its_zygote_did_not(sandbox):
    cells = ["def a(x):\n    return torch.ops.aten._softmax(x, -1, False)\n"]
    grading = Grading(ZygoteBlocksNothing(sandbox), cells, 7, cells)
    try:
        s = grading.student("t", torch.device("cpu"), ["softmax"])
        with pytest.raises(CheckFailed, match=r"aten::_softmax"):
            s.call("a", torch.randn(2, 3))
    finally:
        grading.end_function()


def test_in_place_change_is_seen_even_when_the_worker_is_fooled(sandbox):
    """The worker's own snapshot is blinded (clone returns the tensor itself); the judge still
    sees the input's bytes change in the shared memory."""
    cells = [
        "torch.Tensor.clone = lambda self, *a, **k: self\n"
        "def f(x, m):\n    x -= 1.0\n    return x * 2\n"
    ]
    grading, s = student(sandbox, cells)
    try:
        with pytest.raises(CheckFailed, match=r"입력 텐서\(인자 0\).*제자리"):
            s.call("f", torch.ones(3), torch.zeros(2))
    finally:
        grading.end_function()


def test_a_transposed_view_reaches_the_student_as_one(sandbox):
    """A check's non-contiguous input keeps its layout on the wire (.view fails on it as on the
    student's machine), its counterexample pastes back to the same layout, and an in-place
    change through it is still seen in the shared memory."""
    cells = [
        "def strides(x):\n"
        "    return torch.tensor([*x.stride(), int(x.is_contiguous())], device=x.device)\n"
        "def flat(x):\n    return x.view(-1, x.shape[-1])\n"
        "def bump(x):\n    x.add_(1.0)\n    return x.sum()\n"
    ]
    x = torch.arange(24.0).reshape(3, 2, 4).transpose(0, 1)  # (2, 3, 4), strides (4, 8, 1)
    grading, s = student(sandbox, cells)
    try:
        assert s.call("strides", x).tolist() == [4, 8, 1, 0]
        pasted = eval(source(x), {"torch": torch})
        assert torch.equal(pasted, x) and pasted.stride() == x.stride()
        with pytest.raises(CheckFailed, match="view size is not compatible"):
            s.call("flat", x)
        with pytest.raises(CheckFailed, match=r"입력 텐서\(인자 0\).*제자리"):
            s.call("bump", x)
    finally:
        grading.end_function()


def test_fresh_calls_defeat_a_per_process_memo(sandbox):
    cells = [
        "seen = []\ndef draw(seed):\n    seen.append(seed)\n    return torch.tensor(len(seen))\n"
    ]
    grading, s = student(sandbox, cells)
    try:
        assert [int(s.call("draw", 5)) for _ in range(2)] == [1, 2]
        assert [int(s.call_fresh("draw", 5)) for _ in range(2)] == [1, 1]
        assert int(s.call("draw", 5)) == 1  # the function's child was replaced too
    finally:
        grading.end_function()


def test_a_swallowed_device_error_fails_and_is_reported(sandbox):
    cells = [
        "def f(x):\n    try:\n        return x + torch.ones(x.shape)\n"
        "    except RuntimeError:\n        return x + torch.ones(x.shape, device=x.device)\n"
    ]
    grading, s = student(sandbox, cells)
    try:
        with pytest.raises(CheckFailed, match="오류를 삼키고"):
            s.call("f", torch.zeros(2))
        assert any("장치 오류를 삼킨" in p for p in grading.problems())
    finally:
        grading.end_function()


@pytest.mark.parametrize(
    "body, verdict",
    [
        ("return x * torch.ones(x.shape[-1], device=x.device)", None),
        ("return x * torch.ones(x.shape[-1]).to(x.device)", None),
        ("return x * torch.ones(x.shape[-1]).to(x)", None),
        ("return x.new_ones(x.shape) + torch.tensor(2.0)", None),  # a CPU scalar mixes anywhere
        ("return x[torch.arange(x.shape[0])]", None),  # a CPU index tensor too
        ("return str(x.device), x.is_cuda", None),
        ("return x * torch.ones(x.shape[-1])", "장치"),
        ("return x.cpu() * 2", "CPU에 만들어집니다"),
        ("return x * torch.ones(x.shape[-1], device='cpu').to('cpu')", "장치"),
        ("return (x * 2).to('cpu')", "CPU에 만들어집니다"),
        ("return torch.randn(x.shape, generator=torch.Generator()).to(x.device)", None),
        ("return x + torch.randn(x.shape, generator=torch.Generator(), device=x.device)", "생성기"),
        ("return torch.rand(x.shape, generator=torch.Generator(x.device), device=x.device)", None),
        ("return torch.from_numpy(x.cpu().numpy() * 2).to(x.device)", None),
        ("return torch.from_numpy(x.cpu().numpy() * 2)", "CPU에 만들어집니다"),  # NumPy: the CPU
        ("return x.numpy()", "to numpy"),  # a GPU tensor has no NumPy view
    ],
)
def test_every_call_runs_on_a_simulated_gpu(sandbox, body, verdict):
    """On a CPU grader the inputs say they live on cuda:0, with real data: code that makes
    tensors without the inputs' device or moves them to the CPU fails as on a GPU, in the
    graded call itself (no second run a memo could answer)."""
    grading, s = student(sandbox, [f"def f(x):\n    {body}\n"])
    try:
        if verdict is None:
            out = s.call("f", torch.arange(6.0).reshape(2, 3))
            if isinstance(out, tuple):
                assert out == ("cuda:0", True)
        else:
            with pytest.raises(CheckFailed, match=verdict):
                s.call("f", torch.arange(6.0).reshape(2, 3))
    finally:
        grading.end_function()


MODULE = """class M(nn.Module):
    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.ones(3))
        {keep}

    def forward(self, x):
        return x * self.w * self.mask
"""


@pytest.mark.parametrize(
    "keep, verdict",
    [
        ("self.register_buffer('mask', torch.ones(3), persistent=False)", None),
        ("self.mask = torch.ones(3)", "장치"),  # a plain attribute: .to(device) leaves it behind
    ],
)
def test_module_tensors_move_only_as_parameters_and_buffers(sandbox, keep, verdict):
    cells = [MODULE.format(keep=keep)]
    grading, s = student(sandbox, cells)
    try:
        if verdict is None:
            out = s.module("M", inputs=[torch.ones(2, 3)])["output"]
            assert torch.equal(out, torch.ones(2, 3))
        else:
            with pytest.raises(CheckFailed, match=verdict):
                s.module("M", inputs=[torch.ones(2, 3)])
    finally:
        grading.end_function()


def test_sandbox_shows_no_host_path(sandbox):
    """No /proc of the host's mounts or of bwrap's command line inside the sandbox."""
    cells = [
        "import os\n"
        "def peek():\n"
        "    out = []\n"
        "    for p in ('/proc/self/mountinfo', '/proc/1/cmdline', '/proc/self/environ',"
        " '/proc/1/environ', '/proc/self/cwd'):\n"
        "        try:\n"
        "            out.append(open(p, 'rb').read().decode(errors='replace'))\n"
        "        except OSError as e:\n"
        "            out.append(type(e).__name__)\n"
        "    return '\\n'.join(out + sorted(os.listdir('/proc')))\n"
    ]
    grading, s = student(sandbox, cells)
    try:
        seen = s.call("peek")
    finally:
        grading.end_function()
    assert os.geteuid() == 0, "grading as root hides /proc; tests run as root (make test)"
    for host in {str(REPO), os.path.realpath(sbx.sys.prefix), str(Path.home())}:
        assert host not in seen, host
    assert re.fullmatch(r"(FileNotFoundError\n){5}cpuinfo", seen), seen


UNPRIVILEGED = """
import sys, torch
from autograder.judge.grading import Grading, SandboxBackend
from autograder.judge.sandbox import Sandbox
cells = [sys.argv[1]]
sandbox = Sandbox(slot=7)
grading = Grading(SandboxBackend(sandbox), cells, 1, cells)
try:
    print(repr(grading.student("peek", torch.device("cpu")).call("peek")))
finally:
    grading.end_function()
    sandbox.close()
"""


@pytest.mark.skipif(not shutil.which("unshare"), reason="util-linux unshare is not installed")
def test_unprivileged_sandbox_shows_no_host_path(tmp_path):
    """Grading as a normal user (bwrap in a user namespace, no sandbox uid) hides the host's
    /proc as well: run here as uid 1000 of a user namespace of its own."""
    cell = (
        "import os\n"
        "def peek():\n"
        "    out = []\n"
        "    for p in ('/proc/self/mountinfo', '/proc/1/cmdline', '/proc/self/environ'):\n"
        "        try:\n"
        "            out.append(open(p, 'rb').read().decode(errors='replace'))\n"
        "        except OSError as e:\n"
        "            out.append(type(e).__name__)\n"
        "    return '\\n'.join(out + sorted(os.listdir('/proc')))\n"
    )
    (tmp_path / "run.py").write_text(UNPRIVILEGED)
    cmd = ["unshare", "--user", "--map-user=1000", "--map-group=1000"]
    cmd += [sys.executable, str(tmp_path / "run.py"), cell]
    env = dict(os.environ, HOME=str(tmp_path))
    r = subprocess.run(cmd, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-3000:]
    seen = r.stdout.strip().splitlines()[-1]
    for host in {str(REPO), os.path.realpath(sbx.sys.prefix), str(Path.home())}:
        assert host not in seen, host
    assert seen == repr("FileNotFoundError\n" * 3 + "cpuinfo"), seen


def test_each_test_function_starts_from_an_empty_scratch_directory(sandbox):
    fill = [
        "import os\n"
        "def fill(n):\n"
        "    os.makedirs('/tmp/a/b/c', exist_ok=True)\n"
        "    for i in range(n):\n"
        "        open(f'/tmp/a/b/c/f{i}', 'w').close()\n"
        "    os.chmod('/tmp/a/b', 0)\n"
        "    return n\n"
        "def look():\n"
        "    return len(os.listdir('/tmp')) + len(os.listdir('.'))\n"
    ]
    grading = Grading(SandboxBackend(sandbox), fill, 7, fill)
    try:
        assert grading.student("one", torch.device("cpu")).call("fill", 30_000) == 30_000
        assert grading.student("two", torch.device("cpu")).call("look") == 1  # its own cwd
    finally:
        grading.end_function()


def test_two_sandboxes_on_one_machine_never_share_a_uid():
    a, b = sbx.Sandbox(slot=0), sbx.Sandbox(slot=0)  # same slot, as two engines would ask
    try:
        assert a.uid != b.uid and sbx.uid_in_use(a.uid) and sbx.uid_in_use(b.uid)
    finally:
        a.__exit__(), b.__exit__()
    assert not sbx.uid_in_use(a.uid)


def test_submission_seed_depends_on_the_code_only():
    cells = ["def f(x):\n    return x\n"]
    assert submission_seed(5, "softmax", cells) == submission_seed(5, "softmax", list(cells))
    assert submission_seed(5, "softmax", cells) != submission_seed(5, "softmax", cells + [""])
    assert submission_seed(5, "softmax", cells) != submission_seed(6, "softmax", cells)
    assert submission_seed(5, "softmax", cells) != derive_seed(5, "softmax")


def test_a_cpu_index_meeting_a_weight_on_the_device_fails(sandbox):
    """F.embedding with positions made without a device: a GPU refuses it; so does the
    simulated one."""
    cells = ["def f(w):\n    return F.embedding(torch.arange(3), w)\n"]
    grading, s = student(sandbox, cells)
    try:
        with pytest.raises(CheckFailed, match="장치"):
            s.call("f", torch.randn(5, 4))
    finally:
        grading.end_function()


SEEDED = [
    "def bad(seed):\n    torch.manual_seed(seed)\n    return torch.rand(3)\n"
    "def good(seed):\n    g = torch.Generator().manual_seed(seed)\n"
    "    return torch.rand(3, generator=g)\n"
]


@pytest.mark.parametrize("how", ["fresh", "draws_on"])
def test_seeded_call_may_not_use_the_global_generator(sandbox, how):
    """Checked on the calls in ``fresh`` (a seed check), and on every call of a check under
    ``spec(draws_on=...)``, here in the test function's own child."""
    grading = Grading(SandboxBackend(sandbox), SEEDED, 7, SEEDED)
    spec = Spec(draws_on="cpu") if how == "draws_on" else Spec()
    s = grading.student("t", torch.device("cpu"), spec=spec)
    call = s.call_fresh if how == "fresh" else s.call
    try:
        with pytest.raises(CheckFailed, match="전역 난수"):
            call("bad", 3)
        expected = torch.rand(3, generator=torch.Generator().manual_seed(4))
        torch.testing.assert_close(call("good", 4), expected)
    finally:
        grading.end_function()


IPC = (
    "import ctypes\n"
    "libc = ctypes.CDLL(None)\n"
    "def make():\n    return libc.shmget(4242, 4096, 0o1666)\n"  # IPC_CREAT | 0666
    "def count():\n"
    "    info = (ctypes.c_int * 16)()\n"
    "    libc.shmctl(0, 14, info)\n"  # SHM_INFO: info[0] = segments in use
    "    return info[0]\n"
)


def test_ipc_objects_left_behind_replace_the_sandbox(sandbox):
    grading = Grading(SandboxBackend(sandbox), [IPC], 7, [IPC])
    try:
        assert grading.student("one", torch.device("cpu")).call("make") >= 0
        assert grading.end_function() == "dirty"  # the judge replaces the sandbox
        assert grading.student("two", torch.device("cpu")).call("count") == 0
    finally:
        grading.end_function()
