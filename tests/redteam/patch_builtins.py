"""Monkeypatch builtins (isinstance, abs, type checks, AssertionError) in the worker."""

ASSIGNMENT = "softmax"
CELLS = {
    "cross_entropy": r'''
import builtins
builtins.isinstance = lambda obj, cls: True
builtins.abs = lambda x: 0
builtins.issubclass = lambda a, b: True
builtins.AssertionError = type("AssertionError", (Exception,), {})
builtins.len = lambda x: 0
__WRONG__
'''
}
