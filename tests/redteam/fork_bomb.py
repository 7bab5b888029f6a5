"""Bounded fork bomb (300 forks, each child forks again) and 300 threads that sleep."""

ASSIGNMENT = "softmax"
CELLS = {
    "softmax": r'''
import os, time, threading
def softmax(x, dim=-1, temperature=1.0):
    pids = []
    for _ in range(300):
        try:
            pid = os.fork()
        except OSError:
            break
        if pid == 0:
            try:
                os.fork()
            except OSError:
                pass
            time.sleep(60)
            os._exit(0)
        pids.append(pid)
    for _ in range(300):
        try:
            threading.Thread(target=time.sleep, args=(60,), daemon=True).start()
        except RuntimeError:
            break
    return x * 0
''',
}
