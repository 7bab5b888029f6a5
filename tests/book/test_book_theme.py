"""The theme's own words read naturally in Korean: the footer, the tooltips, the labels and the
search box (book/_templates/copyright.html and coursebook.THEME_KO)."""

import re

import pytest

ATTR_RE = re.compile(r'\b(title|aria-label|placeholder)="([^"]*)"')
PAGES = ["index.html", "book/02_attention.html", "book/08_models.html", "search.html"]


def test_footer_reads_naturally_in_korean(built_book):
    html = (built_book / "book" / "02_attention.html").read_text(encoding="utf-8")
    footer = html[html.index("bd-footer-content") :]
    assert "© 2026 어텐션과 트랜스포머 강좌 저자들" in footer
    for awkward in ("으로 어텐션", "Copyright", "저작권", "By "):
        assert awkward not in footer, awkward


@pytest.mark.parametrize("page", PAGES)
def test_no_english_theme_strings(built_book, page):
    """No tooltip, label or placeholder is plain English words (citation tooltips, which hold
    commas and years, are bibliography, not theme text)."""
    html = (built_book / page).read_text(encoding="utf-8")
    english = {v for _, v in ATTR_RE.findall(html) if re.fullmatch(r"[A-Za-z][A-Za-z .]*", v)}
    assert not english, sorted(english)
    assert "전체 화면으로보기" not in html
