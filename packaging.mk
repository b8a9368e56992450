# The lock, the wheelhouse and the offline install (included by the Makefile; README, "Installing").

# `make lock` regenerates the locks with uv, pinned here so the output does not drift with the
# tool. The attendee lock and the dev lock are universal: one file for CPython 3.11-3.13 on Linux
# (x86_64, aarch64), macOS (arm64, 14+) and Windows (x86_64), with environment markers where a
# platform differs; tests/repo/test_lock_targets.py resolves them for each. torch is locked by its
# release (torch==2.13.0) with its CPU build's dependencies (constraints/uv-lock.toml); which file
# is installed is decided at setup (tools/torch_source.py). The transformers 5 lock is CI's second
# leg, on Linux only, as before: the CPU build of torch from TORCH_FIND_LINKS, else TORCH_INDEX,
# else PyTorch's CPU index.
UV_VERSION  := 0.13.9
TOOLS       := .venv-tools
UV          := $(TOOLS)/bin/uv
LOCK_TORCH   = $(if $(TORCH_FIND_LINKS),--find-links $(TORCH_FIND_LINKS),--extra-index-url \
               $(or $(TORCH_INDEX),https://download.pytorch.org/whl/cpu) --index-strategy unsafe-best-match)
LOCK_EXTRAS     := workbook onnx colossalai deepspeed
LOCK_DEV_EXTRAS := dev browser
LOCK5_EXTRAS    := workbook onnx browser
UNIVERSAL       := --universal --python-version 3.11 --config-file constraints/uv-lock.toml
LINUX_311       := --python-version 3.11 --python-platform x86_64-manylinux_2_28 $(LOCK_TORCH)

# $(call compile,top-level pins,extras,lock,header,where): uv keeps the versions already in the
# lock unless the pins or pyproject need others; then the header saying what the lock describes.
define compile
$(UV) pip compile -q pyproject.toml $(2:%=--extra %) -c $(1) $(5) \
  --annotation-style line --custom-compile-command 'make lock' -o $(3)
sed 's|@PINS@|$(1)|; s|@EXTRAS@|$(2)|' $(4) | cat - $(3) > $(3).tmp
mv $(3).tmp $(3)
endef

$(UV):
	test -x $(TOOLS)/bin/python || $(PYTHON) -m venv $(TOOLS)
	$(TOOLS)/bin/python -m pip install -q uv==$(UV_VERSION)

# The dev lock is resolved under the attendee lock, so the packages both hold agree.
lock: $(UV)
	$(call compile,constraints/pinned.txt,$(LOCK_EXTRAS),$(LOCK),constraints/lock-header.txt,$(UNIVERSAL))
	$(call compile,$(LOCK),$(LOCK_DEV_EXTRAS),$(LOCK_DEV),constraints/dev-lock-header.txt,$(UNIVERSAL))
	$(call compile,constraints/transformers5.txt,$(LOCK5_EXTRAS),$(LOCK5),constraints/lock5-header.txt,$(LINUX_311))

# The workshop room's folder: every wheel of the lock, pip itself, uv (so `make setup` installs
# with uv offline too), ColossalAI 0.5.0 as a wheel (its sdist cannot build without an index),
# and in sdists/ the two ColossalAI sdists whose source the pull request is checked against.
# Wheels for this machine's Python and platform.
WH               := wheelhouse
COLOSSALAI_SDISTS := colossalai==0.5.0 colossalai-nightly==2025.7.12

$(WH)/.complete: $(LOCK)
	$(PYTHON) -m pip wheel -q --no-deps $(TORCH_SOURCES) \
	  "torch==$$(sed -n 's/^torch==\([^ ;#]*\).*/\1/p' $(LOCK))$(if $(filter Linux,$(shell uname -s)),+cpu)" -w $(WH)
	$(PYTHON) -m pip wheel -q --no-deps $(TORCH_SOURCES) -r $(LOCK) -w $(WH)
	$(PYTHON) -m pip download -q --no-deps pip uv==$(UV_VERSION) -d $(WH)
	$(PYTHON) -m pip download -q --no-deps --no-binary :all: $(COLOSSALAI_SDISTS) -d $(WH)/sdists
	$(PYTHON) -m pip wheel -q --no-deps $(WH)/sdists/colossalai-0.5.0.tar.gz -w $(WH)
	touch $@

wheelhouse: $(WH)/.complete

# A fresh venv from the wheelhouse alone (WHEELHOUSE=dir, or the one `make wheelhouse` fills),
# with each installer: pip (then ColossalAI and the reproduction) and uv (the install, its pip
# check; a minute more, uv's tools venv from the wheelhouse too). pip's configuration is switched
# off so that no index or folder but the wheelhouse is seen.
OFFLINE    := .venv-offline
OFFLINE_UV := .venv-offline-uv
NO_PIP_CONFIG := env -u PIP_FIND_LINKS -u PIP_INDEX_URL -u PIP_EXTRA_INDEX_URL PIP_CONFIG_FILE=/dev/null
test-offline: $(if $(WHEELHOUSE),,$(WH)/.complete)
	rm -rf $(OFFLINE) $(OFFLINE_UV) $(OFFLINE_UV)-tools
	$(NO_PIP_CONFIG) $(MAKE) --no-print-directory colossalai VENV=$(OFFLINE) INSTALLER=pip \
	  WHEELHOUSE=$(or $(WHEELHOUSE),$(WH))
	$(OFFLINE)/bin/python -m pp_demo reproduce
	$(NO_PIP_CONFIG) $(PYTHON) -m tools.install_env --venv $(OFFLINE_UV) --installer uv --tools $(OFFLINE_UV)-tools \
	  --wheelhouse $(or $(WHEELHOUSE),$(WH)) --lock $(LOCK)
	$(OFFLINE_UV)/bin/python -m pip check

# `make setup` uses uv already where it can; these two say which installer, for the figures in
# docs/install.md and for a machine where one of them misbehaves.
setup-uv:
	$(MAKE) --no-print-directory setup INSTALLER=uv

setup-pip:
	$(MAKE) --no-print-directory setup INSTALLER=pip

# A fresh laptop, simulated on this machine (docs/install.md): a fresh clone whose pip sees no
# configuration, PyTorch's CPU index stood in for by a simple index on 127.0.0.1 holding the
# torch wheel from this machine's pip find-links folder; `make reproduce` must pass with it as
# TORCH_INDEX, and `make setup` with no torch source must fail within 60 s in one line.
# Installs the whole lock from the public index: run by .ci/run, not by `make test`.
test-fresh-laptop:
	$(PYTHON) tools/fresh_laptop.py $(if $(TORCH_INDEX),--download-from $(TORCH_INDEX))
