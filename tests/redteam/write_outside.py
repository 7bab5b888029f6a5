"""Write files outside the worker's scratch: course dir, repo copy, host /tmp, HOME, /."""

ASSIGNMENT = "softmax"
CELLS = {
    "cross_entropy": r'''
import os
for _p in ("__MARK__/pwned_direct", "__COURSE__/pwned.txt", "__REPO__/solutions/pwned.py",
           "__COURSE__/source/softmax/pwned.txt", "/tmp/../__MARK__/pwned_dotdot",
           "/proc/1/root__MARK__/pwned_proc", "/pwned_root", "/usr/pwned", "/grader/autograder/sandboxed/child.py",
           "/grader/autograder/sandboxed/wire.py", "/grader/autograder/pwned.py"):
    try:
        with open(_p, "a") as _f:
            _f.write("PWNED")
    except OSError:
        pass
try:
    os.symlink("__MARK__/pwned_symlink_target", "/tmp/link")
    open("/tmp/link", "w").write("PWNED")
except OSError:
    pass
__WRONG__
'''
}
