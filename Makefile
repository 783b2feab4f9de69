# Two commands on a fresh machine (README): `make demo` runs the main job, `make test` the tests.
# Both create .venv and install everything they need on first use.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: demo test lint bench-speed slow-test notebooks golden clean chromium

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	# torch first, pinned: 2.13.0 is the CPU build on disk; an unpinned torch pulls CUDA (GBs)
	$(PY) -m pip install --quiet torch==2.13.0
	$(PY) -m pip install --quiet -e ".[train,dev,fast,web]"
	touch $(STAMP)

demo: $(STAMP)
	$(VENV)/bin/mtrain demo

test: $(STAMP) lint chromium
	$(PY) -m pytest -n 2 -q

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

slow-test: $(STAMP)
	$(PY) -m pytest -q -m slow

bench-speed: $(STAMP)
	$(VENV)/bin/mtrain bench-speed

# regenerate the golden replays of tests/golden/ after a deliberate rules change (review the diff)
golden: $(STAMP)
	PYTHONPATH=. $(PY) -m tests.golden_games

notebooks: $(STAMP)
	$(PY) notebooks/execute.py

clean:
	rm -rf $(VENV)
