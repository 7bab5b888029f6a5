"""Every figure of a chapter has real alt text (a description, not its file name) and is sharp on
a 2x screen: a PNG drawn at least twice as many pixels wide as it is shown (bookplot's
use_sharp_figures), or an SVG."""

import re
import struct

import pytest

from tests.support.book import CHAPTERS

IMG_RE = re.compile(r"<img\b[^>]*>")


def _attr(tag, name):
    m = re.search(rf'\b{name}="([^"]*)"', tag)
    return m.group(1) if m else None


def png_width(path):
    """Pixel width of a PNG file, read from its IHDR chunk."""
    head = path.read_bytes()[:24]
    assert head[:8] == b"\x89PNG\r\n\x1a\n", path
    return struct.unpack(">I", head[16:20])[0]


@pytest.mark.parametrize("page", CHAPTERS)
def test_figures_have_alt_text_and_are_sharp_at_2x(built_book, page):
    html_path = built_book / "book" / f"{page}.html"
    imgs = IMG_RE.findall(html_path.read_text(encoding="utf-8"))
    assert imgs, page
    for tag in imgs:
        src, alt = _attr(tag, "src"), _attr(tag, "alt") or ""
        file_name = re.search(r"_images|\.(png|svg|jpe?g)\b|[0-9a-f]{32}", alt)
        assert len(alt) >= 20 and not file_name, tag
        if src.endswith(".svg"):
            continue
        shown = re.search(r"width: (\d+(?:\.\d+)?)px", _attr(tag, "style") or "")
        assert shown, f"PNG without a display width (not drawn at 2x): {tag[:120]}"
        pixels = png_width((html_path.parent / src).resolve())
        assert pixels >= 2 * float(shown.group(1)) - 2, (tag[:120], pixels)
