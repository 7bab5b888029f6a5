"""Operator blocking: a check's forbidden ready-made functions, blocked in torch's dispatcher
under every alias (the zygote registers them before forking a child). Runs inside the sandbox.
"""

import functools

import torch

BLOCK_KEYS = (
    "CompositeImplicitAutograd",
    "CompositeExplicitAutograd",
    "CompositeExplicitAutogradNonFunctional",
    "CPU",
    "CUDA",
    "Meta",
    "AutogradCPU",
    "AutogradCUDA",
    "Autograd",
    "AutogradOther",
)


def block_operators(bases):
    """Replace every kernel of the aten operators named ``bases`` (all overloads) with one that
    raises ``forbidden operator aten::NAME``: whatever Python name reaches the operator (a
    public function, a method, an alias, ``torch.ops.aten...``), it cannot run. Returns the
    registration handle: the kernels are replaced while it lives (see keep_forever)."""
    lib = grader_library()
    for full in [f for b in bases for f in aten_overloads().get(b, ())]:
        name = full.partition("::")[2]
        for key in kernel_keys(full):
            lib.impl(name, key, _blocked(name), False)
    return lib


def keep_forever(handle):
    """Hold a reference to ``handle`` that no Python code can find or drop: a registration
    handle kept this way (it is not tracked by the garbage collector either) lasts as long as
    the process, and the student's code cannot reach it to undo the registration."""
    import ctypes

    ctypes.pythonapi.Py_IncRef(ctypes.py_object(handle))


def quiet_overrides():
    """Let torch give its one-time warning "Overriding a previously registered kernel" here, for
    a registration dropped at once, so that block_operators in a child needs no warnings
    filter (the filter's context manager alone copied a hundred pages of the zygote's memory
    into every child)."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        lib = grader_library()
        lib.impl("_softmax", "CPU", _blocked("_softmax"), False)
    del lib  # the registration ends with its handle


def grader_library():
    """A handle for the grader's kernels on aten operators; its registrations end with it."""
    return torch._C._dispatch_library("IMPL", "aten", "", "<grader>", 0)


@functools.cache
def aten_overloads():
    """{aten base name: ['aten::name.overload', ...]} (the zygote builds it once)."""
    out = {}
    for full in torch._C._dispatch_get_all_op_names():
        ns, _, name = full.partition("::")
        if ns == "aten":
            out.setdefault(name.split(".")[0], []).append(full)
    return out


@functools.cache
def kernel_keys(full):
    """The BLOCK_KEYS for which operator ``full`` has a kernel."""
    has = torch._C._dispatch_has_kernel_for_dispatch_key
    return [key for key in BLOCK_KEYS if has(full, key)]


# operators that checks forbid today (see autograder/judge/policy.py): the zygote looks up their
# kernels once, so blocking them costs each child only the registrations
LIKELY_BLOCKED = ("softmax", "attention", "norm", "nll", "cross_entropy", "logsumexp")


def _blocked(name):
    def kernel(*args, **kwargs):
        raise RuntimeError(f"forbidden operator aten::{name}")

    return kernel
