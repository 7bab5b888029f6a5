"""The book's diagrams, a page's plots and the class report's plots draw Hangul with NanumGothic
under a matplotlib font cache written before the font was installed.

All three set their fonts through one module, book/koreanfont.py, which registers the font file by
its path. The cache: matplotlib writes its font list (fontlist-*.json) into a private MPLCONFIGDIR,
then the Nanum fonts are taken out of it, which is the list of a machine where matplotlib ran
before fonts-nanum was installed. Each part then draws in a fresh process that reads that cache,
with every warning an error, and reports the fonts of its Hangul text.
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BOOK = ROOT / "book"
NANUM = Path("/usr/share/fonts/truetype/nanum/NanumGothic.ttf")


def _run(code, env, cwd):
    return subprocess.run(
        [sys.executable, "-c", code], cwd=cwd, env=env, capture_output=True, text=True, timeout=300
    )


@pytest.fixture
def stale_cache(tmp_path):
    """Environment whose MPLCONFIGDIR holds a font cache that lists no Nanum font."""
    if not NANUM.is_file():
        pytest.fail(f"{NANUM} is missing: run `make sysdeps` (tools/sysdeps.sh, fonts-nanum)")
    env = {**os.environ, "MPLCONFIGDIR": str(tmp_path / "mpl")}
    proc = _run("import matplotlib.font_manager", env, tmp_path)  # writes the cache
    assert proc.returncode == 0, proc.stderr
    [cache] = (tmp_path / "mpl").glob("fontlist-*.json")
    fonts = json.loads(cache.read_text(encoding="utf-8"))
    known = len(fonts["ttflist"])
    fonts["ttflist"] = [f for f in fonts["ttflist"] if "Nanum" not in f["name"]]
    assert len(fonts["ttflist"]) < known, "matplotlib's fresh cache should list NanumGothic"
    cache.write_text(json.dumps(fonts), encoding="utf-8")
    return env


# Draws FIGURES[part] in a process whose font cache has no Nanum font, with every warning an
# error ("Glyph ... missing from font(s) DejaVu Sans" is a UserWarning; "findfont: Font family
# 'NanumGothic' not found" is logged to stderr), then prints the font families of its Hangul text.
DRAW_FIGURES = """
import io, json, re, warnings
import matplotlib
matplotlib.use("Agg")
from matplotlib import font_manager as fm
from matplotlib.text import Text
assert not any("Nanum" in f.name for f in fm.fontManager.ttflist), "the cache knows Nanum"
warnings.simplefilter("error")
{draw}
for fig in figs:
    fig.savefig(io.BytesIO(), format="png")
hangul = [t for f in figs for t in f.findobj(Text) if re.search("[가-힣]", t.get_text())]
print(json.dumps({{
    "figures": len(figs),
    "hangul": len(hangul),
    "families": sorted({{",".join(t.get_fontproperties().get_family()) for t in hangul}}),
    "registered": sorted({{f.name for f in fm.fontManager.ttflist if "Nanum" in f.name}}),
}}))
"""

FIGURES = {
    # every diagram, drawn on its own (no page called use_korean_font() before)
    "diagrams": """
import diagrams
figs = [fn() for fn in diagrams.DIAGRAMS]
""",
    # a page's plots: its first cell, then bookplot's helpers
    "page": """
import matplotlib.pyplot as plt
import torch
from bookplot import show_mask, show_weights, use_korean_font
use_korean_font()
fig, (a, b) = plt.subplots(1, 2)
labels = ["나는", "학교에", "간다"]
show_weights(a, torch.softmax(torch.arange(9.0).view(3, 3), -1), "어텐션 가중치", labels)
show_mask(b, torch.tril(torch.ones(3, 3, dtype=torch.bool)), "인과적 마스크")
plt.title("페이지 그림")
figs = [fig]
""",
    # the class report's plots, each figure kept as plots.png() embeds it
    "report": """
from autograder.reporting import class_report as cr
from autograder.reporting import plots
figs, embed = [], plots.png
plots.png = lambda fig, alt: (figs.append(fig), embed(fig, alt))[1]
cells = [("softmax", "test_a", 2.0), ("softmax", "test_b", 3.0)]
rows = [cr.Row(f"s{i}", i, 5.0, {}) for i in range(4)]
for i, r in enumerate(rows):
    r.outcomes = {c[:2]: cr.OUTCOMES[i % 4] for c in cells}
plots.score_plot(rows, 5.0)
plots.outcome_plot(cells, cr.outcome_counts(cells, rows), len(rows))
plots.time_plot([("s0", "softmax", 1.5)])
plots.time_plot([])
""",
}
# where each part runs: the book's kernel directory (book/matplotlibrc applies), or anywhere
FIGURES_CWD = {"diagrams": BOOK, "page": BOOK, "report": None}


@pytest.mark.parametrize("part", list(FIGURES))
def test_figures_draw_hangul_in_nanum_gothic_with_a_stale_cache(part, stale_cache, tmp_path):
    """The diagrams, a page's plots and the class report's plots draw every Hangul glyph with
    NanumGothic (no glyph missing, no font-not-found warning) though the cache lacks it."""
    code = DRAW_FIGURES.format(draw=FIGURES[part])
    proc = _run(code, stale_cache, FIGURES_CWD[part] or tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stderr == "", proc.stderr[-3000:]
    drawn = json.loads(proc.stdout.splitlines()[-1])
    assert drawn["figures"] >= 1 and drawn["hangul"] >= 3, drawn
    assert "NanumGothic" in drawn["registered"], drawn
    assert all("NanumGothic" in f.split(",") for f in drawn["families"]), drawn
