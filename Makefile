# CREPE companion: every table and figure of the paper, regenerated.
#
#   make all     published numbers -> notebooks -> figures/ tables/, the toy world, then `make check`
#   make test    the test suite
#   make docs    the executed notebooks as a website that opens from disk (build/site/index.html)
#   make docs-check  every page of it in headless Chromium; screenshots in build/docs-check
#
# Both create (or refresh) the virtual environment .venv when it is missing or out of date.
# Each step below is one target; a rerun skips what is up to date. `make clean` removes only
# the build folder (executed notebooks, HTML): never data, weights, evaluated results or caches.

SHELL := /bin/bash
.DEFAULT_GOAL := all

PYTHON     ?= python3
VENV       ?= .venv
VPY        := $(VENV)/bin/python
VENV_STAMP := $(VENV)/.crepe-installed

# Where things live (all overridable: `make evaluate CREPE_DATA=/big/disk/crepe`).
CREPE_DATA   ?= data
VG_IMAGES    ?= $(CREPE_DATA)/visual_genome
RESULTS      ?= results/evaluated
TOY_DIR      ?= results/toy
BUILD        ?= build
FIGURES      ?= figures
TABLES       ?= tables
# Paper models to evaluate with `make evaluate`: registry keys, or paper / all for every row (`make models` lists them).
MODELS       ?= paper
DEVICE       ?= auto
PRECISION    ?= fp32

export CREPE_DATA VG_IMAGES
export PYTHONHASHSEED := 0
export MPLBACKEND := Agg

PKG_SOURCES := $(shell find crepe_utils -name '*.py' -o -name '*.csv' -o -name '*.json' 2>/dev/null)
NOTEBOOKS   := 01_benchmark_totals 02_systematicity 03_productivity 04_imagenet_correlation 05_winoground
RUN_NB      := $(VPY) -m crepe_utils.notebooks

.PHONY: all test check check-readme check-readme-current data data-crepe data-vg data-winoground evaluate toy notebooks \
        models venv clean clean-venv help docs docs-check $(NOTEBOOKS) 06_toy_world

all: notebooks toy check ## everything reproducible on a laptop: published numbers, the toy world, checks

help: ## list the targets
	@grep -E '^[a-zA-Z0-9_-]+:.*## ' $(MAKEFILE_LIST) | sed 's/:.*## /\t/' | expand -t 20

# ---------------------------------------------------------------- environment
venv: $(VENV_STAMP) ## create or refresh the virtual environment

$(VENV_STAMP): requirements.txt requirements.lock pyproject.toml
	@test -x $(VPY) || $(PYTHON) -m venv $(VENV)
	$(VPY) -m pip install --quiet -r requirements.txt -c requirements.lock
	$(VPY) -m pip install --quiet --no-deps -e .
	@touch $@

# ---------------------------------------------------------------- tests and checks
test: $(VENV_STAMP) ## run the test suite
	$(VPY) -m pytest -q

check: $(VENV_STAMP) ## check every claim of the paper; non-zero exit when one fails
	$(VPY) -m crepe_utils check --results-dir $(RESULTS) --tables-dir $(TABLES)

check-readme: $(VENV_STAMP) ## `make check`, then copy the claims table into README.md (`all` leaves README alone)
	$(VPY) -m crepe_utils check --results-dir $(RESULTS) --tables-dir $(TABLES) --readme README.md

check-readme-current: $(VENV_STAMP) ## `make check`, failing also when README.md's claims table is not its output
	$(VPY) -m crepe_utils check --results-dir $(RESULTS) --tables-dir $(TABLES) --verify-readme README.md

# ---------------------------------------------------------------- notebooks (published numbers)
notebooks: $(NOTEBOOKS) ## run the paper notebooks (published numbers, plus evaluated results when present)

EVAL_SUMMARIES = $(shell find $(RESULTS) -name summary.csv 2>/dev/null)

$(NOTEBOOKS): %: $(BUILD)/%.ipynb

$(BUILD)/%.ipynb: notebooks/%.ipynb $(PKG_SOURCES) $(EVAL_SUMMARIES) | $(VENV_STAMP)
	$(RUN_NB) $< $@ -p results_dir $(RESULTS) -p figures_dir $(FIGURES) -p tables_dir $(TABLES)

# ---------------------------------------------------------------- data
data: data-crepe data-vg ## download CREPE's hard negatives and Visual Genome (about 15 GB)

data-crepe: $(VENV_STAMP)
	$(VPY) -m crepe_utils download crepe --dest $(CREPE_DATA)/crepe

data-vg: $(VENV_STAMP)
	$(VPY) -m crepe_utils download vg --dest $(VG_IMAGES)

data-winoground: $(VENV_STAMP) ## gated: needs HF_TOKEN (see README)
	$(VPY) -m crepe_utils download winoground --dest $(CREPE_DATA)/winoground

# ---------------------------------------------------------------- evaluation (GPU recommended)
models: $(VENV_STAMP) ## list the model registry
	$(VPY) -m crepe_utils models

evaluate: $(VENV_STAMP) ## evaluate MODELS (default: the paper's) on the real data, then rerun the notebooks
	@status=0; $(VPY) -m crepe_utils evaluate-paper --models $(MODELS) --data-dir $(CREPE_DATA)/crepe \
	    --image-dir $(VG_IMAGES) --out $(RESULTS) --device $(DEVICE) --precision $(PRECISION) || status=$$?; \
	$(MAKE) notebooks || exit $$?; \
	if [ $$status -ne 0 ]; then echo "some models failed (see above); the notebooks show the others" >&2; fi; \
	exit $$status

# ---------------------------------------------------------------- the toy world
toy: $(BUILD)/06_toy_world.ipynb ## the whole experiment on a procedurally generated world (CPU, minutes)

06_toy_world: $(BUILD)/06_toy_world.ipynb

$(TOY_DIR)/.done: $(PKG_SOURCES) | $(VENV_STAMP)
	$(VPY) -m crepe_utils toy --out $(TOY_DIR)
	@touch $@

TOY_NOTEBOOKS := 02_systematicity 03_productivity

$(BUILD)/06_toy_world.ipynb: notebooks/06_toy_world.ipynb $(TOY_DIR)/.done $(PKG_SOURCES) | $(VENV_STAMP)
	@for nb in $(TOY_NOTEBOOKS); do \
	  $(RUN_NB) notebooks/$$nb.ipynb $(BUILD)/toy/$$nb.ipynb -p results_dir $(TOY_DIR)/results \
	    -p figures_dir $(FIGURES) -p tables_dir $(TABLES) -p output_prefix toy_ -p published_numbers False || exit 1; \
	done
	$(RUN_NB) $< $@ -p toy_dir $(TOY_DIR) -p figures_dir $(FIGURES) -p tables_dir $(TABLES)

# ---------------------------------------------------------------- the website
docs: all ## the website: README, the executed notebooks, claims, figures, tables (build/site/index.html)
	$(VPY) -m crepe_utils.site.build --build-dir $(BUILD) --out $(BUILD)/site --figures-dir $(FIGURES) \
	    --tables-dir $(TABLES)

docs-check: docs ## open every page in headless Chromium; fails on a broken image or link; screenshots
	$(VPY) -m crepe_utils.site.check $(BUILD)/site --screenshots $(BUILD)/docs-check

# ---------------------------------------------------------------- housekeeping
clean: ## remove executed notebooks and HTML (keeps data, weights, results and caches)
	rm -rf $(BUILD)

clean-venv: ## remove the virtual environment
	rm -rf $(VENV)
