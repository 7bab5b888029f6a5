"""Sphinx extension for the course book.

1. Korean search: index every word and, in addition, the word with a trailing Korean particle
   removed (어텐션은 / 어텐션을 / 어텐션의 -> 어텐션), so the search page finds "어텐션".
2. Offline MathJax: copy the Debian MathJax 2 package (libjs-mathjax, installed by
   tools/sysdeps.sh) into _static/mathjax so no page loads math from a CDN.
"""

import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from sphinx.search import SearchLanguage

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


def release_notebooks(root):
    """Generate the student release notebooks exercises/release/<a>/<a>.ipynb with nbgrader.

    Runs on a temporary copy of the course (its own gradebook), so the course's gradebook is never
    touched; an assignment is regenerated only when its source notebook is newer than the release.
    Returns the list of generated assignment names.
    """
    course = Path(root) / "exercises"
    done = []
    for src in sorted((course / "source").glob("*/*.ipynb")):
        name = src.parent.name
        dst = course / "release" / name / src.name
        if dst.exists() and dst.stat().st_mtime >= src.stat().st_mtime:
            continue
        bindir = Path(sys.executable).parent
        env = dict(os.environ, PATH=f"{bindir}{os.pathsep}{os.environ.get('PATH', '')}")
        with tempfile.TemporaryDirectory() as tmp:
            shutil.copytree(course / "source" / name, Path(tmp) / "source" / name)
            shutil.copy2(course / "nbgrader_config.py", tmp)
            cmd = [
                str(bindir / "nbgrader"),
                "generate_assignment",
                name,
                "--force",
                f"--db=sqlite:///{tmp}/gradebook.db",
            ]
            proc = subprocess.run(cmd, cwd=tmp, env=env, capture_output=True, text=True)
            out = Path(tmp) / "release" / name / src.name
            if proc.returncode != 0 or not out.exists():
                raise RuntimeError(
                    f"nbgrader generate_assignment {name} failed:\n{proc.stderr[-2000:]}"
                )
            dst.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(out, dst)
        done.append(name)
    return done


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


def assignment_substitutions(root):
    """MyST substitutions {{ assignment_<topic> }}: a download link to the student notebook when
    the assignment exists, otherwise a sentence saying it is not released yet."""
    subs = {}
    for topic in TOPICS:
        nb = Path(root) / "exercises" / "release" / topic / f"{topic}.ipynb"
        if nb.exists():
            subs[f"assignment_{topic}"] = (
                f"학생용 노트북 내려받기: {{download}}`{topic}.ipynb "
                f"<../exercises/release/{topic}/{topic}.ipynb>`"
            )
        else:
            subs[f"assignment_{topic}"] = (
                f"이 장의 채점 과제 노트북(`exercises/source/{topic}/`)은 아직 공개되지 않았습니다."
            )
    return subs


def _config_inited(app, config):
    root = Path(app.srcdir)
    release_notebooks(root)
    subs = dict(getattr(config, "myst_substitutions", None) or {})
    subs.update(assignment_substitutions(root))
    config.myst_substitutions = subs


def setup(app):
    app.connect("config-inited", _config_inited)
    app.add_search_language(SearchKorean)
    app.connect("build-finished", _dedupe_scripts)
    app.connect("build-finished", _copy_mathjax)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
