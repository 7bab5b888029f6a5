"""Figures and exercises are numbered per chapter (그림 5-1, 연습 5-2, ...), and references to
them resolve (book/_ext/coursebook.py renumbers what Sphinx numbers through the whole book)."""

import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "book" / "_ext"))
try:
    import coursebook
finally:
    sys.path.remove(str(ROOT / "book" / "_ext"))

CHAPTERS = sorted(p.stem for p in (ROOT / "book").glob("0*.md"))


def test_per_chapter_renumbers_in_page_order():
    numbers = {"figure": {"a": (7,), "b": (5,)}, "exercise": {"x": (13,), "y": (14,)}}
    assert coursebook.per_chapter(numbers, "book/05_positional") == {
        "figure": {"b": ("5-1",), "a": ("5-2",)},
        "exercise": {"x": ("5-1",), "y": ("5-2",)},
    }
    assert coursebook.per_chapter(numbers, "book/intro") is numbers


@pytest.mark.parametrize("page", CHAPTERS)
def test_captions_and_references_use_chapter_numbers(built_book, page):
    chapter = int(page[:2])
    html = (built_book / "book" / f"{page}.html").read_text(encoding="utf-8")
    captions = re.findall(r'class="caption-number">(\S+) ([\d-]+) ?<', html)
    assert captions, page
    seen = {}
    for kind, number in captions:
        assert re.fullmatch(rf"{chapter}-\d+", number), (page, kind, number)
        seen.setdefault(kind, []).append(int(number.split("-")[1]))
    for kind, ks in seen.items():
        assert sorted(set(ks)) == list(range(1, max(ks) + 1)), (page, kind, ks)
    assert "연습" in seen, seen
    # every solution refers to its exercise by the same chapter number
    for ref in re.findall(r'href="#ex-\d\d-\d+">\s*연습 ([\d-]+)', html):
        assert ref.startswith(f"{chapter}-"), (page, ref)
