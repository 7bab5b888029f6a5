"""The glossary gives a one-line definition for each term, in the book's register and terms."""

from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
GLOSSARY = ROOT / "book" / "glossary.yml"


def _entries():
    return yaml.safe_load(GLOSSARY.read_text(encoding="utf-8"))


def test_every_term_has_a_one_line_definition():
    for e in _entries():
        d = e.get("def", "")
        assert d and "\n" not in d and len(d) <= 120, e["ko"]
        assert d.endswith("니다."), (e["ko"], d)  # 합니다체
        assert "|" not in d, e["ko"]  # the definition is a cell of a Markdown table


def test_definitions_use_the_glossary_renderings():
    entries = _entries()
    for e in entries:
        for other in entries:
            for bad in other.get("avoid") or []:
                allowed = any(bad in a for a in other.get("allow") or [])
                assert allowed or bad not in e["def"], (e["ko"], bad)


def test_glossary_page_shows_the_definitions(built_book):
    html = (built_book / "book" / "glossary.html").read_text(encoding="utf-8")
    assert "<th" in html and "뜻" in html
    for e in _entries():
        assert e["def"] in html, e["ko"]
