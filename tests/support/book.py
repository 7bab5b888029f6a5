"""What several tests of the book share: its chapters, and the course's own tools loaded once,
tools/release.py (``release``: release notebooks, the student bundle, its leak scan) and
book/_ext/coursebook.py (``coursebook``: the Sphinx extension, which also writes the chapter
notebooks).
"""

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CHAPTERS = [
    "01_softmax",
    "02_attention",
    "03_masking",
    "04_multihead",
    "05_positional",
    "06_normalization",
    "07_efficient",
    "08_models",
    "09_decoding",
]

sys.path[:0] = [str(ROOT / "tools"), str(ROOT / "book" / "_ext")]
try:
    import coursebook  # noqa: F401
    import release  # noqa: F401
finally:
    del sys.path[:2]
