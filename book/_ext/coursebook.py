"""Sphinx extension for the course book.

1. Korean search: index every word and, in addition, the word with a trailing Korean particle
   removed (어텐션은 / 어텐션을 / 어텐션의 -> 어텐션), so the search page finds "어텐션".
2. Offline MathJax: copy the Debian MathJax 2 package (libjs-mathjax, installed by
   tools/sysdeps.sh) into _static/mathjax so no page loads math from a CDN.
3. Student downloads: {{ assignment_<topic> }} links ../notebooks/<topic>/<topic>.ipynb and
   {{ student_requirements }} links ../requirements-student.txt; the build copies the release
   notebooks (from exercises/release/) and requirements-student.txt there, so the links also work
   in the offline student bundle (`make release`). This extension never runs nbgrader:
   `make notebooks` (tools/release.py) generates exercises/release/ before the build.
4. Textbook math: book/_static/coursebook.css centres display equations of MathJax 2 and lets a
   long one scroll (the theme's CSS is written for MathJax 3).
5. Korean theme strings: the tooltips, labels and the search box placeholder that the themes
   leave in English (or translate awkwardly) are replaced in every built page (THEME_KO).
6. Numbers per chapter: figures, tables, code listings and exercises of chapter N are numbered
   N-1, N-2, ... (Sphinx numbers them through the whole book when the toc is not numbered).
7. Fresh outputs: jupyter-cache keys a page on its own code cells only, so a page that imports a
   changed helper (book/*.py, solutions/*.py) would keep its old outputs; when those files change,
   the cache is emptied and every page runs again.
8. Chapter notebooks: every chapter page is also written as a notebook, chapters/NN_<topic>.ipynb
   (converted from its MyST page by myst-nb's reader, outputs empty), next to the book's helper
   modules that the chapters import (book/<module>.py) and book/matplotlibrc, and zipped whole
   into chapters.zip; each chapter page links its notebook and the zip under its title. Students
   run the notebooks from that folder with requirements-student.txt only
   (tests/student/test_chapter_notebooks.py).
"""

import ast
import hashlib
import json
import re
import shutil
import zipfile
from pathlib import Path

from sphinx.search import SearchLanguage
from sphinx.util import logging

logger = logging.getLogger(__name__)

MATHJAX_SRC = Path("/usr/share/javascript/mathjax")
# Only what TeX input + CommonHTML output needs (about 4 MB instead of 54 MB).
MATHJAX_PARTS = [
    "MathJax.js",
    "config/TeX-AMS_CHTML.js",
    "extensions",
    "jax/input/TeX",
    "jax/element",
    "jax/output/CommonHTML",
    "fonts/HTML-CSS/TeX/woff",
    "localization",
]
MATHJAX_PATH = "mathjax/MathJax.js?config=TeX-AMS_CHTML"

# Longest first, so that "에서는" is stripped before "는".
PARTICLES = sorted(
    """은 는 이 가 을 를 의 에 와 과 도 만 로 으로 에서 에게 에서는 에는 으로는 로는 까지 부터
    보다 처럼 이다 입니다 이며 이고 과의 와의 에도 에서도 만으로 들 들은 들을 들의 들이""".split(),
    key=len,
    reverse=True,
)
HANGUL = re.compile(r"[\uac00-\ud7a3]")


def strip_particle(word: str) -> str:
    """Remove one trailing particle from a Hangul word, keeping at least two syllables."""
    for p in PARTICLES:
        if word.endswith(p) and len(word) - len(p) >= 2 and HANGUL.match(word[-len(p)]):
            return word[: -len(p)]
    return word


class SearchKorean(SearchLanguage):
    """Whitespace/word splitter that also indexes particle-free Korean stems."""

    lang = "ko"
    language_name = "Korean"
    _word_re = re.compile(r"\w+")

    def split(self, input: str) -> list[str]:
        words = []
        for w in self._word_re.findall(input):
            words.append(w)
            s = strip_particle(w)
            if s != w:
                words.append(s)
        return words

    def stem(self, word: str) -> str:
        return word.lower()

    def word_filter(self, word: str) -> bool:
        return len(word) > 1 or bool(HANGUL.match(word))

    js_stemmer_code = """
var Stemmer = function() {
  this.stemWord = function(w) { return w.toLowerCase(); }
}
"""


def _copy_mathjax(app, exception):
    if exception is not None or app.builder.format != "html":
        return
    if not MATHJAX_SRC.is_dir():
        raise RuntimeError(
            f"{MATHJAX_SRC} is missing: install libjs-mathjax (bash tools/sysdeps.sh)"
        )
    dest = Path(app.outdir) / "_static" / "mathjax"
    for part in MATHJAX_PARTS:
        src, dst = MATHJAX_SRC / part, dest / part
        if dst.exists():
            continue
        dst.parent.mkdir(parents=True, exist_ok=True)
        if src.is_dir():
            shutil.copytree(src, dst, symlinks=False)
        else:
            shutil.copy2(src, dst)


SCRIPT_RE = re.compile(r"^\s*<script[^>]*>.*?</script>\s*$", re.M)


def _dedupe_scripts(app, exception):
    """Drop repeated identical <script> lines from every page head. Under Jupyter Book the
    sphinx-thebe and togglebutton set-up scripts are emitted twice, and a second
    `const THEBE_JS_URL` is a JavaScript SyntaxError in the browser."""
    if exception is not None or app.builder.format != "html":
        return
    for page in Path(app.outdir).rglob("*.html"):
        html = page.read_text(encoding="utf-8")
        head_end = html.find("</head>")
        if head_end < 0:
            continue
        seen = set()

        def keep_first(m, seen=seen):
            line = m.group(0).strip()
            if line in seen:
                return ""
            seen.add(line)
            return m.group(0)

        head = SCRIPT_RE.sub(keep_first, html[:head_end])
        if len(head) != head_end:
            page.write_text(head + html[head_end:], encoding="utf-8")


# Theme strings without a (good) Korean translation: exact attribute values -> Korean.
THEME_KO = {
    "Link to this heading": "이 제목으로 가는 링크",
    "Link to this image": "이 그림으로 가는 링크",
    "Link to this equation": "이 식으로 가는 링크",
    "Link to this table": "이 표로 가는 링크",
    "Link to this code": "이 코드로 가는 링크",
    "Link to this definition": "이 정의로 가는 링크",
    "Toggle hidden content": "숨긴 내용 펼치기·접기",
    "Search this book...": "이 책에서 검색...",
    "Toggle primary sidebar": "왼쪽 목차 열기·닫기",
    "Toggle secondary sidebar": "이 페이지 목차 열기·닫기",
    "System Settings": "시스템 설정 따르기",
    "Light": "밝은 화면",
    "Dark": "어두운 화면",
    "Color mode": "화면 색",
    "Version warning": "버전 경고",
    "Site navigation": "책 목차",
    "Main": "본문",
    "Page": "페이지",
    "On this page": "이 페이지의 내용",
    "previous page": "이전 페이지",
    "next page": "다음 페이지",
    "전체 화면으로보기": "전체 화면으로 보기",
}
ATTR_RE = re.compile(r'\b(title|aria-label|placeholder)="([^"]*)"')


def korean_attributes(html: str) -> str:
    """Replace the THEME_KO attribute values (title, aria-label, placeholder) in a page."""
    return ATTR_RE.sub(lambda m: f'{m.group(1)}="{THEME_KO.get(m.group(2), m.group(2))}"', html)


def _translate_theme(app, exception):
    if exception is not None or app.builder.format != "html":
        return
    for page in Path(app.outdir).rglob("*.html"):
        html = page.read_text(encoding="utf-8")
        new = korean_attributes(html)
        if new != html:
            page.write_text(new, encoding="utf-8")


CHAPTER_RE = re.compile(r"(?:^|/)(\d\d)_[^/]*$")


def per_chapter(numbers, docname):
    """{figtype: {id: number}} of one page, renumbered within its chapter: the k-th item of a type
    on the page of chapter N gets the number "N-k" (a one-element tuple, which Sphinx prints as
    is). Pages that are not chapters keep their numbers."""
    m = CHAPTER_RE.search(docname)
    if not m:
        return numbers
    chapter = int(m.group(1))
    out = {}
    for figtype, ids in numbers.items():
        ordered = sorted(ids, key=lambda i: ids[i])
        out[figtype] = {fid: (f"{chapter}-{k}",) for k, fid in enumerate(ordered, start=1)}
    return out


def _number_per_chapter(app, env):
    """Runs after Sphinx assigned book-wide numbers (env-get-updated); returns the pages to
    rewrite."""
    changed = []
    for docname, numbers in env.toc_fignumbers.items():
        new = per_chapter(numbers, docname)
        if new is not numbers:
            env.toc_fignumbers[docname] = new
            changed.append(docname)
    return changed


STUDENT_REQUIREMENTS = "requirements-student.txt"  # what students pip install (book/intro.md)
TOPICS = [
    "softmax",
    "attention",
    "masking",
    "multihead",
    "positional",
    "normalization",
    "efficient",
    "models",
    "decoding",
]


def released_notebooks(root):
    """{topic: release notebook} for every assignment of exercises/source.

    The notebooks are made by nbgrader outside the book build (`make notebooks`, i.e.
    `python tools/release.py notebooks`); a source without its release notebook is an error."""
    course = Path(root) / "exercises"
    found, missing = {}, []
    for topic in TOPICS:
        if not (course / "source" / topic / f"{topic}.ipynb").is_file():
            continue
        nb = course / "release" / topic / f"{topic}.ipynb"
        if nb.is_file():
            found[topic] = nb
        else:
            missing.append(topic)
    if missing:
        raise RuntimeError(
            f"release notebooks missing for {', '.join(missing)}: run `make notebooks` "
            "(python tools/release.py notebooks) before building the book"
        )
    return found


def assignment_substitutions(root):
    """MyST substitutions {{ assignment_<topic> }}: a download link to the student notebook, which
    the build copies to notebooks/<topic>/<topic>.ipynb next to the pages (see _copy_notebooks), so
    the link also works in the offline student bundle (_build/release/); otherwise a sentence saying
    the assignment is not released yet."""
    released = released_notebooks(root)
    subs = {}
    for topic in TOPICS:
        if topic in released:
            subs[f"assignment_{topic}"] = (
                f'학생용 노트북 내려받기: <a class="reference download" '
                f'href="../notebooks/{topic}/{topic}.ipynb" download="{topic}.ipynb">'
                f"<code>{topic}.ipynb</code></a>"
            )
        else:
            subs[f"assignment_{topic}"] = "이 장의 채점 과제 노트북은 아직 공개되지 않았습니다."
    subs["student_requirements"] = (
        f'<a class="reference download" href="../{STUDENT_REQUIREMENTS}" '
        f'download="{STUDENT_REQUIREMENTS}"><code>{STUDENT_REQUIREMENTS}</code></a>'
    )
    return subs


def _copy_notebooks(app, exception):
    """Copy the release notebooks into the HTML output as notebooks/<topic>/<topic>.ipynb, and
    the students' package list (linked from the introduction) next to index.html."""
    if exception is not None or app.builder.format != "html":
        return
    dest = Path(app.outdir) / "notebooks"
    shutil.rmtree(dest, ignore_errors=True)
    for topic, nb in released_notebooks(app.srcdir).items():
        (dest / topic).mkdir(parents=True, exist_ok=True)
        shutil.copyfile(nb, dest / topic / nb.name)
    requirements = Path(app.srcdir) / STUDENT_REQUIREMENTS
    if requirements.is_file():
        shutil.copyfile(requirements, Path(app.outdir) / STUDENT_REQUIREMENTS)


def helpers_digest(root):
    """SHA-256 of the files the pages import or read (book/*.py, solutions/*.py, and
    book/glossary.yml, which the glossary page turns into its tables), names included."""
    h = hashlib.sha256()
    read = [*Path(root, "book").glob("*.py"), *Path(root, "solutions").glob("*.py")]
    for path in sorted([*read, *Path(root, "book").glob("glossary.yml")]):
        h.update(path.relative_to(root).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    return h.hexdigest()


def cache_stamp(cache):
    """The file next to the jupyter-cache folder ``cache`` that records its helpers' digest."""
    cache = Path(cache)
    return cache.with_name(cache.name + ".helpers")


def refresh_cache(cache, digest):
    """Empty the jupyter-cache folder ``cache`` unless it was filled with helpers of ``digest``
    (recorded in cache_stamp(cache)); returns True when it was emptied."""
    cache, stamp = Path(cache), cache_stamp(cache)
    stale = cache.exists() and (not stamp.is_file() or stamp.read_text() != digest)
    if stale:
        shutil.rmtree(cache)
    stamp.parent.mkdir(parents=True, exist_ok=True)
    stamp.write_text(digest)
    return stale


# Chapter notebooks (8.)

CHAPTERS_DIR = "chapters"  # in the HTML output (and the student bundle): notebooks + helpers
CHAPTERS_ZIP = "chapters.zip"  # the same folder, zipped, next to index.html
CHAPTER_DATA = ["matplotlibrc"]  # files of book/ the chapters need besides the imported modules
CHAPTER_PAGE_RE = re.compile(r"^(\d\d_[a-z_]+)\.md$")
SUBSTITUTION_RE = re.compile(r"\{\{\s*(\w+)\s*\}\}")


def chapter_pages(root):
    """The chapter pages book/NN_<topic>.md, in order."""
    book = Path(root) / "book"
    return sorted(p for p in book.glob("*.md") if CHAPTER_PAGE_RE.match(p.name))


def _imported_modules(source):
    """Top-level names of the modules a piece of Python source imports."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return set()
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names.add(node.module.split(".")[0])
    return names


def chapter_notebook(page, substitutions):
    """The notebook (nbformat node) of one MyST chapter page: code cells as they are, outputs
    empty, MyST substitutions ({{ assignment_softmax }}) replaced by their HTML, cell ids numbered
    (the same page always gives the same file)."""
    import nbformat
    from myst_nb.core.read import read_myst_markdown_notebook

    text = Path(page).read_text(encoding="utf-8")
    nb = read_myst_markdown_notebook(text)
    nb.metadata.pop("jupytext", None)
    nb.metadata["language_info"] = {"name": "python"}
    for k, cell in enumerate(nb.cells):
        cell["id"] = f"{Path(page).stem}-{k:03d}"
        if cell.cell_type == "markdown":
            cell.source = SUBSTITUTION_RE.sub(
                lambda m: str(substitutions.get(m.group(1), m.group(0))), cell.source
            )
    nbformat.validate(nb)
    return nb


def chapter_helpers(root, pages):
    """book/ files the chapter notebooks need beside them: the book modules (book/<name>.py) that
    the chapters import, and those the modules import in turn, plus CHAPTER_DATA."""
    import nbformat  # noqa: F401  (chapter_notebook needs it; fail early)

    book = Path(root) / "book"
    todo = set()
    for page in pages:
        for cell in chapter_notebook(page, {}).cells:
            if cell.cell_type == "code":
                todo |= _imported_modules(cell.source)
    found = {}
    while todo:
        name = todo.pop()
        module = book / f"{name}.py"
        if name in found or not module.is_file():
            continue
        found[name] = module
        todo |= _imported_modules(module.read_text(encoding="utf-8"))
    files = sorted(found.values())
    files += [book / name for name in CHAPTER_DATA if (book / name).is_file()]
    return files


def write_chapters(root, dest, zip_path=None):
    """Write every chapter as dest/NN_<topic>.ipynb with its helpers beside it (dest is emptied
    first); zip the folder to ``zip_path`` (its files under chapters/). Returns the notebooks."""
    import nbformat

    root, dest = Path(root), Path(dest)
    pages = chapter_pages(root)
    substitutions = assignment_substitutions(root)
    shutil.rmtree(dest, ignore_errors=True)
    dest.mkdir(parents=True)
    notebooks = []
    for page in pages:
        nb = chapter_notebook(page, substitutions)
        out = dest / f"{page.stem}.ipynb"
        out.write_text(json.dumps(nb, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
        notebooks.append(out)
    for helper in chapter_helpers(root, pages):
        shutil.copyfile(helper, dest / helper.name)
    if zip_path is not None:
        with zipfile.ZipFile(zip_path, "w", zipfile.ZIP_DEFLATED) as z:
            for path in sorted(dest.iterdir()):
                z.write(path, f"{CHAPTERS_DIR}/{path.name}")
    return notebooks


NOTEBOOK_LINK_CLASS = "chapter-notebook"


def chapter_link(stem):
    """The paragraph under a chapter's title that links its notebook and the zipped folder."""
    return (
        f'<p class="{NOTEBOOK_LINK_CLASS}">이 장을 노트북으로 실행하기: '
        f'<a class="reference download" href="../{CHAPTERS_DIR}/{stem}.ipynb" '
        f'download="{stem}.ipynb"><code>{stem}.ipynb</code></a> · 도우미 파일과 모든 장을 함께 '
        f'내려받기: <a class="reference download" href="../{CHAPTERS_ZIP}" '
        f'download="{CHAPTERS_ZIP}"><code>{CHAPTERS_ZIP}</code></a> '
        f"(압축을 푼 <code>{CHAPTERS_DIR}</code> 폴더에서 노트북을 여세요)</p>"
    )


# the page's title: the first <h1> that opens a <section> (the theme's print-only header
# <div id="jb-print-docs-body"> has an <h1> of its own before it)
TITLE_RE = re.compile(r"<section\b[^>]*>\s*<h1\b.*?</h1>", re.S)


LINK_RE = re.compile(rf'\n?<p class="{NOTEBOOK_LINK_CLASS}">.*?</p>', re.S)


def link_chapter_notebook(html, stem):
    """``html`` with chapter_link(stem) right after the page's title, once (a link an earlier
    build left in a page that Sphinx did not rewrite is replaced)."""
    html = LINK_RE.sub("", html)
    return TITLE_RE.sub(lambda m: m.group(0) + "\n" + chapter_link(stem), html, count=1)


def _write_chapters(app, exception):
    if exception is not None or app.builder.format != "html":
        return
    outdir = Path(app.outdir)
    notebooks = write_chapters(app.srcdir, outdir / CHAPTERS_DIR, outdir / CHAPTERS_ZIP)
    for nb in notebooks:
        page = outdir / "book" / f"{nb.stem}.html"
        if page.is_file():
            html = page.read_text(encoding="utf-8")
            new = link_chapter_notebook(html, nb.stem)
            if new != html:
                page.write_text(new, encoding="utf-8")


STATIC = Path(__file__).resolve().parents[1] / "_static"


def _config_inited(app, config):
    if STATIC.is_dir() and str(STATIC) not in config.html_static_path:
        config.html_static_path.append(str(STATIC))
    if getattr(config, "nb_execution_mode", "") == "cache":
        # where myst-nb puts the cache when none is configured: next to the HTML folder
        cache = (
            getattr(config, "nb_execution_cache_path", "")
            or Path(app.outdir).parent / ".jupyter_cache"
        )
        cache = Path(app.srcdir, cache)
        missing = not cache.exists()  # nothing cached: every page the environment keeps is stale
        if refresh_cache(cache, helpers_digest(app.srcdir)):
            logger.info("coursebook: page helpers or glossary.yml changed; every page runs again")
            missing = True
        app.coursebook_reread_all = missing
    subs = dict(getattr(config, "myst_substitutions", None) or {})
    subs.update(assignment_substitutions(app.srcdir))
    config.myst_substitutions = subs


def _reread_all(app, env, added, changed, removed):
    """After refresh_cache emptied the jupyter-cache, Sphinx must read (so myst-nb executes) every
    page again, not only those whose source changed: its pickled environment keeps the old ones."""
    if getattr(app, "coursebook_reread_all", False):
        return sorted(env.found_docs - added - changed - removed)
    return []


def setup(app):
    app.connect("config-inited", _config_inited)
    app.connect("env-get-outdated", _reread_all)
    app.connect("env-get-updated", _number_per_chapter, priority=900)
    app.add_search_language(SearchKorean)
    app.add_css_file("coursebook.css")
    app.connect("build-finished", _dedupe_scripts)
    app.connect("build-finished", _translate_theme)
    app.connect("build-finished", _copy_mathjax)
    app.connect("build-finished", _copy_notebooks)
    app.connect("build-finished", _write_chapters)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
