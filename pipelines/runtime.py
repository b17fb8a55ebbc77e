"""``Runtime``: the one composition root. Config, settings, models and stores are built here and nowhere else.

Every entry point (the CLI, the flows, ``agrag eval``, the bench, ``agrag serve``) opens a ``Runtime`` and works
through it, so every command takes the same Hydra overrides and opens a data dir the same way.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType

from haystack import Pipeline

from agrag.components.data_models.evidence import EvidenceScope, FetchedEvidence
from agrag.components.data_models.relation_index_mode import RelationIndexMode
from agrag.components.data_models.retrieval_method import RetrievalMethod
from agrag.components.data_models.search_filters import SearchFilters
from agrag.components.embedders.sentence_transformers_text_embedder import SentenceTransformersTextEmbedder
from agrag.components.errors import ConfigError, DocumentNotFoundError, NothingIngestedError, StoreError
from agrag.components.llm.openai_chat_client import OpenAIChatClient
from agrag.components.stores.knowledge_store import KnowledgeStore
from agrag.components.stores.kuzu_graph_store import KuzuGraphStore
from agrag.components.stores.sqlite_run_registry import SqliteRunRegistry
from agrag.pipelines.config_loader import load_config
from agrag.pipelines.config_models import AgragConfig, RecipeConfig
from agrag.pipelines.embedder_factory import embedder_for
from agrag.pipelines.evidence_session import EvidenceSession
from agrag.pipelines.ingest_components import llm_client
from agrag.pipelines.request_overrides import request_config
from agrag.pipelines.search_engine import SearchEngine, SearchResponse
from agrag.pipelines.search_pipeline import build_search_pipeline
from agrag.pipelines.settings import AgragSettings, Settings, load_settings
from agrag.pipelines.store_factory import open_embedding_cache, open_knowledge_store, store_spec

GRAPH_DISCOVERY_RECIPE = "bridge"
"""The recipe of ``discover``'s and ``search_evidence``'s ``graph`` mode: the best graph recipe on every dev set."""


def compose_config(overrides: Sequence[str], settings: Settings) -> AgragConfig:
    """Compose ``conf/`` with the overrides, searching the user's ``AGRAG_CONFIG_DIR`` first.

    Raises:
        ConfigError: a bad override, or ``AGRAG_CONFIG_DIR`` names no folder.
    """
    user_dir = settings.agrag.config_dir
    if user_dir is not None and not user_dir.is_dir():
        raise ConfigError(f"AGRAG_CONFIG_DIR={user_dir} is not a folder. Create it or unset the variable.")
    return load_config(list(overrides), user_dir)


def check_ingested(settings: AgragSettings) -> None:
    """Raise ``NothingIngestedError`` if the data dir holds no graph yet (instead of creating an empty one)."""
    if not settings.graph_path.exists():
        raise NothingIngestedError(settings.data_dir)


@dataclass
class Runtime:
    """The open data dir and everything built for it: config, settings, embedder, LLM client, stores, engine.

    Built once per process by ``open_runtime``; a request that brings its own overrides gets its configuration from
    ``request_config``, which takes only allow-listed settings, and a local command from ``config_for``, which refuses
    overrides that would need other stores or another embedding model.

    Usage:
        ```python
        with open_runtime(["recipe=multi_hop"]) as runtime:
            response = runtime.engine.search_sync("Who wrote the Orion Planner?", runtime.config.recipe)
            session = runtime.evidence_session()
        ```
    """

    config: AgragConfig
    settings: Settings
    embedder: SentenceTransformersTextEmbedder
    llm: OpenAIChatClient | None
    store: KnowledgeStore
    engine: SearchEngine
    runs: SqliteRunRegistry
    overrides: tuple[str, ...] = ()
    _closed: bool = field(default=False, repr=False)
    _graph_recipe: RecipeConfig | None = field(default=None, repr=False)

    @property
    def data_dir(self) -> Path:
        """The data dir this runtime holds."""
        return self.settings.agrag.data_dir

    def serve_long(self) -> None:
        """Tell the stores this process serves for a long time (``agrag serve``, ``agrag mcp``).

        The graph store then builds its relation index (which GRAPH_EXPAND's walks rank with) on a thread of its own
        once writes pause; a short command does not start a build it would not live to use.
        """
        graph = self.store.graph
        if isinstance(graph, KuzuGraphStore):
            graph.relation_index_mode = RelationIndexMode.BACKGROUND

    def config_for(self, overrides: Sequence[str] = ()) -> AgragConfig:
        """The configuration of one request: this runtime's overrides, then ``overrides``.

        Raises:
            ConfigError: a bad override, or one that changes the vector store or the embedding model, which the
                open stores cannot follow (the message says how to open the data dir with them instead).
        """
        if not overrides:
            return self.config
        config = compose_config([*self.overrides, *overrides], self.settings)
        for name in ("vector_store", "embedder"):
            if getattr(config, name) != getattr(self.config, name):
                raise ConfigError(
                    f"The overrides {' '.join(overrides)!r} change {name}, but the data dir {self.data_dir} is open "
                    f"with {name} {getattr(self.config, name).model_dump(mode='json')}. Leave those overrides out, "
                    "or stop the process that holds the data dir and open it again with them."
                )
        return config

    def request_config(self, overrides: Sequence[str] = ()) -> AgragConfig:
        """The configuration of a request's overrides (HTTP, MCP, the Prefect form, the agent's tool calls).

        Only what ``agrag.pipelines.request_overrides`` allows: plain values of allow-listed settings, never an
        interpolation or resolver, paths only inside ``AGRAG_FILES_ROOT``.

        Raises:
            RequestOverrideError: an override a request may not give; the message names it and what is allowed.
            ConfigError: an allowed override that does not compose.
        """
        if not overrides:
            return self.config
        return request_config(
            overrides,
            lambda asked: compose_config([*self.overrides, *asked], self.settings),
            lambda: self.config,
            self.settings.agrag.files_root,
        )

    def require_document(self, document_id: str) -> None:
        """Raise ``DocumentNotFoundError`` unless a stored document has this id (before a delete is queued or run)."""
        with self.store.reading():
            known = self.store.graph.document_versions([document_id])
        if not known.get(document_id):
            raise DocumentNotFoundError(document_id)

    def evidence_session(
        self, scope: EvidenceScope | None = None, fetched: Iterable[FetchedEvidence] = ()
    ) -> EvidenceSession:
        """A new evidence session over this data dir, limited to ``scope`` (None: every document).

        Its ``graph`` discover mode (its default) runs the ``GRAPH_DISCOVERY_RECIPE`` recipe of this configuration.
        """
        return EvidenceSession(self.store, self.embedder, scope, fetched, graph_search=self.graph_passages)

    def graph_passages(self, query: str, filters: SearchFilters | None, limit: int) -> SearchResponse:
        """The ``GRAPH_DISCOVERY_RECIPE`` search of ``query`` within ``filters``, at most ``limit`` results."""
        if self._graph_recipe is None:  # composed once: Hydra takes tens of milliseconds
            self._graph_recipe = compose_config(
                [*self.overrides, f"recipe={GRAPH_DISCOVERY_RECIPE}"], self.settings
            ).recipe
        recipe = self._graph_recipe.model_copy(update={"limit": limit})
        return self.engine.search_sync(query, recipe, filters)

    def ingest_embedder(self, progress_bar: bool = False) -> SentenceTransformersTextEmbedder:
        """The embedder ingestion uses: the same model, with the embedding cache and a progress bar if asked."""
        config = self.config.embedder
        return embedder_for(
            config,
            self.settings.agrag,
            progress_bar=progress_bar,
            cache=open_embedding_cache(self.settings.agrag, config),
        )

    def close(self) -> None:
        """Close the stores and release the data dir (idempotent)."""
        if not self._closed:
            self._closed = True
            try:
                self.engine.close()
                self.runs.close()
            finally:
                self.store.close()

    def __enter__(self) -> Runtime:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()


def open_runtime(
    overrides: Sequence[str] = (),
    settings: Settings | None = None,
    *,
    require_data: bool = True,
    embedder: SentenceTransformersTextEmbedder | None = None,
    check_vectors: bool = True,
) -> Runtime:
    """Compose the config, then open the embedder, the LLM client, the stores and the search engine.

    Args:
        overrides: Hydra overrides, e.g. ``["vector_store=qdrant", "recipe=multi_hop"]``.
        settings: The settings; read from the environment when None.
        require_data: Refuse a data dir nothing was ingested into (every command but ingestion).
        embedder: An embedder of the configured model prepared by the caller (``agrag eval`` brings one with its
            own embedding cache); by default one is made here.
        check_vectors: Refuse vector collections that lack points the graph says they hold (every command but
            ``agrag repair``, which rebuilds them).

    Raises:
        ConfigError: a bad override or setting.
        NothingIngestedError: ``require_data`` and the data dir holds nothing yet.
        StoreLockedError: another process holds the data dir.
        CorruptedStoreError: a store of the data dir is damaged (the message names the damage and the fix).
    """
    settings = settings or load_settings()
    config = compose_config(overrides, settings)
    if require_data:
        check_ingested(settings.agrag)
    if embedder is None:
        embedder = embedder_for(config.embedder, settings.agrag)
    elif embedder.model != config.embedder.model:
        raise ConfigError(
            f"The embedder given uses {embedder.model!r}, but embedder.model is {config.embedder.model!r}."
        )
    llm = llm_client(settings.agrag)
    store = open_knowledge_store(
        settings.agrag, config.vector_store, embedder, settings.retrieval, check_vectors=check_vectors
    )
    engine = SearchEngine(store, embedder, settings.retrieval, llm=llm)
    runs = SqliteRunRegistry.of(settings.agrag.data_dir)
    try:
        # this process holds the data dir now: a run recorded unfinished belongs to a process that is gone
        runs.mark_unfinished_interrupted()
    except StoreError:
        store.close()
        raise
    return Runtime(config, settings, embedder, llm, store, engine, runs, tuple(overrides))


def recipe_pipeline(config: AgragConfig, settings: Settings) -> Pipeline:
    """The Haystack pipeline of ``config.recipe`` over the settings' data dir, built without opening any store.

    Its components hold the data dir's ``StoreSpec`` and open it in ``warm_up`` (or use the stores this process
    holds), so ``Pipeline.dumps()`` gives a YAML that ``Pipeline.loads`` runs anywhere the data dir is readable.
    An LLM client is made only for a recipe with text2cypher (None when no endpoint is set: that method then fails
    when it runs, as in a search).

    Raises:
        ConfigError: the recipe needs something the settings do not give (a cross-encoder model).
    """
    recipe = config.recipe
    spec = store_spec(settings.agrag, config.vector_store, config.embedder.model, settings.retrieval.rrf_k)
    embedder = embedder_for(config.embedder, settings.agrag)
    llm = llm_client(settings.agrag) if RetrievalMethod.TEXT2CYPHER in recipe.methods else None
    return build_search_pipeline(recipe, spec, embedder, settings.retrieval, llm)


_SERVED: dict[Path, Runtime] = {}
_SERVED_LOCK = threading.Lock()


@contextmanager
def serving(runtime: Runtime) -> Iterator[Runtime]:
    """Make ``runtime`` the one this process serves its data dir with, so flows run here use its open stores."""
    key = runtime.data_dir.resolve()
    with _SERVED_LOCK:
        _SERVED[key] = runtime
    try:
        yield runtime
    finally:
        with _SERVED_LOCK:
            _SERVED.pop(key, None)


def served_runtime(data_dir: Path) -> Runtime | None:
    """The runtime this process serves ``data_dir`` with, if any."""
    with _SERVED_LOCK:
        return _SERVED.get(Path(data_dir).resolve())


@contextmanager
def runtime_for(overrides: Sequence[str] = (), settings: Settings | None = None) -> Iterator[Runtime]:
    """The runtime of the settings' data dir: the one this process serves it with, else a new one closed after.

    A served runtime is checked against ``overrides`` (``Runtime.config_for``) and is not closed here. A new one
    may open a data dir nothing was ingested into yet (ingestion creates it).
    """
    settings = settings or load_settings()
    served = served_runtime(settings.agrag.data_dir)
    if served is not None:
        served.config_for(overrides)
        yield served
        return
    with open_runtime(overrides, settings, require_data=False) as runtime:
        yield runtime
