"""HTML/JS injection through error messages into the feedback HTML."""

ASSIGNMENT = "softmax"
CELLS = {
    "softmax": r'''
def softmax(x, dim=-1, temperature=1.0):
    raise RuntimeError('<script>alert("xss-redteam")</script><img src=x onerror=alert("xss-redteam")>')
''',
}
