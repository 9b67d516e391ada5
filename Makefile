# The two commands of the quick start. Both install what they need first (scripts/setup.sh).
# They use a project virtual environment, .venv, unless one is already active: a stock Debian or
# Ubuntu python3 refuses pip installs into itself (PEP 668, "externally-managed-environment").
ifdef VIRTUAL_ENV
PY ?= $(VIRTUAL_ENV)/bin/python
else
PY ?= .venv/bin/python
endif
OUT ?= ./out
export PY
ENV = HF_HUB_OFFLINE=1 HF_DATASETS_OFFLINE=1 GX_ANALYTICS_ENABLED=false

.PHONY: build-all test setup

setup:
	bash scripts/setup.sh

build-all: setup
	$(ENV) $(PY) -m benchwright.cli build all --out $(OUT)

# -n auto: a worker per core (pytest-xdist); --dist loadfile: a test file runs in one worker, so its
# module fixtures are made once (the builds several files share are made once per run: tests/quality_builds.py).
test: setup
	$(ENV) $(PY) -m pytest -q -p no:cacheprovider --durations=15 -n auto --dist loadfile tests
