"""What the judge reads from the student's solution cells without running them (trusted side).

Three rules, all decided here from the source text the judge holds, never from what the
student's process reports:

- **Forbidden shortcuts** (``@pytest.mark.forbid(...)`` on a check): a use of a forbidden name
  (attribute, bare name, import, constant ``getattr`` string) in the code a test ran. The same
  names also block the matching operators in the worker's dispatcher (:data:`FORBIDDEN_OPS`),
  so aliases and private entry points (``torch.ops.aten._scaled_dot_product_attention_math``,
  ``torch._C._nn...``) fail at run time whatever name reached them.
- **Fail closed**: code the analysis cannot follow (a cell that does not parse here,
  ``getattr`` with a computed name, ``globals()``, ``from ... import *``) earns nothing in the
  items a forbid rule governs, with a Korean reason.
- **Tampering**: code that inspects or patches the grader, the interpreter or torch itself
  (``sys.modules``, frames, ``gc``, ``ctypes``, dunder attributes such as ``__globals__``, torch
  function modes, assignments to torch's attributes, ``exec``/``eval`` of code the judge never
  sees) fails every item that ran it and is reported to the
  instructor with its cell and line (``Report.problems``).
"""

import ast

# forbidden name -> aten operators (base names, every overload) the worker blocks while a check
# that forbids the name runs; names without an entry (e.g. helpers of other libraries, Python
# classes) are enforced by the source rules alone
_SDPA = (
    "scaled_dot_product_attention",
    "_scaled_dot_product_attention_math",
    "_scaled_dot_product_attention_math_for_mps",
    "_scaled_dot_product_flash_attention",
    "_scaled_dot_product_flash_attention_for_cpu",
    "_scaled_dot_product_efficient_attention",
    "_scaled_dot_product_cudnn_attention",
    "_scaled_dot_product_fused_attention_overrideable",
    "_flash_attention_forward",
    "_efficient_attention_forward",
)
_MHA = ("_native_multi_head_attention", "_triton_multi_head_attention")
_SOFTMAX = ("softmax", "_softmax", "special_softmax", "_safe_softmax", "_masked_softmax")
_LOG_SOFTMAX = ("log_softmax", "_log_softmax", "special_log_softmax")
_LAYER_NORM = ("layer_norm", "native_layer_norm")
_RMS_NORM = ("rms_norm", "_fused_rms_norm")
_GROUP_NORM = ("group_norm", "native_group_norm")
_NLL = ("nll_loss", "nll_loss2d", "nll_loss_nd", "nll_loss_forward", "nll_loss2d_forward")
FORBIDDEN_OPS = {
    "scaled_dot_product_attention": _SDPA,
    "MultiheadAttention": _MHA,
    "multi_head_attention_forward": _MHA,
    "TransformerEncoderLayer": ("_transformer_encoder_layer_fwd",),
    "softmax": _SOFTMAX,
    "Softmax": _SOFTMAX,
    "log_softmax": _LOG_SOFTMAX,
    "LogSoftmax": _LOG_SOFTMAX,
    "logsumexp": ("logsumexp", "special_logsumexp"),
    "cross_entropy": ("cross_entropy_loss",),
    "CrossEntropyLoss": ("cross_entropy_loss",),
    "nll_loss": _NLL,
    "NLLLoss": _NLL,
    "layer_norm": _LAYER_NORM,
    "LayerNorm": _LAYER_NORM,
    "native_layer_norm": _LAYER_NORM,
    "rms_norm": _RMS_NORM,
    "RMSNorm": _RMS_NORM,
    "group_norm": _GROUP_NORM,
    "GroupNorm": _GROUP_NORM,
}


def forbidden_ops(names):
    """Sorted aten base names to block for the forbidden ``names``."""
    return sorted({op for n in names for op in FORBIDDEN_OPS.get(n, ())})


DEFINITIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
# calls that run or look up code by a computed name: the source rules cannot follow them
DYNAMIC_CALLS = {"globals", "locals", "vars"}
# calls that run code the judge never sees, or import by a computed name: tampering
HIDDEN_CODE_CALLS = {"exec", "eval", "compile", "__import__", "breakpoint"}
DYNAMIC_NAME_ARG = {"getattr", "setattr", "hasattr", "delattr"}
# modules and attributes for looking into or patching the interpreter, the grader or torch
TAMPER_MODULES = {"gc", "inspect", "ctypes", "builtins", "importlib", "types", "signal"}
TAMPER_MODULES |= {"resource", "threading", "multiprocessing", "subprocess", "socket", "mmap"}
TAMPER_MODULES |= {"weakref", "traceback", "faulthandler", "atexit", "marshal", "pickle"}
TAMPER_MODULES |= {"__main__", "worker", "wire", "autograder", "site", "runpy", "code"}
TAMPER_ATTRS = {
    "modules",  # sys.modules
    "_getframe",
    "_current_frames",
    "settrace",
    "setprofile",
    "f_back",
    "f_globals",
    "f_locals",
    "f_builtins",
    "tb_frame",
    "gi_frame",
    "overrides",  # torch.overrides (function modes)
    "TorchFunctionMode",
    "TorchDispatchMode",
    "_C",  # torch._C: the dispatcher, mode stacks
    "library",  # torch.library: operator registrations
    "ops",  # torch.ops: operators by name
    "_subclasses",
    "_ops",
    "_dynamo",
    "_decomp",
    "_refs",
    "_prims",
    "set_rng_state",  # putting back the global random state a call used
    "set_default_device",
    "set_default_dtype",
}
# flagged on any object: a state_dict() or load_state_dict() that hides what the module holds
STATE_HOOKS = {
    "_register_state_dict_hook",
    "register_state_dict_pre_hook",
    "register_state_dict_post_hook",
    "_register_load_state_dict_pre_hook",
    "register_load_state_dict_pre_hook",
    "register_load_state_dict_post_hook",
}
ALLOWED_DUNDERS = {"__init__", "__name__", "__class__", "__call__", "__len__", "__repr__"}
ALLOWED_DUNDERS |= {"__getitem__", "__qualname__", "__doc__", "__post_init__", "__future__"}
TORCH_ROOTS = {"torch", "nn", "F", "np", "numpy", "math"}


def _root(node):
    while isinstance(node, ast.Attribute | ast.Call | ast.Subscript):
        node = node.func if isinstance(node, ast.Call) else node.value
    return node.id if isinstance(node, ast.Name) else None


def _dunder(name):
    return name.startswith("__") and name.endswith("__") and name not in ALLOWED_DUNDERS


def _text(node):
    try:
        return ast.unparse(node)[:80]
    except Exception:  # unparse recurses: a deep expression still gets a label
        return type(node).__name__


def dynamic_use(node):
    """Text of ``node`` when it reaches code or names the source rules cannot follow."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
        name = node.func.id
        if name in DYNAMIC_CALLS:
            return _text(node)
        if name in DYNAMIC_NAME_ARG and len(node.args) >= 2:
            target, attr = node.args[0], node.args[1]
            computed = not (isinstance(attr, ast.Constant) and isinstance(attr.value, str))
            if computed and not (isinstance(target, ast.Name) and target.id in ("self", "cls")):
                return _text(node)
    if isinstance(node, ast.ImportFrom) and any(a.name == "*" for a in node.names):
        return f"from {node.module} import *"
    return None


def tamper_use(node):
    """Text of ``node`` when it looks into or patches the interpreter, the grader or torch."""
    if isinstance(node, ast.Import | ast.ImportFrom):
        mods = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
        bad = [m for m in mods if m.split(".")[0] in TAMPER_MODULES]
        if bad:
            return f"import {bad[0]}"
        if isinstance(node, ast.ImportFrom) and any(a.name in TAMPER_ATTRS for a in node.names):
            return f"from {node.module} import ..."
    if isinstance(node, ast.Attribute) and node.attr in STATE_HOOKS:
        return _text(node)
    if isinstance(node, ast.Attribute) and node.attr in TAMPER_ATTRS:
        if _root(node) in TORCH_ROOTS | TAMPER_MODULES | {"sys"}:
            return _text(node)
        if node.attr.startswith(("f_", "tb_", "gi_", "_getframe")):
            return _text(node)
    if isinstance(node, ast.Assign | ast.AugAssign | ast.AnnAssign | ast.Delete):
        targets = node.targets if isinstance(node, ast.Assign | ast.Delete) else [node.target]
        for t in targets:
            if isinstance(t, ast.Attribute | ast.Subscript) and _root(t) in TORCH_ROOTS:
                return _text(t) + " = ..."
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.args:
        if node.func.id in ("setattr", "delattr") and _root(node.args[0]) in TORCH_ROOTS:
            return _text(node)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
        if node.func.id in HIDDEN_CODE_CALLS:
            return _text(node)
        name_arg = node.args[1] if node.func.id in DYNAMIC_NAME_ARG and len(node.args) > 1 else None
        if isinstance(name_arg, ast.Constant) and isinstance(name_arg.value, str):
            if _dunder(name_arg.value) or name_arg.value in TAMPER_ATTRS:
                return _text(node)
    if isinstance(node, ast.Attribute) and _dunder(node.attr):
        return _text(node)  # __globals__, __subclasses__, __dict__, ...: reaching past the code
    return None


def cell_label(source):
    """How a message names a code cell: as the student finds it in JupyterLab, by what it
    defines ('`LayerNorm` 셀'), else by its first line ('첫 줄이 `import math` 인 셀'); one
    naming for the judge's messages and the worker's (Grading.load sends these labels)."""
    try:
        names = [n.name for n in ast.parse(source).body if isinstance(n, DEFINITIONS)]
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        names = []
    if names:
        more = " 등" if len(names) > 3 else ""
        return ", ".join(f"`{n}`" for n in names[:3]) + more + " 셀"
    lines = [ln.strip() for ln in source.splitlines()]
    first = next((ln for ln in lines if ln and not ln.startswith("#")), "")
    return f"첫 줄이 `{first[:60]}` 인 셀" if first else "빈 셀"


class CodeFacts:
    """The student's solution cells as the judge reads them: per top-level statement, the
    names it defines and uses, forbidden-name uses, dynamic uses and tampering."""

    def __init__(self, cells):
        self.unreadable = []  # (cell label, reason): cells this analysis cannot read
        self.tops = []  # (name or None, is definition, node, cell label)
        self.defined = set()  # top-level names the student binds
        for src in cells:
            label = cell_label(src)
            try:
                tree = ast.parse(src)
                nodes = {top: list(ast.walk(top)) for top in tree.body}
            except (SyntaxError, ValueError, RecursionError, MemoryError) as e:
                self.unreadable.append((label, type(e).__name__))
                continue
            for top, walked in nodes.items():
                name = getattr(top, "name", None)
                self.tops.append((name, isinstance(top, DEFINITIONS), walked, label))
                self.defined |= _binds(top)
        self.uses = {}  # top-level def/class name -> names it references
        for name, is_def, walked, _ in self.tops:
            if is_def:
                refs = {n.id for n in walked if isinstance(n, ast.Name)}
                self.uses[name] = self.uses.get(name, set()) | (refs - {name})
        self._hits = {}

    def dependencies(self, name, seen=None, skip=()):
        """Student-defined names that ``name`` uses, directly or through others (not through
        or into the names of ``skip``)."""
        seen = set() if seen is None else seen
        for dep in self.uses.get(name, ()):
            if dep in self.uses and dep not in seen and dep not in skip:
                seen.add(dep)
                self.dependencies(dep, seen, skip)
        return seen

    def _scan(self, key, find):
        """[(top-level name, is definition, [(text, cell, line)])] for the rule ``find``."""
        if key not in self._hits:
            found = []
            for name, is_def, walked, cell in self.tops:
                hits = [
                    (text, cell, getattr(node, "lineno", 0))
                    for node in walked
                    if (text := find(node))
                ]
                if hits:
                    found.append((name, is_def, hits))
            self._hits[key] = found
        return self._hits[key]

    def _within(self, found, within):
        return [h for name, is_def, hits in found if not is_def or name in within for h in hits]

    def forbidden(self, names, within):
        """[(text, cell, line)]: uses of the forbidden ``names`` in top-level code and in the
        top-level definitions named in ``within``."""
        names = frozenset(names)
        found = self._scan(("forbid", names), lambda n: self._forbidden_use(n, names))
        return self._within(found, within)

    def dynamic(self, within):
        """[(text, cell, line)]: code the forbidden-name rule cannot follow."""
        return self._within(self._scan("dynamic", dynamic_use), within)

    def tampering(self, within=None):
        """[(text, cell, line)]: code that inspects or patches the grader (all code when
        ``within`` is None)."""
        found = self._scan("tamper", tamper_use)
        if within is None:
            return [h for _, _, hits in found for h in hits]
        return self._within(found, within)

    def _forbidden_use(self, node, names):
        if isinstance(node, ast.Attribute) and node.attr in names:
            return _text(node)
        if isinstance(node, ast.Name) and node.id in names and node.id not in self.defined:
            return node.id
        if isinstance(node, ast.ImportFrom | ast.Import):
            bad = [a.name for a in node.names if a.name.split(".")[-1] in names]
            if bad:
                return f"from {node.module} import {bad[0]}" if node.module else f"import {bad[0]}"
        if isinstance(node, ast.Call) and getattr(node.func, "id", "") == "getattr":
            arg = node.args[1:2]
            if arg and isinstance(arg[0], ast.Constant) and arg[0].value in names:
                return _text(node)
        return None


def _binds(top):
    """Names a top-level statement binds (definitions, assignments, imports)."""
    if isinstance(top, DEFINITIONS):
        return {top.name}
    out = set()
    if isinstance(top, ast.Import | ast.ImportFrom):
        for a in top.names:
            if a.name != "*" and (a.asname or isinstance(top, ast.ImportFrom)):
                out.add(a.asname or a.name)
        return out
    for node in ast.walk(top):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            out.add(node.id)
    return out
