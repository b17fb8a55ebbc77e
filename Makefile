# `make demo` and `make test` do all the set-up on a fresh machine: they create .venv and install into it.
PYTHON ?= python3.11
VENV := .venv
BIN := $(VENV)/bin
DEMO_DATA := .agrag/demo
EXAMPLES := examples/acme_notes

# agrag runs offline and sends no telemetry; Prefect's local server needs time to start on a small machine.
export HAYSTACK_TELEMETRY_ENABLED := False
export HF_HUB_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1
export DO_NOT_TRACK := 1
export PREFECT_SERVER_ANALYTICS_ENABLED := false
export PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS := 90

# The strict editable install links each file into build/; a new or renamed file needs a relink.
SOURCES := $(shell find components pipelines flows service facade conf -name '*.py' -o -name '*.yaml' 2>/dev/null)

# The public multi-hop QA sets `make eval` scores (see bench/README.md there for their provenance and licences).
export AGRAG_EVAL_BENCH_DIR ?= ../shared/bench

.PHONY: install demo test test-fast lint typecheck compose-tool bench bench-service bench-parallel bench-scale eval screenshot clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

$(VENV)/.deps: pyproject.toml setup.py | $(BIN)/python
	$(BIN)/pip install --quiet --upgrade pip
	# The CPU build of torch; a plain `torch` requirement would pull a 5 GB CUDA build.
	$(BIN)/pip install --quiet torch==2.13.0
	$(BIN)/pip install --quiet setuptools==84.2.1
	$(BIN)/pip install --quiet -e '.[test]' --config-settings editable_mode=strict
	touch $@

# The link tree is byte-compiled here: pip compiles what it installs into site-packages, not these links, and with
# PYTHONDONTWRITEBYTECODE set (as on the machines here) every agrag process compiled agrag's ~320 modules again on
# each start (0.6 s). A file edited later is compiled again in memory until the next relink.
$(VENV)/.linked: $(VENV)/.deps $(SOURCES)
	$(BIN)/pip install --quiet --no-deps --no-build-isolation -e . --config-settings editable_mode=strict
	$(BIN)/python -m compileall -q build
	touch $@

install: $(VENV)/.linked

demo: install
	AGRAG_DATA_DIR=$(DEMO_DATA) PREFECT_HOME=$(CURDIR)/.agrag/prefect $(BIN)/agrag ingest $(EXAMPLES)
	AGRAG_DATA_DIR=$(DEMO_DATA) $(BIN)/agrag search "Who wrote the Orion Planner?"
	AGRAG_DATA_DIR=$(DEMO_DATA) $(BIN)/agrag search "What caused the replanning storm in Lyon?" recipe.limit=5
	AGRAG_DATA_DIR=$(DEMO_DATA) $(BIN)/agrag search "Who owns the Atlas Controller?" recipe=hybrid recipe.limit=5 --trace
	AGRAG_DATA_DIR=$(DEMO_DATA) $(BIN)/agrag search "Which incident involved the planner that Maria Chen wrote?" recipe=multi_hop recipe.limit=4
	# one MCP round trip: the SDK's client runs `agrag mcp` (search_evidence, fetch_evidence, check_citations)
	AGRAG_DATA_DIR=$(DEMO_DATA) $(BIN)/python -m agrag.service.mcp.demo "Who wrote the Orion Planner?"

lint: install
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

# mypy reads the installed link tree, where the folders are the agrag.* packages.
typecheck: install
	$(BIN)/mypy -p agrag.components -p agrag.pipelines -p agrag.flows -p agrag.service \
		-p agrag.retrieval -p agrag.evidence -p agrag.common

# tests/deploy checks docker-compose.yml with `docker compose config` (no engine needed). When neither Docker's compose
# plugin nor docker-compose is there, the distribution's docker-compose is installed (as root; else the test says so).
compose-tool:
	@docker compose version >/dev/null 2>&1 || command -v docker-compose >/dev/null || \
		{ [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null && apt-get update -qq && \
		  apt-get install -y -qq docker-compose >/dev/null; } || \
		echo "docker-compose is missing and could not be installed: tests/deploy/test_compose_file.py will fail"

# Three workers, a test module each: on 2 cores the many tests that wait on subprocesses and servers overlap (a
# clean clone's pytest took 709 s with three against 790 s with two, 2026-12-07, once the round-3 suites came in).
# PYTHONDONTWRITEBYTECODE is cleared for the run: pytest keeps each test module's rewritten bytecode only when it
# may write it (else each worker rewrote all of them: collection 20 s instead of 15). The files go to the
# __pycache__ folders git ignores.
test: lint typecheck compose-tool
	PYTHONDONTWRITEBYTECODE= $(BIN)/pytest -n 3 --dist loadfile

# The unit tests only: no model, no Prefect, not slow (tests/support/fast_loop.py marks and guards them).
test-fast: install compose-tool
	PYTHONDONTWRITEBYTECODE= $(BIN)/pytest --fast -q -n 2

bench: install
	$(BIN)/python bench/bench_ingest_search.py

# What a Prefect UI user sees after a run: a real Prefect server, `agrag serve` serving the deployment, a run with
# files that cannot be read, and headless Chromium (apt-get install -y chromium) on the run's ingest report artifact.
# Writes bench/results/prefect-run-artifact.png.
screenshot: install
	$(BIN)/python bench/prefect_ui_screenshot.py

# `agrag serve` under 20 concurrent HTTP clients for 30 s, each operation next to its in-process latency.
bench-service: install
	$(BIN)/python bench/service_load.py

# Ingestion with the embed stage in-process and on 1 and 2 local Dask workers (ingest.parallel), same corpus.
bench-parallel: install
	$(BIN)/python bench/parallel_ingest.py

# How ingestion and search cost grow with the corpus: 10,000 and 100,000 synthetic chunks (Zipf-distributed names)
# through the real flow with embedder=hashed, every recipe and discover next to its floor, peak RSS, disk, log-log
# slopes; writes bench/results/bench_scale.json and .png. `make bench-scale SCALE_ARGS=--million` adds 1,000,000.
bench-scale: install
	$(BIN)/python bench/scale_bench.py $(SCALE_ARGS)

# Retrieval quality: every shipped recipe against BM25, dense and RRF baselines on the three dev sets; MuSiQue also on a
# graph built from its precomputed LLM triples. Results land in bench/results/; reruns reuse bench/cache/. First, the
# offline extractor's typing precision and recall on the hand-labelled notes_dev mentions, and its speed (a minute).
eval: install
	$(BIN)/python bench/typing_eval.py
	PREFECT_HOME=$(CURDIR)/.agrag/prefect $(BIN)/agrag eval hotpotqa_dev
	PREFECT_HOME=$(CURDIR)/.agrag/prefect $(BIN)/agrag eval musique_dev evaluation.llm_triples=true
	PREFECT_HOME=$(CURDIR)/.agrag/prefect $(BIN)/agrag eval notes_dev

clean:
	rm -rf $(VENV) build *.egg-info .agrag .mypy_cache .pytest_cache .ruff_cache bench/cache
