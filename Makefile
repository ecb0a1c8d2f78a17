# The README's two commands: `make run` (the bot on its embedded defaults) and `make test`.
# Both create .venv when missing and install the project with a CPU build of torch pinned:
# an unpinned torch would pull a multi-GB CUDA build.

PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.factnote-installed
TORCH := torch==2.13.0

.PHONY: setup run test test-fast lint typecheck unit bench crash-test notes-demo constraints clean

setup: $(STAMP)

$(STAMP): pyproject.toml constraints.txt
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip "setuptools>=77.0.3,<81" wheel
	$(BIN)/pip install --quiet $(TORCH)
	$(BIN)/pip install --quiet -c constraints.txt -e ".[dev]" $(TORCH)
	# The embedding model's ONNX Runtime export, built here from the packaged weights.
	$(BIN)/python -m pipeline.relevance.embedding_onnx
	# The image embedding model's ONNX Runtime export, likewise.
	$(BIN)/python -m pipeline.images.embedding_onnx
	touch $(STAMP)

run: $(STAMP)
	$(BIN)/factnote --config examples/demo.toml demo

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/lint-imports

typecheck: $(STAMP)
	$(BIN)/mypy

unit: $(STAMP)
	bash tools/ensure-chromium.sh
	bash tools/ensure-postgres.sh
	bash tools/ensure-bluesky-net.sh
	$(BIN)/pytest -q --durations=15

test: lint typecheck unit

# The inner loop: no browser, PostgreSQL, child-process, Bluesky network or benchmark tests
# (`make test` runs them), on both cores.
test-fast: $(STAMP)
	$(BIN)/pytest -q -n 2 -m "not browser and not postgres and not slow and not process and not bluesky_e2e" --ignore=tests/bench

bench: $(STAMP)
	$(BIN)/python -m bench

# The PostgreSQL crash test at the issue's full size: 200 summons (`make test` runs 60; 200 take
# about 2.5 minutes more on the 2-core CI machine).
crash-test: $(STAMP)
	bash tools/ensure-postgres.sh
	$(BIN)/pytest -q tests/bot/test_crash_postgres.py

# The Community Notes writer end to end on loopback fakes (X's API, the LLM, the web).
notes-demo: $(STAMP)
	$(BIN)/python -m bench.notes_demo

# The versions of a venv that passed `make test`, for the next fresh install (see the README).
constraints: $(STAMP)
	{ sed -n '1,3p' constraints.txt; $(BIN)/pip freeze --exclude-editable \
	  | sed 's/^torch==\([0-9.]*\)+cpu$$/torch==\1/' | grep -v '^[a-z_-]* @ file:'; } > constraints.new
	mv constraints.new constraints.txt

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
