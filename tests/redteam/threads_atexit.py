"""Threads, atexit hooks, signal handlers and a double-forked daemon that act after the check."""

ASSIGNMENT = "softmax"
CELLS = {
    "cross_entropy": r'''
import atexit, os, signal, socket, threading, time

def _act():
    for p in ("__MARK__/pwned_late", "__COURSE__/pwned_late.txt"):
        try:
            open(p, "w").write("late")
        except OSError:
            pass
    try:
        socket.create_connection(("127.0.0.1", __PORT__), timeout=0.2).sendall(b"LATE")
    except OSError:
        pass

def _loop():
    for _ in range(600):
        _act()
        time.sleep(0.05)

threading.Thread(target=_loop, daemon=False).start()
atexit.register(_act)
signal.signal(signal.SIGTERM, lambda *a: _act())
try:
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:
            _loop()
        os._exit(0)
except OSError:
    pass
__WRONG__
'''
}
