# Quick start: `make run` serves the API and the worker on 127.0.0.1:8000; `make test` runs the suite.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
RUN_STAMP := $(VENV)/.installed-runtime
# pytest-xdist processes of `make test` (.ci/run runs it with 4 beside the PostgreSQL pass)
PYTEST_N ?= 8

.PHONY: run test test-pg lint format bench clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip

$(STAMP): $(BIN)/python pyproject.toml
	$(BIN)/pip install --quiet -e '.[dev]'
	touch $(STAMP) $(RUN_STAMP)

# the service alone: no test tools, no PostgreSQL or Redis driver (extras `postgres`, `redis`)
$(RUN_STAMP): $(BIN)/python pyproject.toml
	$(BIN)/pip install --quiet -e .
	touch $(RUN_STAMP)

run: $(RUN_STAMP)
	$(BIN)/commerce-api init-db
	$(BIN)/commerce-api demo
	$(BIN)/commerce-api serve --bind 127.0.0.1:8000 --workers 2 --with-worker

test: $(STAMP)
	$(BIN)/pytest -n $(PYTEST_N)

test-pg: $(STAMP)
	COMMERCE_DATABASE_URL=postgresql://postgres@127.0.0.1:5432/test $(BIN)/pytest -n 4

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

format: $(STAMP)
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .

bench: $(STAMP)
	$(BIN)/python bench/run.py

clean:
	rm -rf $(VENV) instance *.egg-info .pytest_cache .ruff_cache
