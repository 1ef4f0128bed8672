# Each target creates .venv when it is missing and installs the package into it,
# so one command is enough on a fresh clone.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: test soak tour bench clean

$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[test]'
	touch $(STAMP)

# one pytest per core, the test files dealt out by their recorded times
# (tests/shards.py); JOBS=1 runs a single pytest
test: $(STAMP)
	$(PY) tests/shards.py $(if $(JOBS),--jobs $(JOBS))

# randomized (not derandomized) property tests, SOAK_EXAMPLES per property:
# at least twenty times the CI budget of 300; a failure prints its example
# and the blob that reproduces it
SOAK_EXAMPLES ?= 6000
soak: $(STAMP)
	HYPOTHESIS_PROFILE=soak SOAK_EXAMPLES=$(SOAK_EXAMPLES) $(PY) -m pytest tests/property \
		--hypothesis-show-statistics -p no:cacheprovider

tour: $(STAMP)
	$(PY) -m tirfun tour

bench: $(STAMP)
	$(PY) -m tirfun bench

clean:
	rm -rf $(VENV) .pytest_cache .hypothesis
