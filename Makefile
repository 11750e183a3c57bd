# The two commands of the README:
#   make start   install everything, start quilld on regtest with an emulated device
#   make test    install what the tests need, run the whole suite
PY      ?= python3
VENV    := .venv
BIN     := $(VENV)/bin
STAMP   := $(VENV)/.installed

.PHONY: start test lint bench screens screens-accept clean boards-check deploy system-deps mcu-toolchain browser

$(BIN)/python:
	$(PY) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip

# The modules mypyc compiles (quill.compiled): an edit compiles them again; until then quill
# runs all of them from their .py files.
COMPILED_SOURCES := setup.py host/quill/compiled.py $(shell sed -n 's/^    "\(quill\.[a-z_.]*\)",$$/\1/p' \
	host/quill/compiled.py | tr . / | sed 's|^|host/|; s|$$|.py|')

$(STAMP): pyproject.toml $(COMPILED_SOURCES) | $(BIN)/python
	$(BIN)/python -m pip install -q -e '.[test,bench]'
	@$(BIN)/python -c 'import quill.compiled as c; print(c.describe())'
	# the bytecode a wheel's install writes: without it (an editable install under
	# PYTHONDONTWRITEBYTECODE=1) quilld compiles every module at every start
	$(BIN)/python -m compileall -q host/quill firmware/quillfw
	touch $(STAMP)

start: $(STAMP)
	$(BIN)/quilld -regtest -device=emulator -printtoconsole

# Lint first: a red lint fails the suite before any test runs.
test: lint system-deps mcu-toolchain browser
	$(BIN)/python -m tests.run_suite

# System libraries the tests' toolchains need: the ZMQ build of bitcoind (tests/follow) links
# libzmq.so.5. Installed with apt-get when this runs as root; otherwise that test skips locally.
# PostgreSQL's server (initdb, pg_ctl) for the wallet suite's second pass on -store=postgresql://
# (tests/kit/postgres.py): Debian's postgresql package, when no initdb is found.
system-deps:
	@ldconfig -p | grep -q 'libzmq\.so\.5' || { [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null && \
	  { apt-get install -y -q libzmq5 >/dev/null 2>&1 || { apt-get update -q >/dev/null && \
	    apt-get install -y -q libzmq5 >/dev/null; }; }; } || echo "libzmq5 is not installed"
	@{ command -v initdb >/dev/null || ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; } || \
	  { [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null && \
	  { DEBIAN_FRONTEND=noninteractive apt-get install -y -q postgresql >/dev/null 2>&1 || \
	    { apt-get update -q >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -q postgresql >/dev/null; }; }; } || \
	  echo "note: postgresql missing and not root: the wallet tests' PostgreSQL pass will skip"

# Specter Desktop's browser test (tests/clients/test_specter_browser.py) drives Debian's Chromium,
# headless: installed when missing and this is root (CI); otherwise that test skips locally.
BROWSER_PACKAGES := chromium chromium-driver
browser:
	@{ command -v chromium >/dev/null && command -v chromedriver >/dev/null; } || { [ "$$(id -u)" = 0 ] && \
	  command -v apt-get >/dev/null && { apt-get install -y -q $(BROWSER_PACKAGES) >/dev/null 2>&1 || \
	  { apt-get update -q >/dev/null && apt-get install -y -q $(BROWSER_PACKAGES) >/dev/null; }; }; } || \
	  echo "note: $(BROWSER_PACKAGES) missing and not root: Specter's browser test will skip"

# The Cortex-M targets (quill.emulator.qemu) need Debian's ARM toolchain and QEMU:
# installed here when missing and this is root (CI); otherwise their tests skip
# locally with the reason, and fail in CI (QUILL_REQUIRE_TOOLCHAINS).
MCU_PACKAGES := gcc-arm-none-eabi libnewlib-arm-none-eabi qemu-system-arm
mcu-toolchain:
	@if ! command -v arm-none-eabi-gcc >/dev/null || ! command -v qemu-system-arm >/dev/null \
	    || ! test -f /usr/lib/arm-none-eabi/include/stdlib.h; then \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	    echo "installing $(MCU_PACKAGES)"; \
	    apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q $(MCU_PACKAGES); \
	  else \
	    echo "note: $(MCU_PACKAGES) missing and not root: the Cortex-M tests will skip"; \
	  fi; \
	fi

# ruff, mypy and the dead-code check (vulture), configured in pyproject.toml
lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/mypy
	$(BIN)/vulture

# the screen gallery (issue 26): build/screens/index.html; fails on a screen wider than its
# panel or one that differs from tests/ui/fixtures/screens.json (screens-accept: an intended change)
screens: $(STAMP)
	$(BIN)/python -m quill.emulator.gallery --out build/screens --check tests/ui/fixtures/screens.json

screens-accept: $(STAMP)
	$(BIN)/python -m quill.emulator.gallery --out build/screens --check tests/ui/fixtures/screens.json --accept

bench: $(STAMP)
	$(BIN)/python -m tests.bench.run_all

# Boards (boards/README.md): size check for every board; deploy to a connected one,
#   make deploy BOARD=rpi_pico [PORT=/dev/ttyACM0]
BOARD ?=
PORT  ?= auto
boards-check: $(STAMP)
	$(BIN)/python -m boards.build check

deploy: $(STAMP)
	@test -n "$(BOARD)" || { echo "usage: make deploy BOARD=rpi_pico|esp32_s3|pyboard [PORT=...]"; exit 2; }
	$(BIN)/python -m boards.build deploy --board $(BOARD) --port $(PORT)

clean:
	rm -rf $(VENV) *.egg-info
