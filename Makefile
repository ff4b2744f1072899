# The README's two commands: `make book` and `make test`. Both set everything up from a
# bare clone: virtual environment, installs (pinned by constraints.txt), verified data.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-stamp
NBDIR  := build/nbtest
# Chapters first, then the pages that read every chapter's results (scorecard, intro).
CHAPTERS := $(filter-out notebooks/09_scorecard.md,$(wildcard notebooks/*.md))
NOTEBOOKS := $(CHAPTERS) notebooks/09_scorecard.md book/intro.md
# The book executes two notebooks at a time in this order: the longest first, so that the two
# workers finish together (a notebook left out here is still executed, after these). Times as
# `make book` sees them after `make test` (the order of CI), when the chapters' results are in
# the results cache: chapter 11 computes its own, the others mostly draw.
LONGEST_FIRST := notebooks/11_your_data.md notebooks/03_hca_recovery.md \
                 notebooks/08_mmlu_subtasks.md notebooks/07_leaderboard_v1.md \
                 notebooks/04_interpretation.md
BOOK_ORDER := $(LONGEST_FIRST) $(filter-out $(LONGEST_FIRST),$(NOTEBOOKS))
# Small matrices dominate this project: multi-threaded BLAS only adds overhead (10-100x on
# a 2-core machine), so computations run single-threaded unless the caller says otherwise.
export OPENBLAS_NUM_THREADS ?= 1
export OMP_NUM_THREADS ?= 1
export MKL_NUM_THREADS ?= 1
# No kernel pins: OpenBLAS and numpy pick their code paths for the CPU (OPENBLAS_CORETYPE and
# OPENBLAS_L2_SIZE are left as the machine has them; some machines need them). A single
# FastICA run can end in another local optimum when rounding differs, so every fit-based claim
# is read from an ensemble of seeds (CONTRIBUTING.md); scripts/check_kernels.sh compares the
# scorecard under several OpenBLAS kernels.

.PHONY: book test unit notebooks data venv bench browser-test run-notebook clean print-env lint

$(STAMP): pyproject.toml constraints.txt
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -c constraints.txt -e '.[test,book,lab]'
	touch $(STAMP)

venv: $(STAMP)

## data: fetch (or find in $$HCA_DATA_DIR) and verify every pinned file
data: venv
	$(BIN)/python -m hca data

## book: execute every notebook and build HTML into _build/html (warnings are errors)
# Notebooks are executed afresh on every build (the cache is cleared first, so library changes
# always reach the numbers), two at a time with jupyter-cache's parallel executor; the
# Sphinx build then renders every page again from that cache (--all: a page whose .md did not
# change still shows its new results).
JCACHE := _build/.jupyter_cache
book: data
	rm -rf $(JCACHE)
	yes y | $(BIN)/jcache notebook -p $(JCACHE) add -r myst_nb_md $(BOOK_ORDER) > /dev/null
	$(BIN)/jcache project -p $(JCACHE) execute -e local-parallel -t 900
	$(BIN)/jupyter-book build . --all --warningiserror --keep-going
	@echo "Open _build/html/index.html"

## lint: ruff, the type checker and the import contracts (the floors) on hca/
lint: venv
	$(BIN)/ruff check hca
	$(BIN)/ruff format --check hca
	$(BIN)/mypy hca
	$(BIN)/lint-imports

## test: the unit tests and every notebook through nbval, in one pytest session on two workers
# Whole files go to a worker (--dist loadfile) in the order given (--no-loadscope-reorder): the
# longest notebooks first, the unit tests' files after them (they fill the gaps), and last the
# scorecard page and the intro, which read every chapter's results. `make unit` and
# `make notebooks` run either half alone.
TEST_ORDER := notebooks/03_hca_recovery.md notebooks/11_your_data.md \
              notebooks/06_matrix_completion.md notebooks/08_mmlu_subtasks.md \
              notebooks/05_scaling_ate.md notebooks/07_leaderboard_v1.md \
              notebooks/10_robustness.md notebooks/04_interpretation.md \
              notebooks/02_latent_pca.md notebooks/01_data.md
TEST_NOTEBOOKS := $(TEST_ORDER) $(filter-out $(TEST_ORDER),$(CHAPTERS))
nb_ipynb = $(addprefix $(NBDIR)/,$(notdir $(1:.md=.ipynb)))
test: data
	rm -rf $(NBDIR) && mkdir -p $(NBDIR)
	$(BIN)/python scripts/to_ipynb.py $(NBDIR) $(NOTEBOOKS)
	$(BIN)/python -m pytest -q -n 2 --dist loadfile --no-loadscope-reorder \
	  --nbval-lax --nbval-current-env $(call nb_ipynb,$(TEST_NOTEBOOKS)) tests \
	  $(call nb_ipynb,notebooks/09_scorecard.md book/intro.md); \
	  rc=$$?; if [ $$rc -eq 5 ]; then echo "no tests collected"; exit 1; fi; exit $$rc

unit: data
	$(BIN)/python -m pytest tests -q -n 2; rc=$$?; if [ $$rc -eq 5 ]; then echo "no tests collected"; exit 1; fi; exit $$rc

notebooks: data
	rm -rf $(NBDIR) && mkdir -p $(NBDIR)
	$(BIN)/python scripts/to_ipynb.py $(NBDIR) $(NOTEBOOKS)
	cd $(NBDIR) && ../../$(BIN)/python -m pytest --nbval-lax --nbval-current-env -p no:cacheprovider -q \
	  -n 2 --dist loadfile .

## browser-test: open every page of the built book (run `make book` first) in headless Chromium,
## offline, at 1400 px; screenshots in _build/screenshots. One page: make browser-test PAGE=03_hca
## (any pytest -k expression). Pages not yet converted are listed in tests_browser/pending.py.
browser-test: venv
	bash scripts/install_browser.sh
	$(BIN)/python -m pytest tests_browser -q -p no:cacheprovider $(if $(PAGE),-k '$(PAGE)')

## run-notebook NB=notebooks/02_latent_pca.md: execute one notebook to build/run/<name>.ipynb
## (scripts/check_rerun.sh checks it and `.venv/bin/jupyter lab`, as .ci/run does)
run-notebook: data
	@test -n "$(NB)" || { echo "usage: make run-notebook NB=notebooks/01_data.md"; exit 2; }
	@test -f "$(NB)" || { echo "run-notebook: no such notebook: $(NB)"; exit 2; }
	mkdir -p build/run
	$(BIN)/jupytext --to ipynb --execute --output build/run/$$(basename $(NB) .md).ipynb $(NB)

## lab: JupyterLab on the chapters (open a .md with "Open With > Jupytext Notebook")
.PHONY: lab
lab: venv
	$(BIN)/jupyter lab $(if $(filter 0,$(shell id -u)),--allow-root)

## bench: print the timings of the benchmark scripts
bench: data
	for b in benchmarks/bench_*.py; do echo "== $$b"; $(BIN)/python $$b || exit 1; done

clean:
	rm -rf _build build

## print-env: the thread counts above as shell exports (scripts/check_notebook.sh uses them)
print-env:
	@for v in OPENBLAS_NUM_THREADS OMP_NUM_THREADS MKL_NUM_THREADS; do \
	  printf 'export %s="%s"\n' "$$v" "$$(printenv $$v)"; done
