# CREPE companion: every table and figure of the paper, regenerated.
#
#   make all     the released text data when missing, published numbers -> notebooks -> figures/ tables/,
#                the toy world, then `make check`
#   make test    the test suite (make test-quick: without the slow tests)
#   make docs    the executed notebooks as a book (Sphinx) that opens from disk (build/site/index.html)
#   make docs-check  every page of it in headless Chromium; screenshots in build/docs-check
#   make prose-check the notebooks' prose against their numbers, with the data and without any
#
# Both create (or refresh) the virtual environment .venv when it is missing or out of date.
# `make help` lists every target. Each step below is one target; a rerun skips what is up to date
# (`make check` always runs: it is the check). `all` writes figures/ and tables/, never docs/
# (`make check-claims-page` refreshes the claims table of docs/claims.md). `make clean` removes what
# the notebooks and the website put in the build folder: never data, weights, evaluated results or caches.

SHELL := /bin/bash
.DEFAULT_GOAL := all

PYTHON     ?= python3
VENV       ?= .venv
VPY        := $(VENV)/bin/python
VENV_STAMP := $(VENV)/.crepe-installed

# Where things live. CREPE_DATA is the data root; every dataset is a folder under it unless its own variable
# (VG_IMAGES, COCO_IMAGES, ...: `python -m crepe_utils download --help` lists them) moves it, read from the
# environment by the package, which declares each dataset once (crepe_utils/paths.py; all overridable:
# `make evaluate CREPE_DATA=/big/disk VG_IMAGES=/images/vg`).
CREPE_DATA      ?= data
CREPE_CACHE     ?= cache
RESULTS         ?= results/evaluated
TOY_DIR         ?= results/toy
BUILD           ?= build
FIGURES         ?= figures
TABLES          ?= tables
# Models for `make evaluate` (CREPE and SugarCrepe, each benchmark reading its own folders above, exported):
# keys of either paper's table, paper (each table's models), all (`make models` lists them) or field (the open_clip
# checkpoints of vl_compo's 202-checkpoint table, on the four benchmarks it covers: notebook 10 sets them beside it).
MODELS       ?= paper
DEVICE       ?= auto
PRECISION    ?= fp32

export CREPE_DATA CREPE_CACHE
export PYTHONHASHSEED := 0
export MPLBACKEND := Agg

PKG_SOURCES := $(shell find crepe_utils -name '*.py' -o -name '*.csv' -o -name '*.json' 2>/dev/null)
# Every notebook in notebooks/ but the toy world's own (its target is `toy`), in file-name order.
NOTEBOOKS   := $(filter-out 06_toy_world,$(basename $(notdir $(wildcard notebooks/*.ipynb))))
TOY_NOTEBOOKS := 02_systematicity 03_productivity
RUN_NB      := $(VPY) -m crepe_utils.notebooks
NB_OUTPUTS  := -p figures_dir $(FIGURES) -p tables_dir $(TABLES)

.PHONY: all test test-quick check check-claims-page check-claims-page-current data data-text evaluate toy prose-check \
        toy-world toy-notebooks notebooks models venv clean clean-venv help docs docs-check docs-extra slurm-check $(NOTEBOOKS) 06_toy_world

# The check that ends `all` (CI passes check-claims-page-current: one run of the checks, which also compares
# docs/claims.md with them).
ALL_CHECK ?= check

all: data-text notebooks toy $(ALL_CHECK) ## the released text data, published numbers, the toy world, checks

help: ## list the targets
	@grep -E '^[$$()A-Za-z0-9_%-]+:.*## ' $(MAKEFILE_LIST) | sed -e 's/:.*## /\t/' -e 's/^$$(NOTEBOOKS)/<notebook>/' \
	    | expand -t 20
	@test -x $(VPY) && $(VPY) -m crepe_utils download --list-targets | expand -t 20 || true

# What each executed notebook depends on: the package files its imports reach (computed from the
# import graph by `python -m crepe_utils.notebooks deps`), plus the data and results it reads (below).
# Targets that run no notebook skip this (and so need no environment).
NO_DEPS_GOALS := help venv clean clean-venv test test-quick models data data-text data-% slurm-check
ifneq ($(if $(MAKECMDGOALS),$(filter-out $(NO_DEPS_GOALS),$(MAKECMDGOALS)),all),)
-include $(BUILD)/deps.mk
endif

$(BUILD)/deps.mk: $(PKG_SOURCES) $(wildcard notebooks/*.ipynb) | $(VENV_STAMP)
	@mkdir -p $(@D)
	$(VPY) -m crepe_utils.notebooks deps notebooks/*.ipynb > $@.tmp && mv $@.tmp $@

# ---------------------------------------------------------------- environment
venv: $(VENV_STAMP) ## create or refresh the virtual environment

$(VENV_STAMP): requirements.txt requirements.lock pyproject.toml
	@test -x $(VPY) || $(PYTHON) -m venv $(VENV)
	$(VPY) -m pip install --quiet -r requirements.txt -c requirements.lock
	$(VPY) -m pip install --quiet --no-deps -e .
	@touch $@

# ---------------------------------------------------------------- tests and checks
# The suite runs on every core (pytest-xdist, at most TEST_WORKERS_MAX workers; one file's tests share a worker and
# its fixtures) and lists its 20 slowest tests. One file or test, fast and in this process:
# `.venv/bin/python -m pytest tests/test_metrics.py` (docs/development.md).
TEST_WORKERS     ?= auto
TEST_WORKERS_MAX ?= 4
PYTEST_PARALLEL  := -n $(TEST_WORKERS) --maxprocesses $(TEST_WORKERS_MAX) --dist loadfile --durations=20

test: $(VENV_STAMP) ## run the test suite, every check (under 5 minutes on 2 cores; 6½ with the reference data)
	$(VPY) -m pytest -q $(PYTEST_PARALLEL)

test-quick: $(VENV_STAMP) ## the suite without the tests marked slow (notebook runs, training, kills, processes)
	$(VPY) -m pytest -q $(PYTEST_PARALLEL) -m "not slow"

check: $(VENV_STAMP) ## check every claim of the paper; non-zero exit when one fails
	$(VPY) -m crepe_utils check --results-dir $(RESULTS) --tables-dir $(TABLES)

CLAIMS_PAGE := docs/claims.md

check-claims-page: $(VENV_STAMP) ## `make check`, then copy the claims table into docs/claims.md (`all` leaves it alone)
	$(VPY) -m crepe_utils check --results-dir $(RESULTS) --tables-dir $(TABLES) --claims-page $(CLAIMS_PAGE)

check-claims-page-current: $(VENV_STAMP) ## `make check`, failing also when docs/claims.md's table is not its output
	$(VPY) -m crepe_utils check --results-dir $(RESULTS) --tables-dir $(TABLES) --verify-claims-page $(CLAIMS_PAGE)

# ---------------------------------------------------------------- notebooks (published numbers)
notebooks: $(NOTEBOOKS) ## run the paper notebooks (published numbers, plus evaluated results when present)

$(NOTEBOOKS): %: $(BUILD)/%.ipynb ## run one notebook, e.g. `make 02_systematicity`: 00_... to 05_..., 07_... to 11_...

# Read by the notebooks besides the package: evaluated results (every notebook shows them when present) and the
# data files of the benchmarks each is about (NB_DATA_<notebook>, in build/deps.mk, from the registry).
EVAL_SUMMARIES = $(shell find $(RESULTS) -name '*summary.csv' 2>/dev/null)
# 02 and 03 show the toy world's evaluated figures where no evaluated results exist, so the toy runs come first;
# 07 also compares the toy world's model with the blind scorers, so it runs after the toy world, always.
NB_AFTER_02_systematicity    = $(BUILD)/toy/02_systematicity.ipynb
NB_AFTER_03_productivity     = $(BUILD)/toy/03_productivity.ipynb
NB_AFTER_07_blind_baselines  = $(TOY_DIR)/.done
# 00 lets a reader try the toy world's model on captions of their own, and works its data when CREPE's are absent.
NB_AFTER_00_how_compositionality_is_evaluated = $(TOY_DIR)/.done
NB_PARAMS_07_blind_baselines = -p toy_dir $(TOY_DIR)
# 11 compares the toy world's model with blind scorers and places it among the field, so it runs after the toy world;
# the blind scorers' results it writes go to the build folder, never to results/.
NB_AFTER_11_is_it_better     = $(TOY_DIR)/.done
NB_PARAMS_11_is_it_better    = -p toy_dir $(TOY_DIR) -p work_dir $(BUILD)/is_it_better
NB_PARAMS_00_how_compositionality_is_evaluated = -p toy_dir $(TOY_DIR)

.SECONDEXPANSION:
$(BUILD)/%.ipynb: notebooks/%.ipynb crepe_utils/notebooks.py $$(NB_DEPS_$$*) $$(NB_DATA_$$*) $$(NB_AFTER_$$*) \
                  $$(EVAL_SUMMARIES) \
                  | $(VENV_STAMP)
	$(RUN_NB) $< $@ -p results_dir $(RESULTS) $(NB_OUTPUTS) $(NB_PARAMS_$*)

# ---------------------------------------------------------------- data
data: data-crepe data-vg ## download CREPE's hard negatives and Visual Genome (about 15 GB)

# `all` runs this first. Each dataset's folder is checked where the package looks for it; what is missing
# is fetched (pinned, checksummed), or, offline, named in one line with the target that fetches it. Never
# fails for want of a network, never fetches images or gated data, and adds nothing to a folder arranged by
# hand or a read-only one.
data-text: $(VENV_STAMP) ## fetch the released text data that are missing (one line per dataset)
	$(VPY) -m crepe_utils download --released-text

# One target per dataset the benchmarks declare (`make help` lists them): its default folder, or DEST=DIR.
data-%: $(VENV_STAMP)
	$(VPY) -m crepe_utils download $* $(if $(DEST),--dest $(DEST))

# ---------------------------------------------------------------- evaluation (GPU recommended)
models: $(VENV_STAMP) ## list the model registry
	$(VPY) -m crepe_utils models

evaluate: $(VENV_STAMP) ## evaluate MODELS (default: the papers') on CREPE and SugarCrepe, then rerun the notebooks
	@status=0; $(VPY) -m crepe_utils evaluate-paper --models $(MODELS) --out $(RESULTS) --device $(DEVICE) \
	    --precision $(PRECISION) || status=$$?; \
	$(MAKE) notebooks || exit $$?; \
	if [ $$status -ne 0 ]; then echo "some models failed (see above); the notebooks show the others" >&2; fi; \
	exit $$status

# ---------------------------------------------------------------- Slurm
# The documented job array (docs/slurm/evaluate_array.sbatch) on a single-node Slurm on localhost: munged, slurmctld
# and slurmd from Debian's packages (apt-get installs slurm-wlm and munge where missing: root, as CI runs), the
# blind scorers and a tiny fixture CLIP (crepe-productivity and crepe-raw, synthetic images) on CREPE's released
# productivity text, each task's summary compared byte for byte with the same run in one process; the daemons it
# started are stopped on every exit (docs/slurm/check.sh).
slurm-check: $(VENV_STAMP) ## the Slurm job array on a one-node Slurm started here (root), compared with one process
	VPY=$(VPY) bash docs/slurm/check.sh

# ---------------------------------------------------------------- the toy world
toy: 06_toy_world toy-notebooks ## the whole experiment on a procedurally generated world (CPU, minutes)

toy-world: $(TOY_DIR)/.done ## generate the toy world, train its tiny CLIP, evaluate it (TOY_DIR)

# 02's toy run scores the toy world's own systematicity files without looking, too; 03's counts the false
# negatives of the toy world's raw sets (beside its model's raw-set retrieval, which the toy pipeline runs).
NB_TOY_PARAMS_02_systematicity = -p data_dir $(TOY_DIR)/world
NB_TOY_PARAMS_03_productivity = -p data_dir $(TOY_DIR)/world

toy-notebooks: $(TOY_NOTEBOOKS:%=$(BUILD)/toy/%.ipynb) ## notebooks 02 and 03 on the toy world's results

06_toy_world: $(BUILD)/06_toy_world.ipynb ## the toy world's own notebook

# The pipeline caches each stage by its settings and sources itself; this stamp spares make the call.
$(TOY_DIR)/.done: $$(TOY_SOURCES) | $(VENV_STAMP)
	$(VPY) -m crepe_utils toy --out $(TOY_DIR)
	@touch $@

$(BUILD)/toy/%.ipynb: notebooks/%.ipynb crepe_utils/notebooks.py $$(NB_DEPS_$$*) $(TOY_DIR)/.done | $(VENV_STAMP)
	$(RUN_NB) $< $@ -p results_dir $(TOY_DIR)/results $(NB_OUTPUTS) -p output_prefix toy_ -p published_numbers False \
	    $(NB_TOY_PARAMS_$*)

$(BUILD)/06_toy_world.ipynb: notebooks/06_toy_world.ipynb crepe_utils/notebooks.py $$(NB_DEPS_06_toy_world) \
                             $(TOY_DIR)/.done | $(VENV_STAMP)
	$(RUN_NB) $< $@ -p toy_dir $(TOY_DIR) $(NB_OUTPUTS)

# ---------------------------------------------------------------- the prose check
# Every notebook runs a second time with an empty data folder (into $(NODATA), never figures/ or tables/), and
# tests/test_prose.py reads both runs: a number or a direction word in a notebook's static prose must be one its
# outputs (or a cited published table) hold. Nothing is fetched: the data targets are not run for it.
NODATA := $(BUILD)/nodata
# Every dataset's own folder variable set here (VG_IMAGES, VALSE_DATA, ...: the package recognises them by their
# form, <NAME>_DATA or <NAME>_IMAGES) is removed for that run, so each dataset's folder is its default under the
# empty data root.
FOLDER_ENV = $(sort $(filter-out CREPE_DATA,$(foreach v,$(filter %_DATA %_IMAGES,$(.VARIABLES)),\
               $(if $(filter environment% command%,$(origin $(v))),$(v)))))

prose-check: all ## the notebooks' prose against their numbers, with the data and without any ($(BUILD)/nodata)
	@mkdir -p $(NODATA)/data
	env $(addprefix -u ,$(FOLDER_ENV)) $(MAKE) --no-print-directory notebooks toy-notebooks 06_toy_world \
	    BUILD=$(NODATA) FIGURES=$(NODATA)/figures TABLES=$(NODATA)/tables CREPE_DATA=$(NODATA)/data \
	    $(foreach v,$(FOLDER_ENV),$(if $(filter command%,$(origin $(v))),$(v)=$(NODATA)/data/unset))
	PROSE_REQUIRE=1 PROSE_BUILDS="$(BUILD) $(NODATA)" $(VPY) -m pytest -q tests/test_prose.py

# ---------------------------------------------------------------- the website
# The book is built by Sphinx (MyST-NB, sphinx-book-theme) from the executed notebooks, never re-run; the check
# drives the system's Chromium (`apt-get install chromium`) with Playwright. Both come with the `docs` extra,
# installed here on first use (pinned by requirements.lock).
DOCS_STAMP := $(VENV)/.crepe-docs-installed

$(DOCS_STAMP): pyproject.toml requirements.lock | $(VENV_STAMP)
	$(VPY) -m pip install --quiet -c requirements.lock -e '.[docs]'
	@touch $@

docs-extra: $(DOCS_STAMP) ## install the docs extra (Sphinx, MyST-NB, the book theme, Playwright); the book's tests skip without it

docs: all $(DOCS_STAMP) ## the book: README, executed notebooks, docs/ pages, figures, tables; searchable (build/site/index.html)
	$(VPY) -m crepe_utils.site.build --build-dir $(BUILD) --out $(BUILD)/site --figures-dir $(FIGURES) \
	    --tables-dir $(TABLES)

docs-check: docs $(DOCS_STAMP) ## every page in headless Chromium: images, links, captions, search, prompts, NaN, logs; screenshots
	$(VPY) -m crepe_utils.site.check $(BUILD)/site --screenshots $(BUILD)/docs-check

# ---------------------------------------------------------------- housekeeping
# Only what make builds here (never data, weights, results, caches, or the device check's
# $(BUILD)/device_check.json, a measurement on a machine one may not have again).
clean: ## remove executed notebooks, their HTML and the website (keeps data, weights, results and caches)
	rm -rf $(BUILD)/*.ipynb $(BUILD)/*.html $(BUILD)/toy $(BUILD)/is_it_better $(BUILD)/nodata $(BUILD)/site $(BUILD)/site.src $(BUILD)/site.doctrees $(BUILD)/site.warnings $(BUILD)/docs-check $(BUILD)/deps.mk

clean-venv: ## remove the virtual environment
	rm -rf $(VENV)
