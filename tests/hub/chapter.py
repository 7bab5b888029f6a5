"""The JupyterHub chapter (docs/jupyterhub.md) as the hub's tests read it: its code blocks, so
that the tests run the commands and the configuration exactly as the chapter shows them."""

import re
import shlex
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
CHAPTER = REPO / "docs" / "jupyterhub.md"


def text():
    return CHAPTER.read_text(encoding="utf-8")


def blocks(lang):
    """The chapter's fenced code blocks of language ``lang``, in order."""
    return re.findall(rf"^```{lang}\n(.*?)^```", text(), re.S | re.M)


def block(lang, contains):
    """The one block of ``lang`` that contains ``contains``."""
    found = [b for b in blocks(lang) if contains in b]
    assert len(found) == 1, f"docs/jupyterhub.md: {len(found)} {lang} blocks with {contains!r}"
    return found[0]


def commands(contains):
    """The commands (word lists) of the one bash block that contains ``contains``."""
    return [shlex.split(line) for line in block("bash", contains).splitlines() if line.strip()]


def options():
    """Every ``--option`` of hub/deploy.py the chapter names (in code spans or blocks)."""
    return set(re.findall(r"(--[a-z][a-z-]+)", text()))
