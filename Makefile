# Two commands do all the set-up: `make book` and `make test`.
# Both create .venv from requirements.txt when it is missing or out of date.

PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.requirements.stamp
export PYTHONPATH := $(CURDIR)

.PHONY: book test lint sysdeps venv clean bench

venv: $(STAMP)

$(STAMP): requirements.txt Makefile
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --disable-pip-version-check -qq -r requirements.txt
	@# the venv's Python finds solutions/ and autograder/ from any folder (e.g. exercises/)
	$(PY) -c "import site, sys; open(site.getsitepackages()[0] + '/course-root.pth', 'w').write(sys.argv[1] + '\n')" "$(CURDIR)"
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

test: $(STAMP) sysdeps
	$(PY) -m pytest

lint: $(STAMP)
	$(VENV)/bin/ruff check . && $(VENV)/bin/ruff format --check .

bench: $(STAMP) sysdeps
	$(PY) -m bench.grading

clean:
	rm -rf _build
