# Two commands do everything on a fresh machine with Python 3.11, 3.12 or 3.13 (docs/install.md):
#   make reproduce   set up .venv (pinned), then run the main job (it prints the bug: an attendee's
#                    set-up is `make setup` and `make doctor`, which print no verdict)
#   make test        set up .venv (pinned), then the unit tests (not the slow ones: make test-slow) and every notebook under strict nbval
# Every path below is relative to this Makefile's folder: run from another (`make -f path/Makefile`),
# make stops in one line that says how to run it there.
HERE := $(realpath $(dir $(lastword $(MAKEFILE_LIST))))
ifneq ($(HERE),$(realpath $(CURDIR)))
$(error run make in the checkout: make -C $(HERE) $(or $(MAKECMDGOALS),reproduce) (its paths are relative to it))
endif
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
VENV5  := .venv-transformers5
NBVAL  := --nbval --nbval-current-env --nbval-sanitize-with notebooks/sanitize.cfg --nbval-cell-timeout 120
# The tests run in one process per core, up to 8 (pytest-xdist): most of their time is processes
# starting (ranks, the checker's child, a notebook's kernel), each on one core. A whole file goes to
# one process (--dist loadfile): a notebook's cells run in order in one kernel, and a file's
# module fixtures are built once. PYTEST_PROCESSES=0 runs them in this process (a debugger, -x).
PYTEST_PROCESSES ?= auto
PARALLEL := -n $(PYTEST_PROCESSES) --maxprocesses 8 --dist loadfile

# Where the packages come from (docs/install.md). torch goes in first, on its own
# (tools/torch_source.py): on Linux PyTorch's CPU build, from pip's sources if they have it, else
# from PyTorch's CPU index (probed once); never PyPI's multi-GB CUDA build in its place. On macOS
# and Windows PyPI's build. Name a source yourself with TORCH_INDEX=url or TORCH_FIND_LINKS=dir;
# WHEELHOUSE=dir installs from that folder alone (`make wheelhouse` fills one), with no index.
# On a GPU box TORCH=cu128 takes the CUDA build from PyTorch's CUDA index: TORCH is cpu or one of the
# CUDA builds PyTorch publishes for the locked torch (tools/torch_source.py, TORCH_BUILDS).
# INSTALLER=uv|pip|auto (auto: uv, or pip where uv cannot be installed). PYTORCH_WHEELS: where
# PyTorch's indexes are (a mirror of https://download.pytorch.org/whl).
TORCH_INDEX      ?=
TORCH_FIND_LINKS ?=
WHEELHOUSE       ?=
TORCH            ?= cpu
# `make setup TORCH=` would reach tools/install_env.py as `--torch` with no value, where argparse
# names its own flag, not this variable: said here, in one line.
ifeq ($(strip $(TORCH)),)
$(error TORCH is empty: leave it out for the CPU build, or name a build, TORCH=cpu or a CUDA one such as TORCH=cu128)
endif
INSTALLER        ?= auto
PYTORCH_WHEELS   ?= https://download.pytorch.org/whl
TORCH_SOURCES := $(if $(TORCH_INDEX),--extra-index-url $(TORCH_INDEX)) $(if $(TORCH_FIND_LINKS),--find-links $(TORCH_FIND_LINKS))
SOURCES := $(if $(WHEELHOUSE),--no-index --find-links $(WHEELHOUSE),$(TORCH_SOURCES))
LOCK    := constraints/pinned.lock.txt
LOCK_DEV := constraints/dev.lock.txt
LOCK5   := constraints/transformers5.lock.txt
INSTALL = $(PYTHON) -m tools.install_env --venv $(VENV) --installer $(INSTALLER) --torch $(TORCH) \
          --pytorch-wheels $(PYTORCH_WHEELS) \
          $(if $(TORCH_INDEX),--torch-index $(TORCH_INDEX)) $(if $(TORCH_FIND_LINKS),--torch-find-links $(TORCH_FIND_LINKS)) \
          $(if $(WHEELHOUSE),--wheelhouse $(WHEELHOUSE))
# pip check: the lock is whole. ColossalAI, once installed (--no-deps), lists requirements it
# does not get on purpose; only its own lines are forgiven.
PIP_CHECK = $(BIN)/python -m pip check > $(VENV)/pip-check.txt || ! grep -v '^colossalai ' $(VENV)/pip-check.txt

.PHONY: setup setup-dev colossalai deepspeed reproduce test test-unit test-slow test-notebooks test-transformers5 notebooks lab doctor clean \
        test-torch test-torch-range ci-installs \
        lock wheelhouse test-offline test-fresh-laptop setup-uv setup-pip lint typecheck hooks site test-browser
.PHONY: episodes guide time-core

# What an attendee needs (the notebooks, the tests, ONNX, ColossalAI's import chain): exactly the
# lock, torch first, then pp_demo itself without dependencies (tools/install_env.py).
$(VENV)/.installed: pyproject.toml $(LOCK) tools/install_env.py tools/torch_source.py
	@$(INSTALL) --lock $(LOCK)
	$(PIP_CHECK)
	touch $@

# An existing venv is reused only for the torch build it holds: another TORCH stops here, in
# one line (tools/install_env.py), instead of silently keeping the build installed first.
setup: $(VENV)/.installed
	@$(PYTHON) -m tools.install_env --venv $(VENV) --torch $(TORCH) $(if $(TORCH_INDEX),--torch-index $(TORCH_INDEX)) --check-build

# What a contributor and CI add: ruff, mypy, pre-commit (`make lint`, `make typecheck`, `make
# hooks`) and Playwright (`make test-browser`), from their own lock on top of the first.
$(VENV)/.dev: $(VENV)/.installed $(LOCK_DEV)
	@$(INSTALL) --no-torch --no-project --lock $(LOCK_DEV)
	$(PIP_CHECK)
	touch $@

setup-dev: $(VENV)/.dev

# ColossalAI 0.5.0 itself, for notebook 06 and tests/colossalai/ (`make test` installs it; `make lab`
# does not). Linux and macOS only: its sdist's setup.py refuses win32 (WSL works). Its requirements pin
# torch <= 2.5.1, against the locked torch, so it goes in with --no-deps; what its import needs
# (the `colossalai` extra) is in the lock already.
$(VENV)/.colossalai: $(VENV)/.installed
	$(BIN)/python -m pip install -q $(SOURCES) --no-deps -c constraints/pinned.txt colossalai
	touch $@

colossalai: $(VENV)/.colossalai

# DeepSpeed 0.19.8, for notebook 11 and tests/deepspeed/ (`make test` installs it; `make setup` and
# `make lab` do not). An sdist only (built here, seconds), so outside the lock; what its import needs
# (the `deepspeed` extra) is in the lock already. It goes in beside the venv's packages, in
# $(VENV)/deepspeed/, which only DeepSpeed's ranks put on their path: wherever DeepSpeed is importable,
# transformers imports it at every model import (about a second per process, and a warning on stderr).
# Linux and macOS only.
$(VENV)/.deepspeed: $(VENV)/.installed
	$(BIN)/python -m pip install -q $(SOURCES) --no-deps --target $(VENV)/deepspeed -c constraints/pinned.txt deepspeed
	touch $@

deepspeed: $(VENV)/.deepspeed

reproduce: setup
	$(BIN)/python -m pp_demo reproduce

# One pytest run over both, so the processes share the work to the end.
test: setup colossalai deepspeed
	$(BIN)/python -m pytest $(PARALLEL) -m "not slow" $(NBVAL) tests notebooks

test-unit: setup colossalai deepspeed
	$(BIN)/python -m pytest $(PARALLEL) tests -m "not slow"

# The slow tests, run by CI after `make test`: the wheel installed outside the checkout, the locks
# resolved against the package index for every platform, Ctrl-C landing inside a run, a fresh
# verify-pr run against the committed record, a hung rank waited out, ColossalAI's engine on two
# ranks, a tiny benchmark run end to end. Each takes over 20 s on 2
# cores (the marker's meaning), so `make test` leaves them out. The locks' resolution for every
# platform mostly waits on the package index (over a minute, a fifth of it CPU), so it runs beside
# the others, and its report follows theirs.
LOCKS_TEST := tests/repo/test_lock_targets.py
test-slow: setup colossalai deepspeed
	$(BIN)/python -m pytest -q $(LOCKS_TEST) -m slow > $(VENV)/test-locks.log 2>&1 & locks=$$!; \
	$(BIN)/python -m pytest $(PARALLEL) tests -m slow --ignore=$(LOCKS_TEST); status=$$?; \
	wait $$locks; locks_status=$$?; cat $(VENV)/test-locks.log; \
	[ $$status -eq 0 ] && [ $$locks_status -eq 0 ]

test-notebooks: setup colossalai deepspeed
	$(BIN)/python -m pytest $(PARALLEL) $(NBVAL) notebooks

# matplotlib's config and font cache: this venv's own folder (as `make lab` and the tests' conftest
# use, pp_demo/workshop/lab.py), not the per-user ~/.cache/matplotlib that other work on the machine
# may rewrite without matplotlib's own fonts (findfont warnings on a notebook's stderr fail nbval).
MPLCONFIG := $(HERE)/$(VENV)/share/pp_demo/matplotlib
test test-unit test-slow test-notebooks notebooks: export MPLCONFIGDIR ?= $(MPLCONFIG)

# Regenerate every stored notebook output in a fresh kernel, top to bottom.
notebooks: setup colossalai deepspeed
	cd notebooks && for nb in [0-9]*.ipynb; do \
	  echo "executing $$nb"; \
	  ../$(BIN)/jupyter nbconvert --to notebook --execute --inplace \
	    --ExecutePreprocessor.kernel_name=python3 --ExecutePreprocessor.timeout=300 \
	    --ExecutePreprocessor.record_timing=False "$$nb" || exit 1; \
	done

# Installed as `make setup` installs .venv (tools/install_env.py: uv where it can be had, torch
# first from the same sources), into its own venv: INSTALL reads VENV when the recipe runs.
$(VENV5)/.installed: VENV := $(VENV5)
$(VENV5)/.installed: pyproject.toml $(LOCK5) tools/install_env.py tools/torch_source.py
	@$(INSTALL) --lock $(LOCK5)
	$(VENV5)/bin/python -m pip check
	touch $@

# The unit tests (not the notebooks, whose stored outputs are made on the pinned stack)
# on transformers 5.x. Not those marked same_on_every_stack (tests/repo/, the checker's usage
# errors and stops: nothing in them differs by version; `make test` runs them), nor the tests
# marked slow (the wheel, Ctrl-C landing inside a run: the machinery around the package, timed
# to 4.51.3's imports, tested on the pinned leg), nor those marked
# colossalai (tests/colossalai/): ColossalAI 0.5.0 requires transformers
# 4.51.3, so it is installed (and its tests run) on the pinned leg only.
test-transformers5: $(VENV5)/.installed
	$(VENV5)/bin/python -m pytest $(PARALLEL) tests -m "not colossalai and not slow and not same_on_every_stack"

# The tested torch range (pyproject.toml, README, the doctor): its two ends, each as a GPU box or a
# hosted notebook holds it, PyPI's build installed first (no cap a pip configuration puts on torch
# applies), then the workbook around it by `--keep-torch`, the way docs/gpu.md tells a GPU user: the doctor, the reproduction on two ranks, the core, ranks and verify tests (but those marked same_on_every_stack: `make test` ran them, and the checker's answers to bad callables), and
# notebooks 02, 03 and 10 (two-rank training, the shape trap) under strict nbval.
TORCH_LOWEST := 2.11.0
TORCH_NEWEST := 2.15.0
TORCH_VERSION ?= $(TORCH_NEWEST)
VENVT := .venv-torch-$(TORCH_VERSION)

# .venv-torch-VERSION for any torch release, so both ends can be made at once (make -j2 ci-installs)
.venv-torch-%/.installed: pyproject.toml $(LOCK) tools/install_env.py
	$(PYTHON) -m tools.install_env --venv $(@D) --installer $(INSTALLER) --keep-torch \
	  --pypi-torch $* --lock $(LOCK)
	touch $@

# The range runs what leans on torch's own APIs: the stages' forwards, pipelining on ranks, the
# tracer and accelerate, the checker judging them (test_judge, test_frameworks). The checker's
# answers to broken callables and bad input (a third of the leg's time) run on the pinned torch
# (`make test`) and on transformers 5.x, not twice more here.
TORCH_RANGE_LEAVES_OUT := --ignore=tests/verify/checker/test_inputs.py --ignore=tests/verify/checker/test_guard.py \
                          --ignore=tests/verify/checker/test_hostile_forwards.py

test-torch: $(VENVT)/.installed
	$(VENVT)/bin/python -m pp_demo doctor
	$(VENVT)/bin/python -m pp_demo reproduce --distributed
	$(VENVT)/bin/python -m pytest $(PARALLEL) $(NBVAL) tests/core tests/ranks tests/verify \
	  $(TORCH_RANGE_LEAVES_OUT) notebooks/02_*.ipynb notebooks/03_*.ipynb notebooks/10_*.ipynb \
	  -m "not colossalai and not slow and not same_on_every_stack"

test-torch-range:
	$(MAKE) test-torch TORCH_VERSION=$(TORCH_LOWEST)
	$(MAKE) test-torch TORCH_VERSION=$(TORCH_NEWEST)

# What CI's later legs install, made in one go: the transformers 5.x venv, both ends of the torch
# range, the offline leg's wheelhouse. .ci/run makes them (make -j2) while lint and mypy run, before
# the tests; each leg then finds its part made.
ci-installs: $(VENV5)/.installed .venv-torch-$(TORCH_LOWEST)/.installed .venv-torch-$(TORCH_NEWEST)/.installed \
             $(if $(WHEELHOUSE),,wheelhouse)

# JupyterLab on the checkout, opening at notebooks/ (so the notebooks' links to docs/ resolve). Not ColossalAI: it is no attendee's homework (native Windows cannot
# install it), so only notebook 06's cells that need it fail without it, in one line each, and their
# stored outputs stay readable (`make colossalai` first to run them). As root it adds --allow-root,
# without a display --no-browser, and it prints the URL with its token. Its kernels show the
# package's errors in one line (pp_demo.workshop.cell_errors). More flags: LAB_ARGS=...
lab: setup
	$(BIN)/python -m pp_demo.workshop.lab $(LAB_ARGS)

# The preflight: one line per check, exit 1 on a FAIL; it runs the reproduction and says only that it
# ran as it should, never which rule goes wrong (notebook 01's to show). Runs before `make setup` too (it then
# says what is missing), with the venv's Python once there is one.
doctor:
	$(if $(wildcard $(BIN)/python),$(BIN)/python,$(PYTHON)) -m pp_demo doctor

# Lint, format and type checks, with the tools of the `dev` extra (`make setup-dev`; CONTRIBUTING.md).
LINTED := pp_demo tests notebooks tools

lint: setup-dev
	$(BIN)/ruff check $(LINTED)
	$(BIN)/ruff format --check $(LINTED)
	$(BIN)/python tools/check_notebooks.py notebooks/*.ipynb

typecheck: setup-dev
	$(BIN)/mypy pp_demo tools

# The pre-commit hooks (.pre-commit-config.yaml) call the tools above from $(BIN).
hooks: setup-dev
	$(BIN)/pre-commit install

# The read-only site: every notebook as HTML from its stored outputs (nothing runs), no request
# to another host, and its own glossary page: no link leaves site/, so it can be shared alone. It is
# the attendees': no answer key (the facilitator guide stays in docs/). Open site/index.html.
site: setup
	$(BIN)/python tools/build_site.py site

# The site and notebook 01 in a real headless browser: Debian's chromium driven by Playwright
# (the `browser` extra, in the dev lock; no `playwright install`). As root a missing chromium is
# installed with apt-get.
test-browser: setup-dev colossalai
	@command -v chromium >/dev/null || { [ "$$(id -u)" = 0 ] && apt-get update -q && apt-get install -y -q chromium; } \
	  || { echo "make test-browser: chromium is missing; install it as root: apt-get install chromium" >&2; exit 1; }
	PP_DEMO_BROWSER=1 $(BIN)/python -m pytest tests/browser

# Episode metadata (tools/episodes.py): `make episodes` re-renders each notebook's header and
# key-point cells from its metadata (markdown only: nothing is re-executed); `make guide` writes
# docs/facilitator.md and the README's minutes; `make time-core` times the core notebooks, each in
# a fresh kernel, into results/notebook_times.json (then `make guide` again).
episodes: setup
	$(BIN)/python -m tools.episodes apply

guide: setup
	$(BIN)/python -m tools.guide

time-core: setup
	$(BIN)/python -m tools.time_core

clean:
	rm -rf $(VENV) $(VENV5) .venv-torch-* *.egg-info

# The pull request's claims judged on ColossalAI's own sdists (README, "The pull request, verified")
.PHONY: verify-pr
verify-pr: setup colossalai
	$(BIN)/python -m pp_demo verify-pr --out results/verify_pr.json

# Regenerate the committed results (docs/cli.md, "Regenerating the committed results"): a plain
# run of these commands writes under results/tmp/ and keeps them. Minutes each on 2 cores.
.PHONY: results
results: setup colossalai
	$(BIN)/python -m pp_demo train-study --out results
	$(MAKE) bench-results
	$(BIN)/python -m pp_demo verify-pr --out results/verify_pr.json

# The committed benchmark and what reads it: the run (it waits for a quiet machine, and one that
# started busier or came out noisier than 5 % does not replace the file: FORCE=1 passes --force),
# the block of docs/results.md, and notebook 10, which prints the file's rows. About 7 minutes on a
# quiet 2-core machine.
.PHONY: bench-results
bench-results: setup colossalai
	$(BIN)/python -m pp_demo bench --out results $(if $(FORCE),--force)
	$(BIN)/python -m tools.bench_docs
	cd notebooks && ../$(BIN)/jupyter nbconvert --to notebook --execute --inplace \
	  --ExecutePreprocessor.kernel_name=python3 --ExecutePreprocessor.timeout=300 \
	  --ExecutePreprocessor.record_timing=False 10_schedules.ipynb

# Beside this Makefile, named from its folder (HERE), not from the one make runs in.
include $(HERE)/packaging.mk

# Every GPU path once, on a GPU box (docs/gpu.md): doctor, the reproduction on cuda and on NCCL,
# the families, the ColossalAI engine in bf16 and fp16, the notebooks under strict nbval; writes
# results/gpu_check.json. It installs nothing, so it does not depend on setup: it runs in the
# venv if there is one, else with $(PYTHON). `make gpu-check --dry-run` (-n) lists the steps
# (the `+` runs the line under -n too, and -n becomes the check's own --dry-run).
.PHONY: gpu-check
gpu-check:
	+$(if $(wildcard $(BIN)/python),$(BIN)/python,$(PYTHON)) -m pp_demo gpu-check \
	  $(if $(findstring n,$(firstword -$(MAKEFLAGS))),--dry-run)
