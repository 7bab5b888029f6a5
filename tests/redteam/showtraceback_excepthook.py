"""Replace showtraceback / sys.excepthook / traceback formatting so failures look like passes."""

ASSIGNMENT = "softmax"
CELLS = {
    "cross_entropy": r'''
import sys, traceback
sys.excepthook = lambda *a: None
traceback.format_exception = lambda *a, **k: []
traceback.print_exc = lambda *a, **k: None
try:
    ip = get_ipython()
    ip.showtraceback = lambda *a, **k: None
    ip._showtraceback = lambda *a, **k: None
except NameError:
    pass
__WRONG__
'''
}
