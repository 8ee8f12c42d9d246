# The compendium's entry points. `make help` lists them.
SHELL := /bin/bash
.DEFAULT_GOAL := help

SCALE ?= cpu
SEED ?= 0
SCALES := smoke cpu paper
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
# torch build: cpu (2.13.0+cpu: from a local wheel folder, else PyTorch's CPU index; see
# tools/torch_source.py) or cuda (PyPI's build, for GPU runners)
TORCH ?= cpu
# where the CPU build comes from: auto (a local wheel folder, else PyTorch's CPU index), local,
# index; TORCH_WHEELS=<folder> names a folder that holds the pinned wheel
TORCH_SOURCE ?= auto
TORCHES := cpu cuda
# checked when the Makefile is read: the lock file names below are built from TORCH
ifneq ($(words $(TORCH))$(filter $(TORCH),$(TORCHES)),1$(TORCH))
$(error TORCH=$(TORCH) is not allowed; use one of: $(TORCHES))
endif
LOCKS := requirements-pip.lock requirements.lock requirements-test.lock requirements-torch-$(TORCH).lock
STAMP := $(VENV)/.installed-$(TORCH)-$(shell cat $(LOCKS) pyproject.toml | sha256sum | cut -c1-12)
EXECUTED := book/executed
# $(call shq,VALUE): VALUE as one single-quoted shell word (a ' inside becomes '\''), for the
# values given on the command line (ID=, BUNDLE=, SEEDS=): a ' in them broke the recipes' quoting
shq = '$(subst ','\'',$(1))'
# Snakemake in its own venv inside .venv (already git-ignored and excluded from the book), so
# requirements.lock's pins stay as they are; every pin hashed (requirements-workflow.lock)
WORKFLOW_VENV := $(VENV)/workflow
WORKFLOW_STAMP := $(WORKFLOW_VENV)/.installed-$(shell cat requirements-workflow.lock requirements-pip.lock | sha256sum | cut -c1-12)
JOBS ?= $(shell nproc)
# pytest-xdist workers of `make test` (0: one process, no workers)
TEST_WORKERS ?= $(JOBS)
# workflow/guard.py: one run per checkout at a time (a second is refused), and the lock that a
# killed Snakemake leaves behind is cleared, so a restarted `make book` just resumes
SNAKEMAKE = $(WORKFLOW_VENV)/bin/python workflow/guard.py $(WORKFLOW_VENV)/bin/snakemake \
	-s workflow/Snakefile --profile workflow/profiles/local -j $(JOBS)
SMK_CONFIG = --config scale=$(SCALE) seed=$(SEED) python=$(CURDIR)/$(PY) $(if $(FORCE),force=1)
SMK_FORCE = $(if $(FORCE),--forcerun notebook scorecard)
# MathJax 3, served from the book itself (no CDN): the npm package, pinned and hash-checked,
# unpacked into an ignored folder that _config.yml lists in html_static_path
MATHJAX_VERSION := 3.2.2
MATHJAX_SHA256 := 1b9c0a1c44df864e915690558e72adb9cc5203360daefd385084ced3b6c64c09
MATHJAX_DIR := .cache/mathjax
MATHJAX_STAMP := $(MATHJAX_DIR)/mathjax-$(MATHJAX_VERSION).stamp

.PHONY: help env data notebooks mathjax book check-html test lint bench clean check-scale workflow-env cells claim stability \
	export-results import-results verify-results test-workflow install-bundles check-paper check-budget check-test-workers \
	paper-plan paper-cells paper-gpu

help:  ## list the targets
	@grep -E '^[a-z-]+:.*##' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  make %-10s %s\n", $$1, $$2}'
	@echo "  SCALE=smoke|cpu|paper (default cpu) for notebooks and book; SEED=<int> root seed of"
	@echo "  every random stream (default 0); FORCE=1 re-runs all notebooks"

# SCALE, SEED and JOBS of the workflow targets (JOBS=0 would start every cell at once)
check-scale:
	@$(if $(filter $(SCALE),$(SCALES)),true,echo "error: SCALE=$(SCALE) is not allowed; use one of: $(SCALES)" >&2; exit 2)
	@printf '%s' '$(SEED)' | grep -Eqx '[0-9]+' || { echo "error: SEED=$(SEED) is not allowed; give an integer >= 0 (the root seed of every random stream), e.g. SEED=0" >&2; exit 2; }
	@printf '%s' '$(JOBS)' | grep -Eqx '[1-9][0-9]*' || { echo "error: JOBS=$(JOBS) is not allowed; give a number of parallel jobs >= 1, e.g. JOBS=$$(nproc)" >&2; exit 2; }

$(STAMP): $(LOCKS) pyproject.toml
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --require-hashes -r requirements-pip.lock
	@torch=$$($(PY) tools/torch_source.py --torch $(TORCH) --source $(call shq,$(TORCH_SOURCE)) \
	  $(if $(TORCH_WHEELS),--wheels $(call shq,$(TORCH_WHEELS)))) || exit 2; \
	echo "$(PY) -m pip install --quiet --require-hashes --no-deps $$torch"; \
	eval "$(PY) -m pip install --quiet --require-hashes --no-deps $$torch"
	$(PY) -m pip install --quiet --require-hashes -r requirements.lock -r requirements-test.lock -r requirements-torch-$(TORCH).lock
	$(PY) -m pip install --quiet --no-deps --no-build-isolation -e .
	@rm -f $(VENV)/.installed-*
	@touch $@

env: $(STAMP)  ## create .venv from the hash-pinned locks (TORCH=cpu|cuda, TORCH_WHEELS=<folder>; if missing/outdated)

data: env  ## provision and verify the datasets (Fashion-MNIST via apt when run as root)
	@if [ ! -d /usr/share/datasets/fashion-mnist ] && [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	  (apt-get install -y -qq dataset-fashion-mnist >/dev/null 2>&1 || \
	   (apt-get update -qq >/dev/null 2>&1 && apt-get install -y -qq dataset-fashion-mnist >/dev/null 2>&1)) || \
	  echo "warning: could not install dataset-fashion-mnist; image chapters will say so"; fi
	$(PY) -m fusionlib.data provision

$(WORKFLOW_STAMP): requirements-workflow.lock requirements-pip.lock
	@test -x $(WORKFLOW_VENV)/bin/python || $(PYTHON) -m venv $(WORKFLOW_VENV)
	$(WORKFLOW_VENV)/bin/python -m pip install --quiet --require-hashes -r requirements-pip.lock
	$(WORKFLOW_VENV)/bin/python -m pip install --quiet --require-hashes -r requirements-workflow.lock
	@rm -f $(WORKFLOW_VENV)/.installed-*
	@touch $@

workflow-env: $(WORKFLOW_STAMP)  ## Snakemake (requirements-workflow.lock) in .venv/workflow

cells: check-scale env data workflow-env install-bundles  ## compute the missing or stale cells at SCALE, JOBS at a time
	$(SNAKEMAKE) cells $(SMK_CONFIG)

notebooks: check-scale env data workflow-env install-bundles  ## the cells they need, then the notebooks that changed
	$(SNAKEMAKE) notebooks $(SMK_FORCE) $(SMK_CONFIG)

$(MATHJAX_STAMP):
	@command -v npm >/dev/null || { echo "error: npm is needed once to fetch MathJax $(MATHJAX_VERSION) (apt-get install npm)" >&2; exit 1; }
	rm -rf $(MATHJAX_DIR) && mkdir -p $(MATHJAX_DIR)/download
	cd $(MATHJAX_DIR)/download && npm pack --silent mathjax@$(MATHJAX_VERSION) >/dev/null
	echo "$(MATHJAX_SHA256)  $(MATHJAX_DIR)/download/mathjax-$(MATHJAX_VERSION).tgz" | sha256sum --check --quiet
	tar -xzf $(MATHJAX_DIR)/download/mathjax-$(MATHJAX_VERSION).tgz -C $(MATHJAX_DIR)/download
	mkdir -p $(MATHJAX_DIR)/static
	mv $(MATHJAX_DIR)/download/package/es5 $(MATHJAX_DIR)/static/mathjax
	cp $(MATHJAX_DIR)/download/package/LICENSE $(MATHJAX_DIR)/static/mathjax/LICENSE
	rm -rf $(MATHJAX_DIR)/download
	@touch $@

mathjax: $(MATHJAX_STAMP)  ## fetch the pinned MathJax 3 from npm once (the book serves it, offline)

book: check-scale env data mathjax workflow-env install-bundles  ## cells, changed notebooks, then the HTML (strict), JOBS at a time
	$(SNAKEMAKE) all $(SMK_FORCE) $(SMK_CONFIG)
	@echo "book: $(CURDIR)/_build/html/index.html (scale $(SCALE))"

.PHONY: check-claim check-seeds
# ID and SEEDS are checked before any work (env, data, Snakemake); `--` keeps an id that starts
# with "-" from being read as an option (ID=--help printed the usage, taken as the chapter)
check-claim:
	@test -n $(call shq,$(ID)) || { echo "error: name the claim: make claim ID=<claim id> (ids: the scorecard page, or book/executed/scorecard/all_claims.csv)" >&2; exit 2; }
	@case $(call shq,$(ID)) in -*) printf 'error: ID=%s is not a claim id (ids do not start with "-"; e.g. ID=001-T3-adult-nd-pt_cp-RF: the scorecard page, or book/executed/scorecard/all_claims.csv)\n' $(call shq,$(ID)) >&2; exit 2;; esac

claim: check-scale check-claim env data workflow-env  ## recompute one claim (its cells and chapter) and print its row: make claim ID=...
	@chapter=$$($(PY) -m fusionlib.compendium.recompute locate -- $(call shq,$(ID))) || exit 2; \
	case "$$chapter" in ''|*[!a-z0-9_]*) printf 'error: ID=%s: no chapter name came back (got "%s")\n' $(call shq,$(ID)) "$$chapter" >&2; exit 2;; esac; \
	printf 'claim %s: chapter %s (scale $(SCALE), seed $(SEED))\n' $(call shq,$(ID)) "$$chapter"; \
	$(SNAKEMAKE) $(EXECUTED)/$$chapter.ipynb --forcerun notebook --config scale=$(SCALE) seed=$(SEED) python=$(CURDIR)/$(PY) force=1 && \
	$(PY) -m fusionlib.compendium.recompute show -- $(call shq,$(ID))

# make stability: every chapter at each root seed of SEEDS (the book's own seed reuses
# book/executed; the others go to results/stability/<scale>/seed-<s>), then each claim's verdict
# per seed in results/stability/<scale>/stability.csv, which the scorecard shows
SEEDS ?= 0 1 2
# a seed as an integer: leading zeros dropped (SEEDS="0 00" named seed 0 twice and re-ran every
# chapter; SEED=00 is the book's seed 0)
INT_OF = sed 's/^0*\(.\)/\1/'
check-seeds:
	@set -f; seeds=$(call shq,$(SEEDS)); seen=' '; for s in $$seeds; do \
	  case $$s in *[!0-9]*) echo "error: SEEDS=\"$$seeds\" is not allowed: '$$s' is not an integer >= 0; give root seeds, e.g. SEEDS=\"0 1 2\"" >&2; exit 2;; esac; \
	  n=$$(printf '%s' "$$s" | $(INT_OF)); \
	  case "$$seen" in *" $$n "*) echo "error: SEEDS=\"$$seeds\" names root seed $$n twice ('$$s'); give each seed once, e.g. SEEDS=\"0 1 2\"" >&2; exit 2;; esac; \
	  seen="$$seen$$n "; done; \
	[ "$$seen" != ' ' ] || { echo "error: SEEDS is empty; give the root seeds, e.g. SEEDS=\"0 1 2\"" >&2; exit 2; }

stability: check-scale check-seeds env data workflow-env  ## verdict of every claim at each root seed of SEEDS (default "0 1 2"); the scorecard marks those that flip
	@set -ef; seeds=$(call shq,$(SEEDS)); book=$$(printf '%s' '$(SEED)' | $(INT_OF)); dirs=""; \
	for s in $$seeds; do s=$$(printf '%s' "$$s" | $(INT_OF)); \
	  if [ "$$s" = "$$book" ]; then out=$(EXECUTED); else out=results/stability/$(SCALE)/seed-$$s; fi; \
	  echo "== stability: chapters at scale $(SCALE), root seed $$s -> $$out"; \
	  $(SNAKEMAKE) notebooks --config scale=$(SCALE) seed=$$s python=$(CURDIR)/$(PY) executed=$$out; \
	  dirs="$$dirs --seed-dir $$s=$$out"; done; \
	$(PY) -m fusionlib.compendium.stability --scale $(SCALE) $$dirs

# Results bundles (fusionlib/compendium/cells/bundle.py): the shards of a scale in one archive
# with a manifest; import verifies every hash and code key and installs what passes; verify
# recomputes N cells drawn at random (PICK=<int> fixes the draw) and compares them
N ?= 3
export-results: check-scale env  ## the current shards of SCALE in one archive with a manifest (BUNDLE=<file>; ONLY=<experiment>; CELLS='<pattern> ...')
	$(PY) -m fusionlib.compendium.cells export --scale $(SCALE) --seed $(SEED) $(if $(BUNDLE),--out=$(call shq,$(BUNDLE))) $(if $(ONLY),--experiment=$(call shq,$(ONLY))) $(foreach c,$(CELLS),--cell=$(call shq,$(c)))

import-results: env  ## verify a bundle, refuse altered or stale shards, install the rest: make import-results BUNDLE=<file>
	@test -n $(call shq,$(BUNDLE)) || { echo "error: name the bundle: make import-results BUNDLE=results/bundles/<file>.tar.gz" >&2; exit 2; }
	$(PY) -m fusionlib.compendium.cells import -- $(call shq,$(BUNDLE))

verify-results: check-scale env data  ## recompute N (default 3) cells of SCALE installed from bundles here and compare (SAME_DEVICE=1: only those computed on this CPU model)
	@printf '%s' '$(N)' | grep -Eqx '[1-9][0-9]*' || { echo "error: N=$(N) is not allowed; give how many cells to recompute (>= 1), e.g. N=3" >&2; exit 2; }
	$(PY) -m fusionlib.compendium.cells verify --scale $(SCALE) -n $(N) $(if $(PICK),--pick-seed $(PICK)) $(if $(SAME_DEVICE),--same-device)

# Paper scale (fusionlib/compendium/paperplan.py; README "Paper scale: plan, compute, ship"): the
# plan of every paper-scale cell, the most valuable missing cells within BUDGET minutes (CPU, or
# the image cells on a CUDA device), each session shipped as a bundle in bundles/, which every
# build installs first (once per bundle and code: stamps in results/bundles-installed)
PAPER_EXPERIMENTS := $(shell sed -n '/^experiments:/,/^[^ -]/s/^  - //p' workflow/config.yaml)
BUNDLES = $(sort $(wildcard bundles/*.tar.gz))

# the values are read from the environment (make exports command-line variables to recipes), so
# a quote in them cannot break the shell line; once checked they are plain words
check-paper:
	@printf '%s' "$${SEED-0}" | grep -Eqx '[0-9]+' || { echo "error: SEED=$${SEED-0} is not allowed; give an integer >= 0 (the root seed of every random stream), e.g. SEED=0" >&2; exit 2; }
	@$(if $(ONLY),$(if $(and $(filter 1,$(words $(ONLY))),$(filter $(ONLY),$(PAPER_EXPERIMENTS))),true,echo "error: ONLY=$$ONLY is not allowed; use one of: $(PAPER_EXPERIMENTS)" >&2; exit 2),true)

check-budget:
	@test -n "$$BUDGET" || { echo "error: give the budget in minutes: BUDGET=<minutes>, e.g. BUDGET=60" >&2; exit 2; }
	@{ printf '%s' "$$BUDGET" | grep -Eqx '[0-9]*[.]?[0-9]+' && awk -v b="$$BUDGET" 'BEGIN { exit !(b + 0 > 0) }'; } || { echo "error: BUDGET=$$BUDGET is not allowed; give a positive number of minutes, e.g. BUDGET=60" >&2; exit 2; }

install-bundles: env  ## import each bundles/*.tar.gz once (verified; a refused one is named and the build goes on)
	@$(if $(BUNDLES),$(PY) -m fusionlib.compendium.paperplan install-bundles $(foreach b,$(BUNDLES),'$(b)'),true)

paper-plan: check-paper env  ## every paper-scale cell: core-minutes, GPU or not, shard here; totals per chapter (CALIBRATE=1)
	$(PY) -m fusionlib.compendium.paperplan plan --seed $(SEED) $(if $(ONLY),--only $(ONLY)) $(if $(CALIBRATE),--calibrate)

# one cell at a time (a background job) unless JOBS is given on the command line
paper-cells: check-paper check-budget env data install-bundles  ## missing CPU paper cells within BUDGET=<minutes> (ONLY=<experiment>; JOBS=<n> at a time), then a bundle
	$(PY) -m fusionlib.compendium.paperplan cells --budget $(BUDGET) --seed $(SEED) $(if $(ONLY),--only $(ONLY)) $(if $(filter command line,$(origin JOBS)),--jobs $(JOBS))

paper-gpu: check-paper check-budget env data install-bundles  ## the image cells within BUDGET=<minutes> on a CUDA device, then a bundle
	$(PY) -m fusionlib.compendium.paperplan gpu --budget $(BUDGET) --seed $(SEED) $(if $(ONLY),--only $(ONLY))

# SCALE given on the command line or in the environment: every chapter must be labelled with it
# CHECK_FLAGS: more options of tools/check_html.py, e.g. CHECK_FLAGS=--no-summary-check
check-html: env  ## open each built page in headless Chromium, offline; screenshots in _build/screenshots
	@if ! command -v chromium >/dev/null && ! command -v chromium-browser >/dev/null \
	    && [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	  echo "installing chromium (apt-get)"; \
	  (apt-get install -y -qq chromium >/dev/null 2>&1 || \
	   (apt-get update -qq >/dev/null 2>&1 && apt-get install -y -qq chromium >/dev/null 2>&1)) || \
	  echo "warning: could not install chromium" >&2; fi
	$(PY) tools/check_html.py _build/html $(if $(filter command line environment,$(origin SCALE)),--scale $(SCALE)) $(CHECK_FLAGS)

lint: env  ## ruff (pyflakes, pycodestyle, import order, bugbear, pyupgrade)
	$(VENV)/bin/ruff check fusionlib tests benchmarks tools workflow

# TEST_WORKERS: pytest-xdist's -n (0: one process; auto/logical: one per core), checked first
check-test-workers:
	@printf '%s' '$(TEST_WORKERS)' | grep -Eqx '[0-9]+|auto|logical' || { echo "error: TEST_WORKERS=$(TEST_WORKERS) is not allowed; give a number of pytest processes (0: one process, no workers), auto or logical, e.g. TEST_WORKERS=$$(nproc)" >&2; exit 2; }

test: check-test-workers env data lint  ## lint + unit tests + every notebook at smoke scale (TEST_WORKERS processes)
	@$(PY) -m pytest -q -n $(TEST_WORKERS) --dist loadgroup; rc=$$?; \
	if [ $$rc -eq 5 ]; then echo "error: pytest collected no tests" >&2; exit 1; fi; exit $$rc

# The engines the workflow runs on (tests/workflow): cells on a one-node Slurm cluster that the
# test starts here and stops (tools/slurm_cluster.py; as root with apt-get, Debian's Slurm, MUNGE
# and MariaDB are installed first when missing, elsewhere the test is skipped and says why), and
# the jobs of the GitHub paper-scale workflow as Snakemake dry runs.
SLURM_PACKAGES := slurm-wlm slurmctld slurmd slurmdbd slurm-client munge mariadb-server
test-workflow: env workflow-env  ## Slurm (a one-node cluster started here, root) and the GPU-runner workflow, checked
	@if ! command -v slurmctld >/dev/null && ! test -x /usr/sbin/slurmctld \
	    && [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	  echo "installing $(SLURM_PACKAGES) (apt-get)"; \
	  (DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $(SLURM_PACKAGES) >/dev/null 2>&1 || \
	   (apt-get update -qq >/dev/null 2>&1 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $(SLURM_PACKAGES) >/dev/null 2>&1)) || \
	  echo "warning: could not install $(SLURM_PACKAGES); the Slurm test will say it is skipped" >&2; fi
	WORKFLOW_VENV=$(WORKFLOW_VENV) $(PY) -m pytest -q -m "slurm or workflow" -rs tests/workflow

bench: env data  ## speed benchmarks (ratios measured side by side; results in benchmarks/results/)
	@for b in benchmarks/bench_*.py; do echo "== $$b"; $(PY) $$b || exit 1; done

clean:  ## remove build output and executed notebooks (keeps .venv and data)
	rm -rf _build $(EXECUTED) results .snakemake
