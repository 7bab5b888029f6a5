# Two commands do all the set-up: `make book` and `make test`.
# Both create .venv from requirements.txt when it is missing or out of date, and install this
# repository into it (`pip install -e .`: solutions/, autograder/ and the pytest plugin).

PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.requirements.stamp

.PHONY: book test lint sysdeps venv clean bench

venv: $(STAMP)

$(STAMP): requirements.txt pyproject.toml Makefile
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --disable-pip-version-check -qq -r requirements.txt
	$(PY) -m pip install --disable-pip-version-check -qq --no-deps -e .
	@touch $(STAMP)

# System packages: bubblewrap (grading sandbox) and chromium (browser test of the book).
# Installed with apt-get when running as root on Debian; otherwise stop with a message.
sysdeps:
	@bash tools/sysdeps.sh

# Executes every page (jupyter-cache in _build/.jupyter_cache: unchanged pages are not re-run);
# any warning, cell error or stderr output fails the build.
book: $(STAMP) sysdeps
	$(VENV)/bin/jupyter-book build . --warningiserror --keep-going
	@echo "Book: $(CURDIR)/_build/html/index.html"

# The hidden checks against the reference solutions (in-process, through the wire encoding),
# then the whole test suite.
test: $(STAMP) sysdeps
	$(PY) -m pytest autograder/checks --reference -q -p no:cacheprovider
	$(PY) -m pytest

lint: $(STAMP)
	$(VENV)/bin/ruff check . && $(VENV)/bin/ruff format --check .

bench: $(STAMP) sysdeps
	$(PY) -m bench.grading

clean:
	rm -rf _build
