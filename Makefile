# The two commands of the quick start. Both install what they need first (scripts/setup.sh).
PY ?= python3
OUT ?= ./out

.PHONY: build-all test setup

setup:
	bash scripts/setup.sh

build-all: setup
	HF_HUB_OFFLINE=1 GX_ANALYTICS_ENABLED=false $(PY) -m benchwright.cli build all --out $(OUT)

test: setup
	HF_HUB_OFFLINE=1 HF_DATASETS_OFFLINE=1 GX_ANALYTICS_ENABLED=false $(PY) -m pytest -q -p no:cacheprovider tests
