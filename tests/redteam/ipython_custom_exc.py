"""set_custom_exc swallowing every exception, plus a failing-but-silent definition set."""

ASSIGNMENT = "softmax"
CELLS = {
    "cross_entropy": r'''
def _quiet(shell, etype, evalue, tb, tb_offset=None):
    return None

try:
    get_ipython().set_custom_exc((BaseException,), _quiet)
except NameError:
    pass
__WRONG__
'''
}
