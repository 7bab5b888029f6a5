"""Host paths smuggled into the feedback (multihead): Reads /proc/self/mountinfo, whose root fields name the host paths of the sandbox's bind mounts
(the grader's files, the site-packages), and raises them in an error message that reaches the
feedback."""

ASSIGNMENT = "multihead"
CLASS = 5  # sandbox hygiene: /proc inside the sandbox shows host paths
HOST_PATHS = True
LEAK = r'''
def _host_paths():
    found = []
    for path in ("/proc/self/mountinfo", "/proc/1/mountinfo"):
        try:
            with open(path) as f:
                for line in f:
                    root = line.split()[3]
                    if root != "/" and root not in found:
                        found.append(root)
        except (OSError, IndexError):
            pass
    found.sort(key=lambda p: ("autograder" not in p and "repo" not in p, len(p)))
    return " ".join(found)

def mha_parameter_count(d_model, bias=True):
    raise ValueError('host paths: ' + _host_paths())
'''


def honest(sol):
    """Honest control: the reference parameter_count cell."""
    return {"parameter_count": sol["parameter_count"]}


def attack(sol):
    return {"parameter_count": LEAK}
