"""Hangul in the book's figures does not depend on matplotlib's per-user font cache.

matplotlib lists the system's fonts once, in ~/.cache/matplotlib/fontlist-*.json, and reads that
list afterwards. On a machine where matplotlib ran before fonts-nanum was installed, the list has
no NanumGothic; book/matplotlibrc alone then draws every Hangul glyph as a box, with a
"findfont" warning that fails the book build. bookplot.use_korean_font() registers the font by
its path. The test writes such a stale cache into a private MPLCONFIGDIR and draws Korean text
the way a page does (kernel working directory book/).
"""

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BOOK = ROOT / "book"
NANUM = Path("/usr/share/fonts/truetype/nanum/NanumGothic.ttf")

WRITE_STALE_CACHE = """
from pathlib import Path
import matplotlib
from matplotlib import font_manager as fm
fm.fontManager.ttflist = [f for f in fm.fontManager.ttflist if "Nanum" not in f.name]
cache = Path(matplotlib.get_cachedir()) / f"fontlist-v{fm.FontManager.__version__}.json"
fm.json_dump(fm.fontManager, cache)
"""

DRAW_KOREAN = """
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt
from matplotlib import font_manager as fm
{register}
assert not any("Nanum" in f.name for f in fm.fontManager.ttflist) or {registered}
fig, ax = plt.subplots()
ax.set_title("어텐션 가중치")
fig.savefig("{out}")
"""


def _run(code, env, cwd):
    return subprocess.run(
        [sys.executable, "-c", code], cwd=cwd, env=env, capture_output=True, text=True, timeout=120
    )


@pytest.fixture
def stale_cache(tmp_path):
    """Environment whose matplotlib font cache was written without any Nanum font."""
    if not NANUM.is_file():
        pytest.fail("fonts-nanum is missing: run `make sysdeps`")
    env = {**os.environ, "MPLCONFIGDIR": str(tmp_path / "mpl")}
    proc = _run(WRITE_STALE_CACHE, env, tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert list((tmp_path / "mpl").glob("fontlist-*.json"))
    return env


def test_stale_cache_alone_loses_hangul(stale_cache, tmp_path):
    """The set-up reproduces the failure: matplotlibrc's NanumGothic is not found."""
    code = DRAW_KOREAN.format(register="", registered=False, out=tmp_path / "a.png")
    proc = _run(code, stale_cache, BOOK)
    assert proc.returncode == 0, proc.stderr
    assert "findfont: Font family 'NanumGothic' not found" in proc.stderr
    assert "missing from font" in proc.stderr  # Glyph ... missing from font(s) DejaVu Sans


def test_use_korean_font_draws_hangul_with_a_stale_cache(stale_cache, tmp_path):
    register = "from bookplot import use_korean_font\nuse_korean_font()"
    code = DRAW_KOREAN.format(register=register, registered=True, out=tmp_path / "b.png")
    code += "\nprint(plt.rcParams['font.family'])"
    proc = _run(code, stale_cache, BOOK)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == "", proc.stderr
    assert "NanumGothic" in proc.stdout


def test_every_chapter_registers_the_font_in_its_first_cell():
    for page in sorted(BOOK.glob("0*.md")):
        text = page.read_text(encoding="utf-8")
        start = text.index("```{code-cell}")
        first = text[start : text.index("\n```\n", start)]
        assert "use_korean_font()" in first, page.name
