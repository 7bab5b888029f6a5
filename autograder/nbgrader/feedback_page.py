"""Feedback pages that show their math without a network, in Korean, with messages that wrap:
``nbgrader generate_feedback``.

nbgrader's feedback template loads MathJax from a CDN, so a student who opens the page offline
sees raw TeX (``$\\sqrt{d_k}$``). ``OfflineMathHTMLExporter`` (configured by
nbgrader/config.configure as ``c.GenerateFeedback.exporter_class``) renders every ``$...$``,
``$$...$$``, ``\\(...\\)``, ``\\[...\\]`` and ``\\begin{env}...\\end{env}`` of the markdown cells
to MathML when the page is written (latex2mathml, pure Python; every browser shows MathML) and
drops the MathJax script. TeX that latex2mathml cannot read stays as text, in a ``<code>``.
nbgrader's English labels (LABELS_KO: "Test cell", "Student's answer", "Score", "Late submission
penalty", ...) are written in Korean, and outputs wrap instead of running off the page (WRAP_CSS).
"""

import html
import re

from jinja2 import pass_context
from nbconvert.exporters import HTMLExporter
from nbconvert.filters.markdown_mistune import IPythonRenderer, MarkdownWithMath

# the block nbconvert's mathjax() macro writes (templates/base/mathjax.html.j2)
MATHJAX_BLOCK = re.compile(r"<!-- Load mathjax -->.*?<!-- End of mathjax configuration -->", re.S)
# nbgrader's feedback template (formgrader/templates/feedback/index.html.j2) -> the course's words
LABELS_KO = (
    (re.compile(r"\(Score: "), "(점수: "),
    (re.compile(r"(\s)Score: "), r"\1점수: "),
    (re.compile(r">Test cell</a>"), ">테스트 셀</a>"),
    (re.compile(r">Coding free-response</a>"), ">코드 답안</a>"),
    (re.compile(r">Written response</a>"), ">서술 답안</a>"),
    (re.compile(r">Task</a>"), ">과제</a>"),
    (re.compile(r">Comment</a>"), ">의견</a>"),
    (re.compile(r">Late submission penalty "), ">지각 감점 "),
    (re.compile(r">Student's answer<"), ">학생 답안<"),
    (re.compile(r">Student's task<"), ">학생 과제<"),
    (re.compile(r">Grade cell: <code>"), ">채점 셀: <code>"),
    (re.compile(r">Task: <code>"), ">과제: <code>"),
    (re.compile(r">\(Top\)</a>"), ">(맨 위로)</a>"),
    (re.compile(r"<b>Comments:</b>"), "<b>의견:</b>"),
)
# error outputs hold the checks' messages: long lines wrap at the page's width
WRAP_CSS = (
    "<style>div.output_area pre, div.output_subarea pre "
    "{white-space: pre-wrap; overflow-wrap: anywhere;}</style>"
)
MATHJAX_SCRIPT = re.compile(
    r"<script[^>]*mathjax[^>]*>\s*</script>|<!-- Loading mathjax macro -->\n?", re.I
)


def tex_to_mathml(tex, display=False):
    """MathML of ``tex``; ``<code>`` holding the TeX when latex2mathml cannot convert it."""
    try:
        from latex2mathml.converter import convert
    except ImportError:
        raise RuntimeError(
            "피드백의 수식을 MathML로 바꾸는 latex2mathml이 설치되어 있지 않습니다: "
            "`pip install -r requirements.txt`(또는 `make venv`)로 설치하세요"
        ) from None
    try:
        return convert(tex.strip(), display="block" if display else "inline")
    except Exception:
        delim = "$$" if display else "$"
        return f'<code class="tex">{html.escape(delim + tex + delim, quote=False)}</code>'


class MathMLRenderer(IPythonRenderer):
    """nbconvert's markdown renderer with math written as MathML instead of TeX for MathJax."""

    def block_math(self, body):
        return tex_to_mathml(body, display=True)

    def inline_math(self, body):
        return tex_to_mathml(body)

    def latex_environment(self, name, body):
        return tex_to_mathml(f"\\begin{{{name}}}{body}\\end{{{name}}}", display=True)


class OfflineMathHTMLExporter(HTMLExporter):
    """HTMLExporter of the feedback pages: math as MathML, no MathJax script."""

    @pass_context
    def markdown2html(self, context, source):
        cell = context.get("cell", {})
        path = context.get("resources", {}).get("metadata", {}).get("path", "")
        renderer = MathMLRenderer(
            escape=False,
            attachments=cell.get("attachments", {}),
            embed_images=self.embed_images,
            path=path,
            anchor_link_text=self.anchor_link_text,
            exclude_anchor_links=self.exclude_anchor_links,
            **self.lexer_options,
        )
        return MarkdownWithMath(renderer=renderer).render(source)

    def from_notebook_node(self, nb, resources=None, **kw):
        output, resources = super().from_notebook_node(nb, resources, **kw)
        output = MATHJAX_SCRIPT.sub("", MATHJAX_BLOCK.sub("", output))
        return korean_labels(output).replace("</head>", WRAP_CSS + "\n</head>", 1), resources


def korean_labels(page):
    """``page`` with nbgrader's English labels in Korean (LABELS_KO)."""
    for pattern, korean in LABELS_KO:
        page = pattern.sub(korean, page)
    return page
