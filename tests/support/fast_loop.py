"""The fast test loop: marks for the tests that load a model or need Prefect, and ``--fast`` that skips them.

``tests/conftest.py`` imports the hooks below. A test is marked

* ``needs_model`` when it uses a fixture that loads the bundled embedder (``embedder`` or anything built on it,
  such as ``ingested_corpus``), or is marked so explicitly (it builds an embedder or a cross-encoder itself);
* ``needs_prefect`` when it uses ``prefect_harness`` (directly or through a fixture), or is marked so explicitly
  (it starts ``agrag`` or a Prefect server in a subprocess);
* ``slow`` explicitly, as before.

The fixtures used are known after collection (``item.fixturenames`` is the whole closure), so a new test that
takes ``ingested_corpus`` is marked without anyone remembering to. ``pytest --fast`` (``make test-fast``) deselects
the three marks and guards the rest: a test left in the fast run that loads a model, starts Prefect's server or
runs ``agrag`` in a subprocess fails and says which mark it lacks, so the loop stays fast.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

NEEDS_MODEL = "needs_model"
NEEDS_PREFECT = "needs_prefect"
SLOW = "slow"

# Fixtures whose closure means "loads the MiniLM embedder" or "runs a Prefect server"; the closure covers
# ingested_corpus, example_store, agent_data_dir, mcp_data_dir, served_runtime... through these two.
MODEL_FIXTURES = frozenset({"embedder"})
PREFECT_FIXTURES = frozenset({"prefect_harness"})

FAST_EXPRESSION = f"not {SLOW} and not {NEEDS_MODEL} and not {NEEDS_PREFECT}"


def pytest_addoption(parser: pytest.Parser) -> None:
    """``--fast``: the unit tests only (no model, no Prefect, not slow), guarded so they stay that way."""
    parser.addoption(
        "--fast",
        action="store_true",
        default=False,
        help=f"run the unit tests only ({FAST_EXPRESSION}); a test that loads a model or starts Prefect fails",
    )


def pytest_configure(config: pytest.Config) -> None:
    """Add the fast expression to ``-m`` under ``--fast``, and keep Prefect from starting a server on its own."""
    if not config.getoption("fast"):
        return
    given = config.option.markexpr
    config.option.markexpr = f"({given}) and ({FAST_EXPRESSION})" if given else FAST_EXPRESSION
    # Without an API URL a flow run starts an ephemeral server (8-13 s here); under --fast that is an error.
    os.environ["PREFECT_SERVER_ALLOW_EPHEMERAL_MODE"] = "false"


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark each test by the fixtures it uses (after collection the closure of fixtures is known)."""
    for item in items:
        used = set(getattr(item, "fixturenames", ()))
        if used & MODEL_FIXTURES:
            item.add_marker(NEEDS_MODEL)
        if used & PREFECT_FIXTURES:
            item.add_marker(NEEDS_PREFECT)


class _Unmarked(Exception):
    """A test in the fast run did what only a marked test may do."""


def _refuse(mark: str, what: str) -> None:
    raise _Unmarked(f"this test {what}: mark it @pytest.mark.{mark} (tests/support/fast_loop.py) or avoid it")


def _runs_agrag_or_prefect(args: Any) -> bool:
    argv = [str(a) for a in args] if isinstance(args, list | tuple) else [str(args)]
    if not argv:
        return False
    program = Path(argv[0]).name
    if program in {"agrag", "prefect"}:
        return True
    # python -m agrag.service..., python -c "...agrag..." and python -m prefect all start our code or Prefect.
    return program.startswith("python") and any("agrag" in a or "prefect" in a for a in argv[1:])


@pytest.fixture(autouse=True)
def _fast_guard(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Under ``--fast``, fail a test that loads a model or runs ``agrag``/Prefect in a subprocess."""
    if not request.config.getoption("fast"):
        yield
        return
    real_popen_init = subprocess.Popen.__init__

    def popen_init(self: subprocess.Popen[Any], args: Any, *rest: Any, **kwargs: Any) -> None:
        if _runs_agrag_or_prefect(args):
            _refuse(NEEDS_PREFECT, f"starts {args!r} in a subprocess")
        real_popen_init(self, args, *rest, **kwargs)

    monkeypatch.setattr(subprocess.Popen, "__init__", popen_init)
    _guard_models(monkeypatch)
    yield


# The loaders of our embedder and cross-encoder, and sentence-transformers itself once imported (importing it
# just to guard it would cost every fast run about 5 s).
MODEL_LOADERS = (
    "agrag.components.embedders.sentence_transformers_text_embedder",
    "agrag.components.rerankers.cross_encoder_reranker",
)


def _guard_models(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*_args: Any, **_kwargs: Any) -> None:
        _refuse(NEEDS_MODEL, "loads a sentence-transformers model")

    for name in MODEL_LOADERS:
        module = sys.modules.get(name)
        if module is not None and hasattr(module, "_load"):
            monkeypatch.setattr(module, "_load", _unless_hashed(module._load, refuse))
    library = sys.modules.get("sentence_transformers")
    if library is not None:
        monkeypatch.setattr(library.SentenceTransformer, "__init__", refuse)
        monkeypatch.setattr(library.CrossEncoder, "__init__", refuse)


def _unless_hashed(load: Any, refuse: Any) -> Any:
    """``refuse`` in place of a model loader, except for the hashed backend, which loads no model (words are hashed)."""

    def guarded(*args: Any, **kwargs: Any) -> Any:
        backend = args[2] if len(args) > 2 else kwargs.get("backend")
        if getattr(backend, "value", backend) == "hashed":
            return load(*args, **kwargs)
        return refuse()

    return guarded
