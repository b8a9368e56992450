# Two commands do everything on a fresh machine with Python >= 3.10:
#   make reproduce   set up .venv (pinned), then run the main job
#   make test        set up .venv (pinned), then every unit test and every notebook under strict nbval
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
VENV5  := .venv-transformers5
NBVAL  := --nbval --nbval-current-env --nbval-sanitize-with notebooks/sanitize.cfg --nbval-cell-timeout 120

# Where the packages come from (README, "Installing"). The locks pin torch's CPU build
# (2.13.0+cpu), which PyPI does not carry: on Linux give PyTorch's CPU index, e.g.
#   make setup TORCH_INDEX=https://download.pytorch.org/whl/cpu
# or a folder holding the wheel (TORCH_FIND_LINKS=dir). WHEELHOUSE=dir installs from that
# folder alone (`make wheelhouse` fills one), with no index at all.
TORCH_INDEX      ?=
TORCH_FIND_LINKS ?=
WHEELHOUSE       ?=
TORCH_SOURCES := $(if $(TORCH_INDEX),--extra-index-url $(TORCH_INDEX)) $(if $(TORCH_FIND_LINKS),--find-links $(TORCH_FIND_LINKS))
SOURCES := $(if $(WHEELHOUSE),--no-index --find-links $(WHEELHOUSE),$(TORCH_SOURCES))
LOCK    := constraints/pinned.lock.txt
LOCK5   := constraints/transformers5.lock.txt

.PHONY: setup colossalai reproduce test test-unit test-notebooks test-transformers5 notebooks lab clean \
        lock wheelhouse test-offline setup-uv

# Exactly the lock (every package, the CPU build of torch), then pp_demo itself without
# dependencies; `pip check` proves the lock is whole.
$(VENV)/.installed: pyproject.toml $(LOCK)
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q $(SOURCES) --upgrade pip
	$(BIN)/python -m pip install -q $(SOURCES) -r $(LOCK)
	$(BIN)/python -m pip install -q $(SOURCES) --no-deps --no-build-isolation -e .
	$(BIN)/python -m pip check
	touch $@

setup: $(VENV)/.installed

# ColossalAI 0.5.0 itself, for notebook 06 and tests/test_colossalai.py. Its requirements pin
# torch <= 2.5.1, against the locked torch, so it goes in with --no-deps; what its import needs
# (the `colossalai` extra) is in the lock already.
$(VENV)/.colossalai: $(VENV)/.installed
	$(BIN)/python -m pip install -q $(SOURCES) --no-deps -c constraints/pinned.txt colossalai
	touch $@

colossalai: $(VENV)/.colossalai

reproduce: setup
	$(BIN)/python -m pp_demo reproduce

test: test-unit test-notebooks

test-unit: setup colossalai
	$(BIN)/python -m pytest tests

test-notebooks: setup colossalai
	$(BIN)/python -m pytest $(NBVAL) notebooks

# Regenerate every stored notebook output in a fresh kernel, top to bottom.
notebooks: setup colossalai
	cd notebooks && for nb in [0-9]*.ipynb; do \
	  echo "executing $$nb"; \
	  ../$(BIN)/jupyter nbconvert --to notebook --execute --inplace \
	    --ExecutePreprocessor.kernel_name=python3 --ExecutePreprocessor.timeout=300 \
	    --ExecutePreprocessor.record_timing=False "$$nb" || exit 1; \
	done

$(VENV5)/.installed: pyproject.toml $(LOCK5)
	test -x $(VENV5)/bin/python || $(PYTHON) -m venv $(VENV5)
	$(VENV5)/bin/python -m pip install -q $(SOURCES) --upgrade pip
	$(VENV5)/bin/python -m pip install -q $(SOURCES) -r $(LOCK5)
	$(VENV5)/bin/python -m pip install -q $(SOURCES) --no-deps --no-build-isolation -e .
	$(VENV5)/bin/python -m pip check
	touch $@

# The unit tests (not the notebooks, whose stored outputs are made on the pinned stack)
# on transformers 5.x. Not tests/test_colossalai.py: ColossalAI 0.5.0 requires transformers
# 4.51.3, so it is installed (and its tests run) on the pinned leg only.
test-transformers5: $(VENV5)/.installed
	$(VENV5)/bin/python -m pytest tests --ignore tests/test_colossalai.py

lab: setup
	$(BIN)/jupyter lab notebooks

clean:
	rm -rf $(VENV) $(VENV5) *.egg-info

include packaging.mk
