"""Korean text in matplotlib: register the course font by its file path, then pick the families.

Used by the book's pages (through bookplot), its diagrams (diagrams.py), the chapter notebooks of
the student bundle (copied beside them) and the class report's plots (autograder/reporting/
plots.py, which imports it as the top-level module ``koreanfont``: pyproject.toml installs this
one file of book/).

matplotlib lists the system's fonts once, in its per-user cache (fontlist-*.json under
matplotlib.get_cachedir()), and reads that list afterwards: a cache written before fonts-nanum
was installed has no NanumGothic, and every Hangul glyph would be drawn as a box. Registering the
font file by its path (font_manager.fontManager.addfont) makes the cache's age irrelevant.
"""

import functools
from pathlib import Path

import matplotlib
from matplotlib import font_manager

# The course font (Debian fonts-nanum, installed by tools/sysdeps.sh), then the Korean fonts that
# Windows, macOS and other Linux systems ship, for students running the chapter notebooks.
NANUM_GOTHIC = Path("/usr/share/fonts/truetype/nanum/NanumGothic.ttf")
KOREAN_FAMILIES = ["NanumGothic", "Malgun Gothic", "AppleGothic", "Noto Sans CJK KR"]


def korean_fonts(path=NANUM_GOTHIC):
    """matplotlib's font.family for Korean text: DejaVu Sans for Latin text, digits and math,
    then the first Korean family matplotlib has (none: Hangul is drawn as boxes, with a warning).

    The font file at ``path`` is registered by its path first, whatever the font cache lists."""
    if Path(path).is_file():
        font_manager.fontManager.addfont(str(path))
    known = {f.name for f in font_manager.fontManager.ttflist}
    korean = next((name for name in KOREAN_FAMILIES if name in known), None)
    return ["DejaVu Sans"] + ([korean] if korean else [])


def use_korean_font(path=NANUM_GOTHIC):
    """Set matplotlib's global font.family to korean_fonts(path) (a page's first cell)."""
    matplotlib.rcParams["font.family"] = korean_fonts(path)


def korean_plot(draw):
    """``draw`` run with font.family = korean_fonts(), leaving matplotlib's global rc alone.

    Text takes its font family when it is created, so a figure drawn inside keeps Korean fonts
    when it is saved later."""

    @functools.wraps(draw)
    def drawn(*args, **kw):
        with matplotlib.rc_context({"font.family": korean_fonts()}):
            return draw(*args, **kw)

    return drawn
