# resplite: `make run` starts a server on 127.0.0.1:6379; `make test` runs the whole suite.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
PORT   ?= 6379

.PHONY: run test install install-dev lint bench pipeline dist clean bytecode

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip

# The C extensions (setup.py) are built in place by the editable install: a change to their
# sources installs again.
NATIVE := setup.py $(wildcard resplite/*/*.c resplite/*/*.h)

# The server alone needs only the runtime dependencies.
$(VENV)/.run-deps: pyproject.toml $(NATIVE) | $(BIN)/python
	$(BIN)/pip install -q -e .
	touch $@

# Tests also need the client libraries, pytest and the Spark extra.
$(VENV)/.test-deps: pyproject.toml $(NATIVE) | $(BIN)/python
	$(BIN)/pip install -q -e '.[dev,spark]'
	touch $@ $(VENV)/.run-deps

install: $(VENV)/.run-deps bytecode
install-dev: $(VENV)/.test-deps bytecode

# The checkout's bytecode, compiled ahead: where PYTHONDONTWRITEBYTECODE is set Python never
# caches what it compiles, and every server start (each test's child process, each test
# double's resplite-server) would compile the modules it imports again. Only stale files
# are compiled.
bytecode: | $(BIN)/python
	$(BIN)/python -m compileall -q resplite

run: $(VENV)/.run-deps bytecode
	$(BIN)/resplite-server --port $(PORT)

# mypy checks resplite/ and tests/ (the files listed under [tool.mypy] in pyproject.toml).
test: $(VENV)/.test-deps bytecode
	$(BIN)/ruff check resplite tests bench
	$(BIN)/mypy
	$(BIN)/lint-imports
	@# The run fails, naming them, if a process it started (a server, a worker) outlives it.
	$(BIN)/python tests/support/procs.py $(BIN)/pytest -n 2 --dist loadgroup -q -rs

lint: $(VENV)/.test-deps
	$(BIN)/ruff check resplite tests bench
	$(BIN)/mypy
	$(BIN)/lint-imports

# CPU per request, requests/s, latency and start time, side by side with redis-server (see the
# README's Benchmarks section); BENCH_ARGS="--quick" or "--only SET GET" narrows it.
bench: $(VENV)/.test-deps bytecode
	$(BIN)/python -m bench $(BENCH_ARGS)

pipeline: $(VENV)/.test-deps
	$(BIN)/python -m resplite.spark.demo

# A wheel in dist/ (pip install dist/resplite-*.whl anywhere); built offline with the venv's
# setuptools, as the tests build it.
dist: | $(BIN)/python
	$(BIN)/pip install -q 'setuptools>=77'
	$(BIN)/pip wheel -q --no-deps --no-build-isolation -w dist .

clean:
	rm -rf $(VENV) build dist *.egg-info .pytest_cache .ruff_cache .mypy_cache
