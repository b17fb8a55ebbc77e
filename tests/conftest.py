"""Shared fixtures: offline environment, a hermetic working directory, the real embedder, one Prefect harness."""

import atexit
import os
import shutil
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import certifi

# Before Haystack, Prefect or transformers are imported by any test module.
_PREFECT_HOME = tempfile.mkdtemp(prefix="agrag-prefect-")
# Each pytest process (and xdist worker) gets its own; without this, every run left one in /tmp.
atexit.register(shutil.rmtree, _PREFECT_HOME, ignore_errors=True)
# pytest-xdist's workers set COLUMNS=80; rich would fix every console at that width when the CLI is first imported,
# while the CLI tests set the width of each command they run.
for _key in ("COLUMNS", "LINES"):
    os.environ.pop(_key, None)
for _key, _value in {
    "HAYSTACK_TELEMETRY_ENABLED": "False",
    "HF_HUB_OFFLINE": "1",
    "TRANSFORMERS_OFFLINE": "1",
    "TRANSFORMERS_VERBOSITY": "error",
    "TOKENIZERS_PARALLELISM": "false",
    # One torch and BLAS thread per process (each inherits it): the suite runs three workers and their children on
    # two cores, where a second intra-op thread only spins. A query embedding took 152 ms of CPU with two threads
    # on a loaded machine, 11 ms with one (Dask's workers set their own share).
    "OMP_NUM_THREADS": "1",
    "DO_NOT_TRACK": "1",
    "PREFECT_SERVER_ANALYTICS_ENABLED": "false",
    "PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS": "90",
    "PREFECT_HOME": _PREFECT_HOME,
    "PREFECT_LOGGING_LEVEL": "WARNING",
    "PREFECT_API_SSL_CERT_FILE": os.path.join(_PREFECT_HOME, "one-ca.pem"),
    "SSL_CERT_FILE": os.path.join(_PREFECT_HOME, "one-ca.pem"),
}.items():
    os.environ[_key] = _value
# Every Prefect client loads its CA file into a new SSL context: 16 ms with certifi's 150 certificates, some 3,600
# times a test run (a minute of CPU, measured with py-spy). The tests' Prefect servers are plain HTTP on loopback and
# never use it, so their clients get a file of one certificate (the first of certifi's, valid PEM, loaded in 0.3 ms).
# So do all other httpx clients (the tests', the MCP SDK's, agrag's CLI client; SSL_CERT_FILE): each loaded certifi's
# bundle (21 ms) for a loopback server on plain HTTP, 315 times in the fuzz suite alone (6.8 s of CPU).
_BUNDLE = Path(certifi.where()).read_text(encoding="utf-8")
_END = "-----END CERTIFICATE-----"
Path(os.environ["PREFECT_API_SSL_CERT_FILE"]).write_text(_BUNDLE[: _BUNDLE.index(_END) + len(_END)] + "\n")

import pytest  # noqa: E402
from hypothesis import settings as hypothesis_settings  # noqa: E402

# Property tests keep no example database: nothing is written into the source tree, and a run is what CI runs.
hypothesis_settings.register_profile("agrag", database=None, deadline=None, print_blob=True)
hypothesis_settings.load_profile("agrag")

from agrag.components.embedders.sentence_transformers_text_embedder import (  # noqa: E402
    BUNDLED_MODEL,
    SentenceTransformersTextEmbedder,
)
from agrag.components.embedders.sqlite_embedding_cache import SqliteEmbeddingCache  # noqa: E402
from agrag.pipelines.config_models import EmbedderConfig  # noqa: E402
from agrag.pipelines.settings import AgragSettings  # noqa: E402
from tests.support.fast_loop import (  # noqa: E402, F401 - pytest reads the hooks and the guard from this module
    _fast_guard,
    pytest_addoption,
    pytest_collection_modifyitems,
    pytest_configure,
)

REPO = Path(__file__).resolve().parent.parent
EXAMPLES = REPO / "examples" / "acme_notes"


@pytest.fixture(autouse=True)
def _hermetic(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Every test runs in its own empty folder, with no AGRAG_/RETRIEVAL_ variables of the developer's."""
    for key in list(os.environ):
        if key.startswith(("AGRAG_", "RETRIEVAL_")):
            monkeypatch.delenv(key)
    monkeypatch.chdir(tmp_path)


class _Switch:
    on = True


_SHARED_EMBEDDINGS = _Switch()


@pytest.fixture
def unshared_embeddings(monkeypatch: pytest.MonkeyPatch) -> None:
    """In-process ingestions of this test run without the session's embedding cache (as a user's without one)."""
    monkeypatch.setattr(_SHARED_EMBEDDINGS, "on", False)


@pytest.fixture(scope="session")
def embedding_cache_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The embedding cache folder of this test process (what ``AGRAG_EMBEDDING_CACHE_DIR`` names for a user)."""
    return tmp_path_factory.mktemp("embedding-cache")


@pytest.fixture(scope="session", autouse=True)
def _in_process_ingestions_share_the_embedding_cache(embedding_cache_dir: Path) -> Iterator[None]:
    """Ingestions that run in the test process keep their vectors in the session's embedding cache.

    Dozens of modules ingest the same example files through flows that build their own embedder from the settings;
    with the cache a user turns on with ``AGRAG_EMBEDDING_CACHE_DIR``, each text is encoded once per test process.
    A test that sets the variable keeps its own folder, one that asks for ``unshared_embeddings`` has none, and so
    have ``agrag`` commands run in subprocesses, as a user runs them.
    """
    runtime = sys.modules.get("agrag.pipelines.runtime")  # imported by every collected module that ingests
    if runtime is None:
        yield
        return
    original = runtime.open_embedding_cache

    def session_cache(settings: AgragSettings, config: EmbedderConfig) -> SqliteEmbeddingCache | None:
        if settings.embedding_cache_dir is None and _SHARED_EMBEDDINGS.on:
            settings = settings.model_copy(update={"embedding_cache_dir": embedding_cache_dir})
        return original(settings, config)

    patch = pytest.MonkeyPatch()
    patch.setattr(runtime, "open_embedding_cache", session_cache)
    yield
    patch.undo()


@pytest.fixture(scope="session")
def embedder(embedding_cache_dir: Path) -> SentenceTransformersTextEmbedder:
    """The bundled all-MiniLM-L6-v2, loaded once for the session, with the embedding cache agrag offers its users.

    Dozens of modules ingest the same example files through this embedder; the cache (what
    ``AGRAG_EMBEDDING_CACHE_DIR`` turns on) hands back the vectors the model computed for a text before, float32 as
    the stores keep them, so each text is encoded once per test process.
    """
    cache = SqliteEmbeddingCache(embedding_cache_dir, BUNDLED_MODEL)
    model = SentenceTransformersTextEmbedder(cache=cache)
    model.warm_up()
    return model


@pytest.fixture(scope="session")
def prefect_harness() -> Iterator[None]:
    """One temporary Prefect server for every flow test (it takes seconds to start)."""
    from prefect.testing.utilities import prefect_test_harness

    with prefect_test_harness(server_startup_timeout=90):
        yield


@pytest.fixture
def examples() -> Path:
    """The example corpus shipped in examples/acme_notes."""
    return EXAMPLES
