"""A message to the next student in System V shared memory: all children of one sandbox share
its IPC namespace, and a segment outlives the process that made it (the wipe only empties /tmp).
The hostile student stores an answer under a fixed key; the next student graded in the same
sandbox (a collaborator) is right only if it finds it."""

ASSIGNMENT = "decoding"
CLASS = 5  # sandbox hygiene: what one student leaves behind reaches the next
NEXT_STUDENT = True
CELLS = {
    "top_k_filter": r'''
import ctypes

try:
    _libc = ctypes.CDLL(None, use_errno=True)
    _libc.shmat.restype = ctypes.c_void_p
    _id = _libc.shmget(0x16161616, 4096, 0o1000 | 0o666)
    if _id >= 0:
        _addr = _libc.shmat(_id, None, 0)
        if _addr not in (None, ctypes.c_void_p(-1).value):
            ctypes.memmove(_addr, b"topk-answer", 11)
except OSError:
    pass
__WRONG__
'''
}
READER = (
    "top_k_filter",
    r'''
import ctypes


def _found():
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.shmat.restype = ctypes.c_void_p
        seg = libc.shmget(0x16161616, 4096, 0)
        if seg < 0:
            return False
        addr = libc.shmat(seg, None, 0)
        if addr in (None, ctypes.c_void_p(-1).value):
            return False
        return ctypes.string_at(addr, 11) == b"topk-answer"
    except OSError:
        return False
''',
)
