"""Conceptual diagrams (book/diagrams.py) and their place in the built book.

Each diagram draws without a warning (a missing glyph would fail the book build), has Korean labels
that follow book/glossary.yml, is deterministic, and the small worked examples it prints agree
with the reference code. The built HTML holds at least 12 conceptual diagrams (figures named
fig-diagram-*), each image with Korean alt text starting with "도식:".
"""

import html as html_lib
import io
import logging
import math
import re
import sys
import warnings
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
import torch  # noqa: E402
import yaml  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402
from matplotlib.text import Text  # noqa: E402

from tests.support.book import CHAPTERS  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
BOOK = ROOT / "book"
sys.path.insert(0, str(BOOK))
import diagrams  # noqa: E402

sys.path.remove(str(BOOK))

HANGUL = re.compile(r"[가-힣]")
MIN_DIAGRAMS = 12


@pytest.fixture(autouse=True)
def book_rc():
    """Draw with the book's matplotlibrc (the kernel reads it from book/)."""
    with matplotlib.rc_context(fname=str(BOOK / "matplotlibrc")):
        yield
    plt.close("all")


def _draw(fn, caplog):
    """Call fn and render it to PNG pixels; any warning or logged warning fails."""
    caplog.clear()
    with caplog.at_level(logging.WARNING), warnings.catch_warnings():
        warnings.simplefilter("error")
        fig = fn()
        buf = io.BytesIO()
        fig.savefig(buf, format="png")
    logged = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    assert not logged, logged[:3]
    buf.seek(0)
    return fig, plt.imread(buf)


def _texts(fig):
    return [t.get_text() for t in fig.findobj(Text) if t.get_text().strip()]


def test_enough_diagrams_are_registered():
    assert len(diagrams.DIAGRAMS) >= MIN_DIAGRAMS
    assert len({f.__name__ for f in diagrams.DIAGRAMS}) == len(diagrams.DIAGRAMS)


@pytest.mark.parametrize("fn", diagrams.DIAGRAMS, ids=lambda f: f.__name__)
def test_diagram_draws_with_korean_labels(fn, caplog):
    fig, pixels = _draw(fn, caplog)
    assert isinstance(fig, Figure)
    texts = _texts(fig)
    korean = [t for t in texts if HANGUL.search(t)]
    assert len(korean) >= 5, korean
    shapes = [a for ax in fig.axes for a in ax.patches] + [a for ax in fig.axes for a in ax.lines]
    assert len(shapes) >= 8, f"only {len(shapes)} boxes/arrows/lines"
    inked = (pixels[..., :3].mean(axis=-1) < 0.9).mean()
    assert 0.02 < inked < 0.6, f"{inked:.3f} of the pixels are drawn"
    for ax in fig.axes:
        assert not ax.images, "a diagram draws patches, not a data image"


@pytest.mark.parametrize("fn", diagrams.DIAGRAMS, ids=lambda f: f.__name__)
def test_diagram_is_deterministic(fn, caplog):
    _, first = _draw(fn, caplog)
    _, second = _draw(fn, caplog)
    assert first.shape == second.shape and np.array_equal(first, second)


def test_single_panel_diagrams_draw_into_a_given_axes(caplog):
    fig, ax = plt.subplots()
    assert diagrams.draw_qkv_flow(ax) is fig
    assert any(HANGUL.search(t) for t in _texts(fig))


def test_diagram_labels_follow_glossary(caplog):
    """No label uses a rendering the glossary lists under `avoid`."""
    entries = yaml.safe_load((BOOK / "glossary.yml").read_text(encoding="utf-8"))
    labels = " ".join(t for fn in diagrams.DIAGRAMS for t in _texts(_draw(fn, caplog)[0]))
    wrong = []
    for e in entries:
        text = labels
        for ok in e.get("allow") or []:
            text = text.replace(ok, " ")
        wrong += [f"{bad} -> {e['ko']}" for bad in e.get("avoid") or [] if bad in text]
    assert not wrong, wrong
    terms = ["쿼리", "키", "값", "멀티헤드 어텐션", "인과적 마스크", "패딩 마스크", "출력 투영"]
    for term in [*terms, "이어 붙이기"]:
        assert term in labels, term


def test_sdpa_example_matches_reference():
    """The numbers in the step-by-step figure are those of the reference attention."""
    from solutions.attention import scaled_dot_product_attention

    scores, scaled, masked, weights, out = diagrams._sdpa_example()
    q, k, v = (torch.tensor(a) for a in (diagrams._Q, diagrams._K, diagrams._V))
    causal = torch.tril(torch.ones(3, 3, dtype=torch.bool))
    ref_out, ref_w = scaled_dot_product_attention(q, k, v, causal)
    torch.testing.assert_close(torch.tensor(weights), ref_w)
    torch.testing.assert_close(torch.tensor(out), ref_out)
    np.testing.assert_allclose(scaled, scores / 2)
    assert np.isneginf(masked[0, 1:]).all() and np.isfinite(masked[np.tril_indices(3)]).all()


def test_online_softmax_example_matches_logsumexp():
    s, states = diagrams._online_softmax_example()
    (_, m1, l1), (_, m2, l2) = states
    assert m1 == 4 and m2 == 9
    assert math.isclose(m1 + math.log(l1), torch.logsumexp(torch.tensor(s[:4]), 0).item())
    assert math.isclose(m2 + math.log(l2), torch.logsumexp(torch.tensor(s), 0).item())


# ---------------------------------------------------------------------------------------------
# The built book

FIGURE_RE = re.compile(r'<figure[^>]*\bid="(fig-diagram-[\w-]+)"[^>]*>(.*?)</figure>', re.S)


def _diagram_images(html_dir):
    """(page, figure id, alt text, image file) for every fig-diagram-* figure in the chapters."""
    found = []
    for page in CHAPTERS:
        page_html = (html_dir / "book" / f"{page}.html").read_text(encoding="utf-8")
        for fig_id, body in FIGURE_RE.findall(page_html):
            imgs = re.findall(r"<img\b[^>]*>", body)
            assert len(imgs) == 1, (page, fig_id, imgs)
            alt = re.search(r'\balt="([^"]*)"', imgs[0])
            src = re.search(r'\bsrc="([^"]+)"', imgs[0]).group(1)
            text = html_lib.unescape(alt.group(1)) if alt else ""
            found.append((page, fig_id, text, (html_dir / "book" / src).resolve()))
    return found


def test_built_book_has_conceptual_diagrams_with_alt_text(built_book):
    found = _diagram_images(built_book)
    ids = [fig_id for _, fig_id, _, _ in found]
    assert len(ids) == len(set(ids)), "a diagram name is used twice"
    assert len(found) >= MIN_DIAGRAMS, ids
    for page, fig_id, alt, image in found:
        assert alt.startswith("도식:") and len(HANGUL.findall(alt)) >= 20, (page, fig_id, alt)
        assert image.is_file() and image.suffix == ".png", (page, fig_id, image)
        assert image.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_every_diagram_function_appears_in_the_book():
    """Each function in diagrams.DIAGRAMS is called by exactly one chapter cell."""
    sources = {page: (BOOK / f"{page}.md").read_text(encoding="utf-8") for page in CHAPTERS}
    for fn in diagrams.DIAGRAMS:
        pages = [p for p, src in sources.items() if re.search(rf"^{fn.__name__}\(\)$", src, re.M)]
        assert len(pages) == 1, (fn.__name__, pages)
