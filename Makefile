# The two commands of the README:
#   make start   install everything, start quilld on regtest with an emulated device
#   make test    install what the tests need, run the whole suite
PY      ?= python3
VENV    := .venv
BIN     := $(VENV)/bin
STAMP   := $(VENV)/.installed

.PHONY: start test bench clean

$(BIN)/python:
	$(PY) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip

$(STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install -q -e '.[test,bench]'
	touch $(STAMP)

start: $(STAMP)
	$(BIN)/quilld -regtest -device=emulator -printtoconsole

test: $(STAMP)
	$(BIN)/python tests/run_suite.py

bench: $(STAMP)
	$(BIN)/python tests/bench/run_all.py

clean:
	rm -rf $(VENV) *.egg-info
