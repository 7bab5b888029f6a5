# Two commands do all the set-up: `make book` and `make test`.
# Both create .venv from requirements.txt when it is missing or out of date, and install this
# repository into it (`pip install -e .`: solutions/, autograder/ and the pytest plugin).

PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.requirements.stamp

.PHONY: book test test-hub lint sysdeps venv clean bench notebooks release

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

# Student release notebooks exercises/release/<a>/<a>.ipynb, made by `nbgrader generate_assignment`
# in a temporary copy of the course root (tools/release.py); only stale ones are regenerated.
# The book links them (book/_ext/coursebook.py copies them into _build/html/notebooks/).
notebooks: $(STAMP)
	$(PY) tools/release.py notebooks

# Executes every page (jupyter-cache in _build/.jupyter_cache: unchanged pages are not re-run);
# any warning, cell error or stderr output fails the build.
book: $(STAMP) sysdeps notebooks
	$(VENV)/bin/jupyter-book build . --warningiserror --keep-going
	@echo "Book: $(CURDIR)/_build/html/index.html"

# Everything a course publishes to students, in _build/release/: the book built into an emptied
# _build/html (no file of an earlier build is carried along; the jupyter-cache keeps unchanged pages
# from running again) with the release notebooks in notebooks/ (generated afresh by nbgrader) and
# every chapter as a notebook in chapters/ (+ chapters.zip) beside the answer-free helpers it
# imports, scanned for answers and hidden checks (tools/release.py; tests/book/test_release.py runs
# this target, tests/student/test_chapter_notebooks.py runs the chapter notebooks in a student venv).
release: $(STAMP) sysdeps notebooks
	rm -rf _build/html
	$(VENV)/bin/jupyter-book build . --warningiserror --keep-going
	$(PY) tools/release.py bundle

# The whole test suite on two workers (tests/grader/test_reference.py runs the hidden checks
# against the reference solutions, tests/book/test_book.py builds the book, which links the
# release notebooks): tests/conftest.py's scheduler keeps each module, the whole of tests/book/
# (it shares the built book) and the whole of tests/student/ (one student venv) on one worker
# each and starts the longest groups first (--no-loadscope-reorder).
test: $(STAMP) sysdeps notebooks
	$(PY) -m pytest -n 2 --dist loadscope --no-loadscope-reorder --durations=25

# The course on JupyterHub (hub/, autograder/service/, docs/jupyterhub.md): all of tests/hub. As
# root it makes system accounts, a students' venv (linked from .venv: hub/studentvenv.py) and a hub.
# `make test` runs only tests/hub/test_browser.py (the guide's chapter as written, a student and the
# instructor in headless Chromium); the grading service's heavier tests (feedback byte for byte the
# final grading's, the attempt limit, isolation, refusal as root, a kill mid-burst, a hostile
# notebook: tests/hub/test_service.py) run only here (pyproject.toml's addopts leave them out).
test-hub: $(STAMP) sysdeps notebooks
	$(PY) -m pytest tests/hub -o addopts="-ra --strict-markers" -p no:cacheprovider

lint: $(STAMP)
	$(VENV)/bin/ruff check . && $(VENV)/bin/ruff format --check .

bench: $(STAMP) sysdeps
	$(PY) -m bench.grading

clean:
	rm -rf _build
