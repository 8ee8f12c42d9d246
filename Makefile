# The compendium's entry points. `make help` lists them.
SHELL := /bin/bash
.DEFAULT_GOAL := help

SCALE ?= cpu
SEED ?= 0
SCALES := smoke cpu paper
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed-$(shell cat requirements.lock pyproject.toml | sha256sum | cut -c1-12)
EXECUTED := book/executed

.PHONY: help env data notebooks book test lint bench clean check-scale

help:  ## list the targets
	@grep -E '^[a-z-]+:.*##' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  make %-10s %s\n", $$1, $$2}'
	@echo "  SCALE=smoke|cpu|paper (default cpu) for notebooks and book; SEED=<int> root seed of"
	@echo "  every random stream (default 0); FORCE=1 re-runs all notebooks"

check-scale:
	@$(if $(filter $(SCALE),$(SCALES)),true,echo "error: SCALE=$(SCALE) is not allowed; use one of: $(SCALES)" >&2; exit 2)

$(STAMP): requirements.lock pyproject.toml
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -r requirements.lock
	$(PY) -m pip install --quiet --no-deps --no-build-isolation -e .
	@rm -f $(VENV)/.installed-*
	@touch $@

env: $(STAMP)  ## create the virtual environment from the pinned lock file (if missing/outdated)

data: env  ## provision and verify the datasets (Fashion-MNIST via apt when run as root)
	@if [ ! -d /usr/share/datasets/fashion-mnist ] && [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	  (apt-get install -y -qq dataset-fashion-mnist >/dev/null 2>&1 || \
	   (apt-get update -qq >/dev/null 2>&1 && apt-get install -y -qq dataset-fashion-mnist >/dev/null 2>&1)) || \
	  echo "warning: could not install dataset-fashion-mnist; image chapters will say so"; fi
	$(PY) -m fusionlib.data provision

notebooks: check-scale env data  ## execute the notebooks that changed, at SCALE
	$(PY) -m fusionlib.compendium.runner --scale $(SCALE) --seed $(SEED) --out $(EXECUTED) $(if $(FORCE),--force)

book: notebooks  ## execute changed notebooks at SCALE, then build the HTML strictly
	$(VENV)/bin/jupyter-book build . --builder html --all --warningiserror --nitpick --keep-going
	@echo "book: $(CURDIR)/_build/html/index.html (scale $(SCALE))"

lint: env  ## ruff (pyflakes, pycodestyle, import order, bugbear, pyupgrade)
	$(VENV)/bin/ruff check fusionlib tests benchmarks

test: env data lint  ## lint + unit tests + every notebook at smoke scale
	@$(PY) -m pytest -q; rc=$$?; \
	if [ $$rc -eq 5 ]; then echo "error: pytest collected no tests" >&2; exit 1; fi; exit $$rc

bench: env data  ## speed benchmarks (ratios measured side by side; results in benchmarks/results/)
	@for b in benchmarks/bench_*.py; do echo "== $$b"; $(PY) $$b || exit 1; done

clean:  ## remove build output and executed notebooks (keeps .venv and data)
	rm -rf _build $(EXECUTED) results
