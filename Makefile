# gpuplan: `make app` serves the app on the bundled data; `make test` runs every check.
SHELL := /bin/bash
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
HOST ?= 127.0.0.1
PORT ?= 8501
APT_PACKAGES := chromium openssh-server

.PHONY: app test lint typecheck pytest system-deps screenshots data fitted clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

# What the app needs: the planner plus the `app` extra (streamlit, plotly); no torch, no cloud SDKs.
$(VENV)/.installed-app: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e '.[app]'
	touch $@

# Everything the tests need; torch pinned to its CPU build (constraints/cpu.txt).
$(VENV)/.installed-dev: pyproject.toml constraints/cpu.txt | $(BIN)/python
	$(BIN)/python -m pip install --quiet -c constraints/cpu.txt -e '.[dev]'
	touch $@ $(VENV)/.installed-app

app: $(VENV)/.installed-app
	$(BIN)/gpuplan app --host $(HOST) --port $(PORT)

# Debian packages some tests need, installed with apt-get when missing and make runs as root
# (otherwise listed): chromium (tests/browser drives it through playwright) and
# openssh-server (the SSH runner tests start their own sshd on 127.0.0.1). Nothing else.
system-deps:
	@missing=""; \
	command -v chromium >/dev/null 2>&1 || missing="$$missing chromium"; \
	[ -x /usr/sbin/sshd ] || missing="$$missing openssh-server"; \
	if [ -n "$$missing" ]; then \
	  if [ "$$(id -u)" = 0 ]; then \
	    apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q $$missing; \
	  else \
	    echo "missing Debian packages:$$missing (run make test as root, or install them)"; \
	  fi; \
	fi

lint: $(VENV)/.installed-dev
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

typecheck: $(VENV)/.installed-dev
	$(BIN)/mypy edge planner pricing benchmarks app.py

# Two workers (CI has 2 cores), each test file kept on one worker so its module fixtures
# (sshd, moto, a streamlit server) start once; PYTEST_WORKERS=0 runs in this process.
PYTEST_WORKERS ?= 2
pytest: $(VENV)/.installed-dev system-deps
	$(BIN)/python -m pytest -n $(PYTEST_WORKERS) --dist loadfile

test: lint typecheck pytest

# Retake the README's Plan page screenshot (docs/img/plan-page.png) from the browser test.
screenshots: $(VENV)/.installed-dev system-deps
	GPUPLAN_UPDATE_SCREENSHOTS=1 $(BIN)/python -m pytest tests/browser -k plan_page_answers_first

# Rebuild the bundled data (specs, price snapshots, published results) from reference/.
data: $(VENV)/.installed-app
	$(BIN)/python tools/build_bundled_data.py
	$(BIN)/python tools/build_fitted_seed.py

# Refit the models shipped in planner/data/fitted (after the fitting code or bundled data
# change; tests/planner/throughput/test_fitted_seed.py says when).
fitted: $(VENV)/.installed-app
	$(BIN)/python tools/build_fitted_seed.py

clean:
	rm -rf $(VENV) test-artifacts .pytest_cache .mypy_cache .ruff_cache
