"""Try to recover the judge's inputs ahead of time: reseed torch, read /dev/urandom state, look
for the run seed in the environment and argv, and cache answers across checks in /tmp."""

ASSIGNMENT = "softmax"
CELLS = {
    "cross_entropy": r'''
import os, sys, json
_leak = {"argv": sys.argv, "env": dict(os.environ), "ppid": os.getppid()}
try:
    _leak["parent_cmdline"] = open(f"/proc/{os.getppid()}/cmdline", "rb").read().decode(errors="replace")
except OSError:
    pass
try:
    _prev = json.load(open("/tmp/answers.json"))
except (OSError, ValueError):
    _prev = {}
try:
    json.dump({"seen": True}, open("/tmp/answers.json", "w"))
except OSError:
    pass
torch.manual_seed(0)
__WRONG__
def softmax(x, dim=-1, temperature=1.0):
    raise RuntimeError("LEAK " + json.dumps(_leak)[:1500])
'''
}
