# The lock, the wheelhouse and the offline install (included by the Makefile; README, "Installing").

# `make lock` regenerates both locks with uv, pinned here so the output does not drift with
# the tool. uv does not read pip's configuration: the CPU build of torch comes from
# TORCH_FIND_LINKS if given, else from TORCH_INDEX, else from PyTorch's CPU index.
UV_VERSION  := 0.13.9
TOOLS       := .venv-tools
UV          := $(TOOLS)/bin/uv
LOCK_FOR    := --python-version 3.11 --python-platform x86_64-manylinux_2_28
LOCK_TORCH   = $(if $(TORCH_FIND_LINKS),--find-links $(TORCH_FIND_LINKS),--extra-index-url \
               $(or $(TORCH_INDEX),https://download.pytorch.org/whl/cpu) --index-strategy unsafe-best-match)
LOCK_EXTRAS  := workbook onnx colossalai browser dev
LOCK5_EXTRAS := workbook onnx browser

# $(call compile,top-level pins,extras,lock): uv keeps the versions already in the lock unless
# the pins or pyproject need others; then the header saying what the lock describes goes on top.
define compile
$(UV) pip compile -q pyproject.toml $(2:%=--extra %) -c $(1) $(LOCK_TORCH) $(LOCK_FOR) \
  --annotation-style line --custom-compile-command 'make lock' -o $(3)
sed 's|@PINS@|$(1)|; s|@EXTRAS@|$(2)|' constraints/lock-header.txt | cat - $(3) > $(3).tmp
mv $(3).tmp $(3)
endef

$(UV):
	test -x $(TOOLS)/bin/python || $(PYTHON) -m venv $(TOOLS)
	$(TOOLS)/bin/python -m pip install -q uv==$(UV_VERSION)

lock: $(UV)
	$(call compile,constraints/pinned.txt,$(LOCK_EXTRAS),$(LOCK))
	$(call compile,constraints/transformers5.txt,$(LOCK5_EXTRAS),$(LOCK5))

# The workshop room's folder: every wheel of the lock, pip itself, ColossalAI 0.5.0 as a wheel
# (its sdist cannot build without an index), and in sdists/ the two ColossalAI sdists whose
# source the pull request is checked against. Wheels for this machine's Python and platform.
WH               := wheelhouse
COLOSSALAI_SDISTS := colossalai==0.5.0 colossalai-nightly==2025.7.12

$(WH)/.complete: $(LOCK)
	$(PYTHON) -m pip wheel -q --no-deps $(TORCH_SOURCES) -r $(LOCK) -w $(WH)
	$(PYTHON) -m pip download -q --no-deps pip -d $(WH)
	$(PYTHON) -m pip download -q --no-deps --no-binary :all: $(COLOSSALAI_SDISTS) -d $(WH)/sdists
	$(PYTHON) -m pip wheel -q --no-deps $(WH)/sdists/colossalai-0.5.0.tar.gz -w $(WH)
	touch $@

wheelhouse: $(WH)/.complete

# A fresh venv from the wheelhouse alone (WHEELHOUSE=dir, or the one `make wheelhouse` fills):
# pip's configuration is switched off so that no index or folder but the wheelhouse is seen.
OFFLINE := .venv-offline
test-offline: $(if $(WHEELHOUSE),,$(WH)/.complete)
	rm -rf $(OFFLINE)
	env -u PIP_FIND_LINKS -u PIP_INDEX_URL -u PIP_EXTRA_INDEX_URL PIP_CONFIG_FILE=/dev/null \
	  $(MAKE) --no-print-directory colossalai VENV=$(OFFLINE) WHEELHOUSE=$(or $(WHEELHOUSE),$(WH))
	$(OFFLINE)/bin/python -m pp_demo reproduce

# The same lock installed by uv instead of pip, several times faster (README, install times).
# uv reads no pip configuration: give the torch source (TORCH_FIND_LINKS, TORCH_INDEX) or
# WHEELHOUSE. It marks the venv set up, so `make test` and the rest go on from there.
setup-uv: $(UV)
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(UV) pip install -q --python $(BIN)/python $(SOURCES) \
	  $(if $(TORCH_INDEX),--index-strategy unsafe-best-match) -r $(LOCK)
	$(UV) pip install -q --python $(BIN)/python $(SOURCES) --no-deps --no-build-isolation -e .
	$(BIN)/python -m pip check
	touch $(VENV)/.installed
