"""Display math reads like a textbook in a real browser, at desktop width and on a phone.

Headless Chromium opens chapters at 1280 px and 375 px (CSS pixels). For every display equation
(div.math rendered by MathJax 2): an equation narrower than its box is centred; one wider than
its box is not cut off but scrolls sideways (overflow-x auto, scrollWidth > clientWidth); and the
box spans the text column, not a fixed fraction of it. Screenshots of the first equations of each
page and width go to _build/screenshots/ for a person to look at.
"""

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SHOTS = ROOT / "_build" / "screenshots"
WIDTHS = [1280, 375]
PAGES = ["01_softmax", "02_attention", "04_multihead", "05_positional", "06_normalization"]

WAIT_MATHJAX = """
const done = arguments[arguments.length - 1];
if (!window.MathJax || !MathJax.Hub) { done("no MathJax"); return; }
MathJax.Hub.Queue(function () { done("ok"); });
"""

MEASURE = """
const rows = [];
for (const d of document.querySelectorAll('div.math')) {
  const math = d.querySelector('.mjx-chtml .mjx-math, .MathJax_CHTML .mjx-math');
  if (!math) { rows.push({missing: true}); continue; }
  const box = d.getBoundingClientRect(), m = math.getBoundingClientRect();
  const text = d.closest('article, main, .bd-article') || document.body;
  const eqno = d.querySelector('span.eqno');
  rows.push({
    left: m.left - box.left, right: box.right - m.right, width: m.width,
    box: d.clientWidth, scroll: d.scrollWidth, overflowX: getComputedStyle(d).overflowX,
    column: text.getBoundingClientRect().width, eqno: eqno ? eqno.getBoundingClientRect().width : 0,
  });
}
return rows;
"""


def _set_width(browser, width):
    browser.execute_cdp_cmd(
        "Emulation.setDeviceMetricsOverride",
        {"width": width, "height": 900, "deviceScaleFactor": 1, "mobile": width < 600},
    )


@pytest.fixture
def at_width(browser):
    yield lambda width: _set_width(browser, width)
    browser.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})


def _screenshot(browser, page, width):
    """Save the viewport scrolled to the first display equation."""
    SHOTS.mkdir(parents=True, exist_ok=True)
    browser.execute_script(
        "const d = document.querySelector('div.math');"
        "if (d) window.scrollTo(0, d.getBoundingClientRect().top + window.scrollY - 150);"
    )
    browser.save_screenshot(str(SHOTS / f"{page}-{width}.png"))


@pytest.mark.browser
@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("page", PAGES)
def test_display_math_is_centred_and_never_clipped(browser, server, at_width, page, width):
    at_width(width)
    browser.get(f"{server}/book/{page}.html")
    assert browser.execute_async_script(WAIT_MATHJAX) == "ok"
    rows = browser.execute_script(MEASURE)
    assert rows, "no display math on the page"
    assert not [r for r in rows if r.get("missing")], "an equation was not rendered"
    _screenshot(browser, page, width)
    for i, r in enumerate(rows):
        where = f"{page} at {width}px, equation {i + 1}: {r}"
        # the box spans the text column (the theme's flex layout left it a fraction of it)
        assert r["box"] >= 0.9 * r["column"] - 40, where
        if r["scroll"] > r["box"] + 1:  # wider than its box: scrolls, nothing cut off
            assert r["overflowX"] in ("auto", "scroll"), where
        else:  # fits: centred in the room the equation number leaves
            assert r["left"] >= 0 and r["right"] >= 0, where
            assert abs(r["left"] - (r["right"] - r["eqno"])) <= 0.1 * r["box"] + 4, where


@pytest.mark.browser
def test_a_long_equation_scrolls_on_a_phone(browser, server, at_width):
    """At 375 px at least one equation of chapter 4 is wider than the column and scrolls."""
    at_width(375)
    browser.get(f"{server}/book/04_multihead.html")
    assert browser.execute_async_script(WAIT_MATHJAX) == "ok"
    rows = browser.execute_script(MEASURE)
    wide = [r for r in rows if r["width"] > r["box"]]
    assert wide, rows
    assert all(r["scroll"] >= r["width"] - 1 and r["overflowX"] == "auto" for r in wide), wide
