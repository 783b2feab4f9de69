# Two commands on a fresh machine (README): `make demo` runs the main job, `make test` the tests.
# Both create .venv and install everything they need on first use.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
# the extras `make demo` and `make test` need (pyproject.toml; `pip install -e .` is the env alone)
EXTRAS ?= train,fast,openspiel,rllib,web,docs,dev
# where torch comes from: empty = the configured indexes (this machine: a local CPU wheel);
# elsewhere `make test TORCH_INDEX=https://download.pytorch.org/whl/cpu` avoids the CUDA build
TORCH_INDEX ?=

.PHONY: demo test lint docs bench-speed slow-test notebooks golden clean chromium

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	# torch first, pinned: 2.13.0 is the CPU build on disk; an unpinned torch pulls CUDA (GBs)
	$(PY) -m pip install --quiet torch==2.13.0 $(if $(TORCH_INDEX),--index-url $(TORCH_INDEX))
	$(PY) -m pip install --quiet -e ".[$(EXTRAS)]"
	touch $(STAMP)

demo: $(STAMP)
	$(VENV)/bin/mtrain demo

# bytecode is written even where the environment sets PYTHONDONTWRITEBYTECODE: without it every
# xdist worker and every fresh interpreter a test starts compiles the package and pytest
# re-rewrites the asserts of every test module on each run (__pycache__/ is ignored by git)
test: $(STAMP) lint docs chromium
	PYTHONDONTWRITEBYTECODE= $(PY) -m pytest -n 2 -q

# the web table's browser tests drive the OS's Chromium through Playwright (no browser download)
CHROMIUM ?= /usr/bin/chromium
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
chromium:
	@test -x $(CHROMIUM) || { $(SUDO) apt-get update -q && $(SUDO) apt-get install -y -q chromium; }

lint: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/mypy
	$(VENV)/bin/lint-imports

# the API reference (mkdocs.yml, docs/), warnings as errors; the site goes to site/ (git-ignored)
docs: $(STAMP)
	NO_MKDOCS_2_WARNING=1 $(VENV)/bin/mkdocs build --strict

slow-test: $(STAMP)
	$(PY) -m pytest -q -m slow

bench-speed: $(STAMP)
	$(VENV)/bin/mtrain dev bench-speed

# regenerate the golden replays of tests/golden/ after a deliberate rules change (review the diff)
golden: $(STAMP)
	PYTHONPATH=. $(PY) -m tests.golden_games

notebooks: $(STAMP)
	$(PY) notebooks/execute.py

clean:
	rm -rf $(VENV) site
