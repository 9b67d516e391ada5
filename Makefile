# make setup       installs what building needs (scripts/setup.sh build): Debian packages, then benchwright
#                  with torch into .venv, at the versions in constraints.txt
# make build-all   setup, then builds every dataset from its embedded default into ./out
# make test        installs what the tests need besides (scripts/setup.sh test), then runs them
# make constraints rewrites constraints.txt from the installed environment (after a dependency changed)
# They use a project virtual environment, .venv, unless one is already active: a stock Debian or
# Ubuntu python3 refuses pip installs into itself (PEP 668, "externally-managed-environment").
ifdef VIRTUAL_ENV
PY ?= $(VIRTUAL_ENV)/bin/python
else
PY ?= .venv/bin/python
endif
OUT ?= ./out
# empty (make setup CONSTRAINTS=): pip resolves by itself (a Python other than constraints.txt's 3.11)
CONSTRAINTS ?= constraints.txt
export PY CONSTRAINTS
ENV = HF_HUB_OFFLINE=1 HF_DATASETS_OFFLINE=1 GX_ANALYTICS_ENABLED=false

.PHONY: build-all test setup setup-test constraints

setup:
	bash scripts/setup.sh build

setup-test:
	bash scripts/setup.sh test

build-all: setup
	$(ENV) $(PY) -m benchwright.cli build all --out $(OUT)

# A pytest-xdist worker per core and one more: many tests wait (LibreOffice, a cluster, a server, a subprocess),
# and with only a worker per core the 2 cores were busy 138% of the time, not 185% (docs/SCALING.md, "Test time");
# --dist loadfile: a test file runs in one worker, so its module fixtures are made once (the builds several files
# share are made once per run: tests/quality_builds.py); --no-loadscope-reorder: files are handed out slowest
# first (tests/conftest.py), not by number of tests.
TEST_WORKERS ?= $(shell echo $$(( $$(nproc) + 1 )))
test: setup-test
	$(ENV) $(PY) -m pytest -q -p no:cacheprovider --durations=15 -n $(TEST_WORKERS) --dist loadfile --no-loadscope-reorder tests

constraints:
	$(PY) scripts/constraints.py
