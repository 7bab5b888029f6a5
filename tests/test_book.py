"""The Jupyter Book: builds with warnings as errors, keeps one Korean term per
concept, and works in a real browser (headless Chromium): no JavaScript errors,
math rendered by MathJax, every image loads, and the search page finds "어텐션".

The build goes to the same _build/ folder as `make book`, so jupyter-cache makes
a rebuild with nothing changed fast; a cold build executes every page.
"""

import functools
import http.server
import json
import os
import re
import shutil
import socketserver
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
BOOK = ROOT / "book"
HTML = ROOT / "_build" / "html"
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
PAGES = ["intro", *CHAPTERS, "glossary", "bibliography", "exec_stats"]
REQUIRED_BIB_KEYS = """bahdanau2014 vaswani2017 devlin2019 radford2019 brown2020 raffel2020
su2021 press2022 shazeer2019 ainslie2023 beltagy2020 katharopoulos2020 dao2022 ba2016
zhang2019 xiong2020 wu2016 keskar2019 holtzman2020""".split()


def _toc_files():
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text(encoding="utf-8"))
    files = [toc["root"]]
    for part in toc.get("parts", []):
        files += [c["file"] for c in part["chapters"]]
    return [f.removeprefix("book/") for f in files]


# ---------------------------------------------------------------------------------------------
# Build


@pytest.fixture(scope="session")
def built_book():
    """Build the whole book once per session with --warningiserror; return the HTML folder."""
    env = dict(os.environ)
    jb = Path(sys.executable).with_name("jupyter-book")
    t0 = time.perf_counter()
    proc = subprocess.run(
        [str(jb), "build", str(ROOT), "--warningiserror", "--keep-going"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    elapsed = time.perf_counter() - t0
    log = proc.stdout + proc.stderr
    problems = [ln for ln in log.splitlines() if re.search(r"WARNING|ERROR|Traceback", ln)]
    problems = [ln for ln in problems if "IPKernelApp" not in ln]
    assert proc.returncode == 0, "book build failed:\n" + "\n".join(problems[-40:] or [log[-4000:]])
    print(f"book build took {elapsed:.1f} s")
    return HTML


BROKEN_PAGE = """---
jupytext:
  text_representation:
    extension: .md
    format_name: myst
kernelspec:
  display_name: Python 3
  language: python
  name: python3
---

# Broken

```{code-cell} python3
raise ValueError("this cell fails on purpose")
```
"""


def test_a_failing_cell_fails_the_build(tmp_path):
    """Same configuration, one page whose cell raises: jupyter-book must exit non-zero."""
    shutil.copy(ROOT / "_config.yml", tmp_path)
    shutil.copytree(BOOK / "_ext", tmp_path / "book" / "_ext")
    shutil.copy(BOOK / "references.bib", tmp_path / "book")
    (tmp_path / "book" / "broken.md").write_text(BROKEN_PAGE, encoding="utf-8")
    (tmp_path / "_toc.yml").write_text("format: jb-book\nroot: book/broken\n", encoding="utf-8")
    jb = Path(sys.executable).with_name("jupyter-book")
    proc = subprocess.run(
        [str(jb), "build", str(tmp_path), "--warningiserror", "--keep-going"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode != 0
    assert "this cell fails on purpose" in proc.stdout + proc.stderr


def test_toc_lists_every_page():
    assert _toc_files() == PAGES
    for page in PAGES:
        assert (BOOK / f"{page}.md").is_file(), page


def test_build_succeeds_with_warnings_as_errors(built_book):
    for page in PAGES:
        name = "index.html" if page == "intro" else f"book/{page}.html"
        if page == "intro":
            assert (built_book / "book" / "intro.html").is_file()
        assert (built_book / name).is_file() or (built_book / "book" / f"{page}.html").is_file()


def _exec_rows(html_dir):
    """(document, seconds, ok) rows of the {nb-exec-table} on the execution-statistics page."""
    html = (html_dir / "book" / "exec_stats.html").read_text(encoding="utf-8")
    body = html[html.find("<tbody") : html.find("</tbody>")]
    rows = []
    for tr in re.findall(r"<tr.*?</tr>", body, flags=re.S):
        cells = [re.sub(r"<[^>]+>", "", c).strip() for c in re.findall(r"<td.*?</td>", tr, re.S)]
        rows.append((cells[0], float(cells[3]), cells[4] == "✅"))
    return rows


@pytest.mark.parametrize("page", CHAPTERS)
def test_no_object_reprs_in_outputs(built_book, page):
    """Cells end cleanly: no stray `<torch._C.Generator at 0x...>`-style reprs in a page."""
    html = (built_book / "book" / f"{page}.html").read_text(encoding="utf-8")
    leaked = re.findall(r"&lt;[\w.]+ (?:object )?at 0x[0-9a-f]+&gt;", html)
    assert not leaked, leaked


def test_execution_statistics_page_lists_chapters(built_book):
    rows = _exec_rows(built_book)
    docs = {doc for doc, _, _ in rows}
    for page in ["intro", *CHAPTERS]:
        assert f"book/{page}" in docs, page
    assert all(ok for _, _, ok in rows), rows


def test_execution_time_budget(built_book):
    """Cold build < 5 min on 2 cores: each page executes in <= 40 s, all pages in <= 200 s."""
    rows = _exec_rows(built_book)
    slow = [(doc, t) for doc, t, _ in rows if t > 40]
    assert not slow, slow
    assert sum(t for _, t, _ in rows) <= 200, rows


def test_chapters_link_released_assignments(built_book):
    """A chapter whose assignment exists in exercises/source links the student notebook."""
    linked = 0
    for page in CHAPTERS:
        topic = page.split("_", 1)[1]
        if not (ROOT / "exercises" / "source" / topic).is_dir():
            continue
        assert (ROOT / "exercises" / "release" / topic / f"{topic}.ipynb").is_file(), topic
        html = (built_book / "book" / f"{page}.html").read_text(encoding="utf-8")
        assert re.search(rf'href="[^"]*_downloads/[^"]*/{topic}\.ipynb"', html), page
        linked += 1
    assert linked >= 2


# ---------------------------------------------------------------------------------------------
# Content structure (checked on the sources, no build needed)


def _text(page):
    return (BOOK / f"{page}.md").read_text(encoding="utf-8")


@pytest.mark.parametrize("page", CHAPTERS)
def test_chapter_structure(page):
    """Learning objectives first; a summary, a common-mistakes box, exercises with
    toggled solutions at the end."""
    src = _text(page)
    assert "kernelspec:" in src and "format_name: myst" in src, "not a MyST notebook"
    after_title = re.search(r"^# .+\n+(.+)", src, flags=re.M).group(1)
    assert after_title.startswith(":::{admonition} 학습 목표"), "must open with learning objectives"
    assert "## 요약" in src
    assert re.search(r"admonition\}\s*흔한 실수", src)
    assert "{exercise}" in src
    sols = re.findall(r"\{solution(?:-start)?\}[^\n]*\n:class: dropdown", src)
    assert len(sols) >= src.count("{exercise}") >= 2


def test_references_bib_has_primary_papers():
    bib = (BOOK / "references.bib").read_text(encoding="utf-8")
    keys = re.findall(r"^@\w+\{([^,]+),", bib, flags=re.M)
    assert len(keys) == len(set(keys)), "duplicate bib keys"
    missing = [k for k in REQUIRED_BIB_KEYS if k not in keys]
    assert not missing, missing


def test_every_cited_key_exists():
    bib = (BOOK / "references.bib").read_text(encoding="utf-8")
    keys = set(re.findall(r"^@\w+\{([^,]+),", bib, flags=re.M))
    for page in PAGES:
        for group in re.findall(r"\{cite(?::\w+)?\}`([^`]+)`", _text(page)):
            for key in group.split(","):
                assert key.strip() in keys, (page, key)


# ---------------------------------------------------------------------------------------------
# Terminology: the glossary is the single source of Korean renderings


def _glossary():
    return yaml.safe_load((BOOK / "glossary.yml").read_text(encoding="utf-8"))


def test_glossary_one_rendering_per_term():
    entries = _glossary()
    en = [t.lower() for e in entries for t in e["en"]]
    ko = [e["ko"] for e in entries]
    assert len(en) == len(set(en)), "an English term appears twice"
    assert len(ko) == len(set(ko)), "a Korean rendering is used for two concepts"
    for e in entries:
        for bad in e.get("avoid") or []:
            assert bad not in ko, bad


def _prose(src):
    """Page text without code cells and inline code (terms are checked in prose only)."""
    src = re.sub(r"```\{code-cell\}.*?```", " ", src, flags=re.S)
    src = re.sub(r"^---\n.*?\n---\n", " ", src, flags=re.S)
    src = re.sub(r"`[^`\n]*`", " ", src)
    return re.sub(r"\s+", " ", src)  # a line break inside a paragraph renders as a space


def _is_abbreviation(term):
    """RoPE, MHA, GQA, LayerNorm: parenthesised abbreviations are clarifications, not renderings."""
    return " " not in term and sum(c.isupper() for c in term) >= 2


TERM_RE = re.compile(
    r"([가-힣A-Za-z0-9\-]+(?: [가-힣A-Za-z0-9\-]+)*)\(([A-Za-z][A-Za-z0-9 \-']*)[,)]"
)


def _term_problems(prose):
    """Every `한국어(English)` pair that departs from the glossary, and every avoided variant."""
    by_en = {t.lower(): e["ko"] for e in _glossary() for t in e["en"]}
    wrong = []
    for m in TERM_RE.finditer(prose):
        before, en = m.group(1), m.group(2).strip().lower()
        ko = by_en.get(en)
        if _is_abbreviation(m.group(2).strip()):
            continue
        if ko is not None and not before.endswith(ko):
            wrong.append(f"{before}({m.group(2)}) -> expected {ko}({m.group(2)})")
    for e in _glossary():
        text = prose
        for ok in e.get("allow") or []:
            text = text.replace(ok, " ")
        for bad in e.get("avoid") or []:
            if bad in text:
                wrong.append(f"'{bad}' is not used in this book; write '{e['ko']}'")
    return wrong


@pytest.mark.parametrize("page", [p for p in PAGES if p != "glossary"])
def test_terms_follow_glossary(page):
    """`한국어(English)` must use the glossary rendering; avoided variants never appear."""
    wrong = _term_problems(_prose(_text(page)))
    assert not wrong, "\n".join(wrong)


SOURCE_NOTEBOOKS = sorted((ROOT / "exercises" / "source").glob("*/*.ipynb"))


@pytest.mark.parametrize("notebook", SOURCE_NOTEBOOKS, ids=lambda p: p.parent.name)
def test_assignment_terms_follow_glossary(notebook):
    """The assignments' Korean text uses the same renderings as the book."""
    cells = json.loads(notebook.read_text(encoding="utf-8"))["cells"]
    text = " ".join("".join(c["source"]) for c in cells if c["cell_type"] == "markdown")
    wrong = _term_problems(_prose(text))
    assert not wrong, "\n".join(wrong)


def test_term_checker_catches_a_wrong_rendering():
    """The checker itself: a variant rendering is reported, the glossary one is not."""
    by_en = {t.lower(): e["ko"] for e in _glossary() for t in e["en"]}
    bad = TERM_RE.search("이것은 자기 주의(self-attention)입니다")
    good = TERM_RE.search("이것은 셀프 어텐션(self-attention)입니다")
    assert not bad.group(1).endswith(by_en["self-attention"])
    assert good.group(1).endswith(by_en["self-attention"])


def test_korean_search_splitter_strips_particles():
    """The search index gets 어텐션 from 어텐션은/어텐션을/어텐션의 (book/_ext/coursebook.py)."""
    sys.path.insert(0, str(BOOK / "_ext"))
    try:
        import coursebook
    finally:
        sys.path.remove(str(BOOK / "_ext"))
    lang = coursebook.SearchKorean({})
    for word in ["어텐션은", "어텐션을", "어텐션의", "어텐션에서는", "어텐션"]:
        assert "어텐션" in lang.split(f"셀프 {word} 계산")
    assert coursebook.strip_particle("소프트맥스로") == "소프트맥스"
    assert coursebook.strip_particle("키를") == "키를"  # keeps at least two syllables


# ---------------------------------------------------------------------------------------------
# Figures drawn by code


def _figures(html_dir, page):
    html = (html_dir / "book" / f"{page}.html").read_text(encoding="utf-8")
    return len(re.findall(r'<img[^>]+src="[^"]*_images/[^"]+\.png"', html))


def test_figure_counts(built_book):
    counts = {p: _figures(built_book, p) for p in CHAPTERS}
    assert sum(counts[p] for p in CHAPTERS[:4]) >= 12, counts
    assert sum(counts.values()) >= 25, counts


# ---------------------------------------------------------------------------------------------
# Browser: headless Chromium through selenium, pages served over local HTTP


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


@pytest.fixture(scope="session")
def server(built_book):
    handler = functools.partial(_QuietHandler, directory=str(built_book))
    httpd = socketserver.ThreadingTCPServer(("127.0.0.1", 0), handler)
    httpd.daemon_threads = True
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


@pytest.fixture(scope="session")
def browser():
    webdriver = pytest.importorskip("selenium.webdriver")
    chromium = shutil.which("chromium")
    driver_path = shutil.which("chromedriver")
    assert chromium and driver_path, "run `make sysdeps` (chromium + chromium-driver)"
    opts = webdriver.ChromeOptions()
    opts.binary_location = chromium
    for arg in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu"):
        opts.add_argument(arg)
    opts.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    drv = webdriver.Chrome(options=opts, service=webdriver.ChromeService(driver_path))
    drv.set_page_load_timeout(60)
    drv.set_script_timeout(60)
    yield drv
    drv.quit()


WAIT_MATHJAX = """
const done = arguments[arguments.length - 1];
if (!document.querySelector('span.math, div.math')) { done("ok"); return; }
if (!window.MathJax || !MathJax.Hub) { done("no MathJax"); return; }
MathJax.Hub.Queue(function () { done("ok"); });
"""

PAGE_REPORT = """
const body = document.body.cloneNode(true);
body.querySelectorAll('pre, code, script, style, .MathJax_Preview, textarea')
    .forEach(e => e.remove());
const text = body.innerText;
const mathNodes = document.querySelectorAll('span.math, div.math');
const rendered = document.querySelectorAll('.MathJax_CHTML, .mjx-chtml');
const imgs = Array.from(document.images).map(i => [i.src, i.complete && i.naturalWidth > 0]);
return {raw: (text.match(/\\$\\$|\\\\\\(|\\\\\\[/g) || []).length, math: mathNodes.length,
        rendered: rendered.length,
        errors: document.querySelectorAll('.MathJax_Error, .mjx-merror').length,
        imgs: imgs,
        solutions: document.querySelectorAll('.solution').length,
        hidden: document.querySelectorAll('.solution.toggle-hidden').length};
"""


def _severe(logs):
    return [e["message"] for e in logs if e["level"] == "SEVERE"]


@pytest.mark.browser
@pytest.mark.parametrize("page", PAGES)
def test_page_in_browser(browser, server, page):
    browser.get_log("browser")  # drop entries from earlier pages
    browser.get(f"{server}/book/{page}.html")
    assert browser.execute_async_script(WAIT_MATHJAX) == "ok", "MathJax did not load"
    report = browser.execute_script(PAGE_REPORT)
    errors = _severe(browser.get_log("browser"))
    assert not errors, errors
    assert report["raw"] == 0, f"{report['raw']} unrendered math delimiters"
    assert report["errors"] == 0, "MathJax reported TeX errors"
    assert report["rendered"] >= report["math"], report
    broken = [src for src, ok in report["imgs"] if not ok]
    assert not broken, broken
    if page in CHAPTERS:  # exercise solutions start collapsed (sphinx-togglebutton)
        assert report["solutions"] >= 2
        assert report["hidden"] == report["solutions"], report


@pytest.mark.browser
def test_math_is_served_locally(built_book):
    html = (built_book / "book" / "01_softmax.html").read_text(encoding="utf-8")
    assert "cdn.jsdelivr" not in html and "mathjax/MathJax.js" in html
    assert (built_book / "_static" / "mathjax" / "MathJax.js").is_file()


@pytest.mark.browser
@pytest.mark.parametrize(("query", "min_hits"), [("어텐션", 5), ("소프트맥스", 2)])
def test_search_finds_korean_words(browser, server, query, min_hits):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    browser.get(f"{server}/search.html?q={query}")
    WebDriverWait(browser, 30).until(
        lambda d: (
            d.find_elements(By.CSS_SELECTOR, "#search-results li")
            or "검색이 완료" in d.find_element(By.ID, "search-results").text
            or "Search finished" in d.find_element(By.ID, "search-results").text
        )
    )
    hits = browser.find_elements(By.CSS_SELECTOR, "#search-results li")
    assert len(hits) >= min_hits, f"search for {query!r} found {len(hits)} pages"
    assert not _severe(browser.get_log("browser"))
