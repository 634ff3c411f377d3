# resplite: `make run` starts a server on 127.0.0.1:6379; `make test` runs the whole suite.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
PORT   ?= 6379

.PHONY: run test install install-dev lint bench pipeline dist clean bytecode build \
	conformance conformance-fast

# Every file the compiled modules (mypyc's and the C extensions) are made from: any change
# builds them again.
SOURCES := $(shell find resplite -name '*.py' -o -name '*.c' -o -name '*.h') setup.py pyproject.toml

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip

# The server alone needs only the runtime dependencies. (Installed as pure Python: the
# modules are compiled by the `build` target below, once.)
$(VENV)/.run-deps: pyproject.toml | $(BIN)/python
	RESPLITE_PURE_PYTHON=1 $(BIN)/pip install -q -e .
	touch $@

# Tests also need the client libraries, pytest and the Spark extra.
$(VENV)/.test-deps: pyproject.toml | $(BIN)/python
	RESPLITE_PURE_PYTHON=1 $(BIN)/pip install -q -e '.[dev,spark]'
	touch $@ $(VENV)/.run-deps

# The hot modules compiled by mypyc in place, beside their sources (setup.py), whenever a
# source changed since the last build: `make run` and `make test` run the checkout as it
# is. Without a C compiler, or with RESPLITE_PURE_PYTHON=1, the package stays pure Python.
# Between builds an edited source is never shadowed by a stale compiled module: the
# package loads them only while their sources are those they were compiled from
# (resplite/build.py), so a plain `PYTHONPATH=. pytest` runs the pure build until then.
$(VENV)/.build: $(SOURCES) | $(VENV)/.run-deps
	$(BIN)/pip install -q --no-deps -e .
	@$(BIN)/python -c "from resplite import build; print('resplite_build:' + build.kind(), build.reason() or '')"
	touch $@

build: $(VENV)/.build

install: $(VENV)/.run-deps $(VENV)/.build bytecode
install-dev: $(VENV)/.test-deps $(VENV)/.build bytecode

# The checkout's bytecode, compiled ahead: where PYTHONDONTWRITEBYTECODE is set Python never
# caches what it compiles, and every server start (each test's child process, each test
# double's resplite-server) would compile the modules it imports again. Only stale files
# are compiled.
bytecode: | $(BIN)/python
	$(BIN)/python -m compileall -q resplite

run: $(VENV)/.run-deps $(VENV)/.build bytecode
	$(BIN)/resplite-server --port $(PORT)

# mypy checks resplite/ and tests/ (the files listed under [tool.mypy] in pyproject.toml).
# The whole suite runs on the build `make build` made (compiled where a C compiler is
# present; RESPLITE_EXPECT_BUILD, if set, is the one it must be), then the unit and compat
# tests once more on the pure-Python source.
# The compat suite compares with Redis 8.6.3: $$RESPLITE_REFERENCE_SERVER if set, else the
# build tools/build-redis-reference.sh makes once (about 5 minutes) and caches in ~/.cache.
REFERENCE := RESPLITE_REFERENCE_SERVER="$${RESPLITE_REFERENCE_SERVER:-$$(tools/build-redis-reference.sh)}"

test: $(VENV)/.test-deps $(VENV)/.build bytecode
	$(BIN)/ruff check resplite tests bench
	$(BIN)/mypy
	$(BIN)/lint-imports
	@# The run fails, naming them, if a process it started (a server, a worker) outlives it.
	$(REFERENCE) $(BIN)/python tests/support/procs.py $(BIN)/pytest -n 2 --dist loadgroup -q -rfEs
	$(REFERENCE) RESPLITE_PURE_PYTHON=1 RESPLITE_EXPECT_BUILD=pure \
		$(BIN)/python tests/support/procs.py \
		$(BIN)/pytest -n 2 --dist loadgroup -q -rfEs tests/unit tests/compat

lint: $(VENV)/.test-deps
	$(BIN)/ruff check resplite tests bench
	$(BIN)/mypy
	$(BIN)/lint-imports

# CPU per request, requests/s, latency and start time, side by side with redis-server (see the
# README's Benchmarks section); BENCH_ARGS="--quick" or "--only SET GET" narrows it.
bench: $(VENV)/.test-deps $(VENV)/.build bytecode
	$(BIN)/python -m bench $(BENCH_ARGS)

# Redis's own test suite (its TCL units, runtest in external mode) against resplite and the
# reference Redis side by side: per unit, the tests that pass on each (tests/conformance/,
# docs/testing.md). It needs a built Redis 8.6.3 source tree (RESPLITE_REFERENCE_DIR, by
# default ~/.cache/redis-reference/redis-8.6.3) and tclsh; a summary goes to
# build/conformance.json. CONFORMANCE_ARGS="unit/type/list --failures" narrows it.
# conformance-fast runs the subset `make test` checks, against resplite alone.
conformance: $(VENV)/.test-deps $(VENV)/.build bytecode
	$(BIN)/python tests/conformance/runner.py --json build/conformance.json $(CONFORMANCE_ARGS)

conformance-fast: $(VENV)/.test-deps $(VENV)/.build bytecode
	$(BIN)/python tests/conformance/runner.py --servers resplite --failures ci

pipeline: $(VENV)/.test-deps
	$(BIN)/python -m resplite.spark.demo

# A wheel in dist/ (pip install dist/resplite-*.whl anywhere); built offline with the venv's
# setuptools, as the tests build it.
# The wheel has the compiled modules where a C compiler is present (mypy, which brings
# mypyc, is installed for it), and is pure Python otherwise.
dist: | $(BIN)/python
	$(BIN)/pip install -q 'setuptools>=77' 'mypy==2.4.1'
	$(BIN)/pip wheel -q --no-deps --no-build-isolation -w dist .

clean:
	rm -rf $(VENV) build dist *.egg-info .pytest_cache .ruff_cache .mypy_cache
	rm -f resplite/compiled-sources.txt
	find resplite -name '*.so' -delete
