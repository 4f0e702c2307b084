# One entry point for developer tasks. `make example` and `make test` are the README's quick start.
VENV ?= .venv
PY := $(VENV)/bin/python
PYTHON ?= python3

.PHONY: setup system example test lint typecheck unit bench schema clean

$(VENV)/.installed: pyproject.toml setup.py
	$(PYTHON) -m venv $(VENV)
	# torch first, pinned: pip takes the CPU build on this disk instead of a CUDA build of several GB
	$(PY) -m pip install -q torch==2.13.0
	$(PY) -m pip install -q -e '.[dev]'
	touch $@

setup: $(VENV)/.installed

system:
	scripts/install-system-packages

example: setup
	$(VENV)/bin/triage examples/founding-incident.log

lint: setup
	$(PY) -m ruff check analyzer tests examples bench scripts
	$(VENV)/bin/lint-imports

typecheck: setup
	$(PY) -m mypy
	$(PY) -m mypy --strict scripts/mine_messages.py

# one worker per core (pytest-xdist); each worker that runs a test on the real search index builds its own
unit: setup
	$(PY) -m pytest -q -n auto

test: system setup lint typecheck unit

bench: setup system
	$(PY) bench/run.py --sizes 100M,1G

schema: setup
	$(VENV)/bin/triage patterns schema --out patterns/schema.json
	$(VENV)/bin/triage patterns schema --catalogue --out patterns/catalogue.schema.json

clean:
	rm -rf $(VENV) build dist *.egg-info
