# Two commands do all the set-up (see README "Quick start"):
#   make run    create .venv if missing, install the project editable with the app extra, start the app
#   make test   the same plus the dev and dask extras, then ruff (make lint) and the whole test suite
# The dependency ranges live in pyproject.toml; requirements*.txt only point at its extras.
PYTHON  ?= python3
VENV    ?= .venv
PY      := $(VENV)/bin/python
PORT    ?= 8501
ADDRESS ?= localhost
# Local copies of the papers' datasets (tests and benchmarks skip cleanly without them)
NSPCA_DATA_DIR ?= $(abspath ../shared/datasets)
export NSPCA_DATA_DIR
PYTEST_ARGS ?=
SHELL := /bin/bash

.PHONY: run test lint bench reproduce browser clean

$(VENV)/.installed: pyproject.toml requirements.txt
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -r requirements.txt
	touch $@

$(VENV)/.dev-installed: $(VENV)/.installed requirements-dev.txt
	$(PY) -m pip install --quiet -r requirements-dev.txt
	touch $@

# Ruff with the rules in pyproject.toml (part of make test, before pytest).
lint: $(VENV)/.dev-installed
	$(PY) -m ruff check .

run: $(VENV)/.installed
	@echo "Starting the app at http://$(ADDRESS):$(PORT)  (Ctrl-C to stop)"
	MALLOC_MMAP_THRESHOLD_=1048576 MALLOC_ARENA_MAX=2 $(PY) -m streamlit run app.py --server.port $(PORT) --server.address $(ADDRESS) \
		--server.headless true --browser.gatherUsageStats false

# Headless Chromium for the browser test: Debian's package if missing (best effort;
# the browser test skips with a clear message when it cannot be installed).
browser:
	@command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1 || \
		( (apt-get install -y -qq chromium >/dev/null 2>&1 || \
		   (apt-get update -qq >/dev/null 2>&1 && apt-get install -y -qq chromium >/dev/null 2>&1)) \
		  && echo "installed Debian chromium" ) || echo "chromium not installable here; the browser test will skip"

# One BLAS thread per test worker: two workers on two cores, no oversubscription.
test: $(VENV)/.dev-installed browser lint
	OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1 $(PY) -m pytest -n 2 $(PYTEST_ARGS)

# Benchmarks print ratios measured in one run; the latest output is kept in
# benchmarks/results/ (the reproduction report includes it).
bench: $(VENV)/.dev-installed
	mkdir -p benchmarks/results
	for f in benchmarks/bench_*.py; do echo "== $$f"; \
		$(PY) $$f 2>&1 | tee benchmarks/results/$$(basename $$f .py).txt; \
		test $${PIPESTATUS[0]} -eq 0 || exit 1; done

# The seed papers' figures and tables: python -m tools.reproduce writes CSV/PNG and REPRODUCTION.md
# into reproduction/ (REPRODUCTION_ARGS="--quick" for a reduced grid).
REPRODUCTION_ARGS ?=
reproduce: $(VENV)/.dev-installed
	$(PY) -m tools.reproduce --out reproduction --report REPRODUCTION.md $(REPRODUCTION_ARGS)

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache test-artifacts build *.egg-info
