"""Opens the stores a configuration and the settings describe."""

from __future__ import annotations

import time
from collections.abc import Sequence
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path

from haystack.utils import Secret
from pydantic import SecretStr

from agrag.components import defaults
from agrag.components.data_models.embedder_backend import EmbedderBackend
from agrag.components.data_models.vector_backend import VectorBackend
from agrag.components.disk_space_errors import NOTHING_CHANGED, NoSpaceLeftError
from agrag.components.embedders.hashed_text_encoder import MODEL_PREFIX as HASHED_PREFIX
from agrag.components.embedders.sentence_transformers_text_embedder import SentenceTransformersTextEmbedder
from agrag.components.embedders.sqlite_embedding_cache import SqliteEmbeddingCache
from agrag.components.errors import ConfigError, CorruptedStoreError, NothingIngestedError, StoreError, StoreLockedError
from agrag.components.stores.data_dir_lock import DataDirLock
from agrag.components.stores.disk_space import MIB, READ_MARGIN, DiskSpace, is_disk_full
from agrag.components.stores.graph_store import GraphStore
from agrag.components.stores.json_ontology_store import JsonOntologyStore
from agrag.components.stores.knowledge_store import KnowledgeStore
from agrag.components.stores.kuzu_graph_store import KuzuGraphStore
from agrag.components.stores.qdrant_edge_vector_store import QdrantEdgeVectorStore
from agrag.components.stores.sqlite_phase_journal import SqlitePhaseJournal
from agrag.components.stores.store_registry import register_store
from agrag.components.stores.store_spec import StoreSpec
from agrag.components.stores.vector_store import STATUS_FIELD, VectorCollection, VectorStore
from agrag.components.vector_backend_errors import VectorBackendMismatchError
from agrag.pipelines.config_models import (
    EdgeVectorStoreConfig,
    EmbedderConfig,
    QdrantVectorStoreConfig,
    VectorStoreConfig,
)
from agrag.pipelines.settings import AgragSettings, RetrievalSettings, load_retrieval_settings, load_settings

# Payload fields the filters use; indexed so filtering never scans every point. A fact is found by its passages
# when they are retired, and by its ends when they are deleted (``KnowledgeStore.facts_of``).
KEYWORD_FIELDS = {
    VectorCollection.CHUNKS: (STATUS_FIELD, "document_id"),
    VectorCollection.ENTITIES: (STATUS_FIELD,),
    VectorCollection.COMMUNITIES: ("level",),
    VectorCollection.FACTS: (STATUS_FIELD, "document_ids", "chunk_ids", "source_id", "target_id", "type"),
}
# The collections the graph says what they must hold (``vector_damage``). The facts collection is not among them: a
# data dir made before facts were embedded has none, and is opened all the same (``agrag status`` says how many are
# missing, ``agrag repair`` embeds them).
CHECKED = (VectorCollection.CHUNKS, VectorCollection.ENTITIES, VectorCollection.COMMUNITIES)

PHASE_JOURNAL_FILE = "phases.sqlite"
ONTOLOGY_FILE = "ontology.json"
MODEL_KEY = "embedding_model"
DIMENSION_KEY = "embedding_dimension"
VECTOR_BACKEND_KEY = "vector_store"
REPAIR_FIX = (
    "Run `agrag repair` to embed the missing vectors again from the graph (with the same overrides as your other "
    "commands), or ingest your documents again into a new data dir (AGRAG_DATA_DIR)."
)


def open_embedding_cache(settings: AgragSettings, config: EmbedderConfig) -> SqliteEmbeddingCache | None:
    """The embedding cache of ``AGRAG_EMBEDDING_CACHE_DIR`` for the configured model, or None when it is unset."""
    if settings.embedding_cache_dir is None:
        return None
    return SqliteEmbeddingCache(
        settings.embedding_cache_dir,
        config.model,
        config.backend.vector_variant,
        query_capacity=settings.embedding_cache_queries,
    )


def disk_space(settings: AgragSettings) -> DiskSpace:
    """The disk of the settings' data dir, with the free space a write needs (``AGRAG_MIN_FREE_MB``)."""
    return DiskSpace(settings.data_dir, settings.min_free_mb * MIB)


def open_room(settings: AgragSettings, config: VectorStoreConfig) -> int:
    """Bytes of free disk opening the data dir takes: ``READ_MARGIN``, and what its Qdrant Edge shards allocate."""
    if not isinstance(config, EdgeVectorStoreConfig):
        return READ_MARGIN
    return READ_MARGIN + sum(QdrantEdgeVectorStore.open_room(settings.vectors_dir / c.value) for c in VectorCollection)


def open_vector_store(
    collection: VectorCollection,
    config: VectorStoreConfig,
    settings: AgragSettings,
    dimension: int,
    rrf_k: int,
) -> VectorStore:
    """Open one collection on the configured backend."""
    if isinstance(config, EdgeVectorStoreConfig):
        return QdrantEdgeVectorStore(
            settings.vectors_dir / collection.value,
            collection,
            dimension,
            rrf_k,
            KEYWORD_FIELDS[collection],
            settings=config.shard_settings(),
            space=disk_space(settings),
        )
    assert isinstance(config, QdrantVectorStoreConfig)
    if not settings.qdrant_url and settings.qdrant_path is None:
        raise ConfigError(
            "vector_store=qdrant needs the server's URL: set AGRAG_QDRANT_URL (e.g. http://localhost:6333)."
        )
    # Only this backend needs the optional qdrant-client.
    from agrag.components.stores.qdrant_server_vector_store import QdrantServerVectorStore  # noqa: PLC0415

    api_key = settings.qdrant_api_key.get_secret_value() if settings.qdrant_api_key else None
    return QdrantServerVectorStore(
        collection,
        dimension,
        url=settings.qdrant_url or None,
        # local mode locks its folder per client, so each collection gets a folder of its own
        path=None if settings.qdrant_url or settings.qdrant_path is None else settings.qdrant_path / collection.value,
        api_key=api_key,
        prefix=config.collection_prefix,
        rrf_k=rrf_k,
        keyword_fields=KEYWORD_FIELDS[collection],
        layout=config.layout(),
    )


def embedding_dimension(graph: GraphStore, embedder: SentenceTransformersTextEmbedder) -> int:
    """The vector size of this data dir, recorded at first use so later opens need not load the model.

    Raises:
        ConfigError: the data dir was built with another embedding model, whose vectors cannot be compared.
    """
    info = graph.info()
    recorded = info.get(MODEL_KEY)
    if recorded is not None and recorded != embedder.model:
        raise ConfigError(
            f"This data dir was built with the embedding model {recorded!r}, but embedder.model is {embedder.model!r}. "
            f"Use embedder.model={recorded} or ingest into a new AGRAG_DATA_DIR."
        )
    if DIMENSION_KEY in info:
        return int(info[DIMENSION_KEY])
    dimension = embedder.dimension
    graph.set_info({MODEL_KEY: embedder.model, DIMENSION_KEY: str(dimension)})
    return dimension


def check_vector_backend(graph: GraphStore, config: VectorStoreConfig) -> None:
    """Record the vector backend of a new data dir; refuse to open one built with another.

    Raises:
        VectorBackendMismatchError: the data dir's vectors live in another backend (a ``ConfigError``); the message
            names the override to use.
    """
    recorded = graph.info().get(VECTOR_BACKEND_KEY)
    if recorded is None:
        graph.set_info({VECTOR_BACKEND_KEY: config.backend})
    elif recorded != config.backend:
        raise VectorBackendMismatchError(recorded, config.backend)


def record_vector_backend(graph: GraphStore, config: VectorStoreConfig) -> None:
    """Record that the data dir's vectors now live in ``config``'s backend (what ``check_vector_backend`` reads).

    Only for a data dir whose vectors were all copied there (``agrag migrate-vectors``): from then on every command
    must open it with that backend, and one with the other backend is refused with the override to add.
    """
    graph.set_info({VECTOR_BACKEND_KEY: config.backend})


@dataclass(frozen=True, slots=True)
class VectorDamage:
    """What one vector collection lacks against the graph; ``str()`` is the sentence a user reads."""

    collection: VectorCollection
    reason: str

    def __str__(self) -> str:
        return self.reason


def vector_damage(graph: GraphStore, collections: Sequence[VectorStore]) -> list[VectorDamage]:
    """What the vector collections lack against the graph; empty when nothing.

    A collection is damaged when it holds fewer points than the graph says were embedded
    (``GraphStore.embedded_counts``), or cannot read back a sample of them (``GraphStore.embedded_sample``), as a
    shard whose payload pages were overwritten does while keeping its count.
    """
    expected, samples = graph.embedded_counts(), graph.embedded_sample()
    damage = []
    for store in collections:
        name = store.collection.value
        count = store.count()
        if count < expected[name]:
            reason = (
                f"the {name} vectors hold {count} points, but the graph has {expected[name]} {name} that were embedded"
            )
            damage.append(VectorDamage(store.collection, reason))
            continue
        try:
            missing = sorted(set(samples[name]) - store.existing_ids(samples[name]))
        except StoreError as exc:
            damage.append(VectorDamage(store.collection, f"the {name} vectors cannot be read ({exc})"))
            continue
        if missing:
            reason = (
                f"the {name} vectors cannot read {len(missing)} of {len(samples[name])} points sampled from the graph "
                f"(e.g. {missing[0]})"
            )
            damage.append(VectorDamage(store.collection, reason))
    return damage


def _open_collection(
    collection: VectorCollection,
    config: VectorStoreConfig,
    settings: AgragSettings,
    dimension: int,
    rrf_k: int,
    *,
    set_aside: bool,
) -> VectorStore:
    """Open one collection; a Qdrant Edge shard that cannot be opened is damage.

    With ``set_aside`` (``agrag repair``) such a shard is renamed ``<name>.damaged-<time>`` and made anew, empty,
    for the repair to fill. A full disk is not damage: that shard stays where it is.
    """
    try:
        return open_vector_store(collection, config, settings, dimension, rrf_k)
    except (StoreLockedError, NoSpaceLeftError):
        raise
    except StoreError as exc:
        if not isinstance(config, EdgeVectorStoreConfig):
            raise
        if not set_aside:
            raise CorruptedStoreError(
                settings.data_dir, f"the {collection.value} vectors cannot be opened ({exc})", REPAIR_FIX
            ) from exc
    shard = settings.vectors_dir / collection.value
    making = f"make a new {collection.value} vector store in place of the damaged one"
    disk_space(settings).require_to_write(making, kept=NOTHING_CHANGED)
    shard.rename(shard.with_name(f"{shard.name}.damaged-{time.strftime('%Y%m%dT%H%M%S')}"))
    return open_vector_store(collection, config, settings, dimension, rrf_k)


def _missing_shards(settings: AgragSettings, config: VectorStoreConfig, expected: dict[str, int]) -> list[str]:
    """The Qdrant Edge collections the graph needs whose shard folder is gone (opening one would make it empty)."""
    if not isinstance(config, EdgeVectorStoreConfig):
        return []
    return [
        f"the {c.value} vectors are missing (no shard at {settings.vectors_dir / c.value}), but the graph has "
        f"{expected[c.value]} {c.value} that were embedded"
        for c in CHECKED
        if expected[c.value] > 0 and not (settings.vectors_dir / c.value / "segments").is_dir()
    ]


def open_knowledge_store(
    settings: AgragSettings,
    vector_store: VectorStoreConfig,
    embedder: SentenceTransformersTextEmbedder,
    retrieval: RetrievalSettings | None = None,
    *,
    check_vectors: bool = True,
) -> KnowledgeStore:
    """Open the graph and the four vector collections; if one fails to open, the ones already open are closed.

    The vector collections are checked against the graph first (``vector_damage``): a missing or emptied collection
    is refused, not made anew, so that no command (a search, or an ingestion that would call every file unchanged)
    runs on half a data dir. ``check_vectors=False`` is for ``agrag repair``, which rebuilds them. Vector points a
    process killed inside a commit left pending get what the graph holds (``KnowledgeStore.settle_pending``).

    Raises:
        CorruptedStoreError: the graph file is damaged, or a vector collection lacks points the graph says it holds;
            the message says how to repair it.
        StoreLockedError: another process holds the data dir.
        NoSpaceLeftError: the data dir's disk lacks the room opening it takes (``open_room``); nothing was changed.
    """
    space = disk_space(settings)
    if check_vectors:
        space.require(open_room(settings, vector_store), "open the data dir")
    else:  # a repair, which writes once open: the floor of a write on top
        space.require(open_room(settings, vector_store) + space.min_free, "open the data dir for a repair")
    try:
        return _open_knowledge_store(settings, vector_store, embedder, retrieval, space, check_vectors=check_vectors)
    except StoreError as exc:
        if is_disk_full(exc) and not isinstance(exc, NoSpaceLeftError):  # not damage: Kùzu or SQLite met a full disk
            raise space.ran_out("open the data dir", NOTHING_CHANGED, READ_MARGIN) from exc
        raise


def _open_knowledge_store(
    settings: AgragSettings,
    vector_store: VectorStoreConfig,
    embedder: SentenceTransformersTextEmbedder,
    retrieval: RetrievalSettings | None,
    space: DiskSpace,
    *,
    check_vectors: bool,
) -> KnowledgeStore:
    rrf_k = (retrieval or load_retrieval_settings()).rrf_k
    with ExitStack() as opened:
        lock = DataDirLock(settings.data_dir)
        lock.acquire()
        opened.callback(lock.release)
        graph = KuzuGraphStore(settings.graph_path, buffer_pool_mb=settings.kuzu_buffer_pool_mb)
        opened.callback(graph.close)
        check_vector_backend(graph, vector_store)
        dimension = embedding_dimension(graph, embedder)
        expected = graph.embedded_counts()
        if check_vectors and (missing := _missing_shards(settings, vector_store, expected)):
            raise CorruptedStoreError(settings.data_dir, "; ".join(missing), REPAIR_FIX)
        collections = []
        for collection in (*CHECKED, VectorCollection.FACTS):  # a missing facts shard is made, empty
            store = _open_collection(collection, vector_store, settings, dimension, rrf_k, set_aside=not check_vectors)
            opened.callback(store.close)
            collections.append(store)
        chunks, entities, communities, facts = collections
        if check_vectors and (damage := vector_damage(graph, (chunks, entities, communities))):
            raise CorruptedStoreError(settings.data_dir, "; ".join(map(str, damage)), REPAIR_FIX)
        opened.pop_all()
    journal = SqlitePhaseJournal(settings.data_dir / PHASE_JOURNAL_FILE)
    knowledge = KnowledgeStore(
        graph=graph,
        chunks=chunks,
        entities=entities,
        communities=communities,
        facts=facts,
        lock=lock,
        journal=journal,
        ontology=JsonOntologyStore(settings.data_dir / ONTOLOGY_FILE),
        spec=store_spec(settings, vector_store, embedder.model, rrf_k),
        space=space,
    )
    try:
        knowledge.settle_pending()  # vectors a process killed inside a commit left pending (none: nothing written)
    except BaseException:
        knowledge.close()
        raise
    register_store(knowledge)  # components holding its spec resolve to it, never open the data dir twice
    return knowledge


QDRANT_API_KEY_VARIABLE = "AGRAG_QDRANT_API_KEY"


def store_spec(settings: AgragSettings, vector_store: VectorStoreConfig, embedding_model: str, rrf_k: int) -> StoreSpec:
    """The ``StoreSpec`` of the data dir the settings name: what a serialized pipeline holds instead of the stores.

    It opens nothing. Its opener is ``open_store_spec``, so a process that loads the pipeline opens the data dir
    itself; the Qdrant API key is written as a reference to its environment variable.
    """
    server = isinstance(vector_store, QdrantVectorStoreConfig)
    prefix = vector_store.collection_prefix if isinstance(vector_store, QdrantVectorStoreConfig) else None
    return StoreSpec(
        data_dir=str(settings.data_dir),
        embedding_model=embedding_model,
        rrf_k=rrf_k,
        vector_backend=VectorBackend.from_str(vector_store.backend),
        qdrant_url=(settings.qdrant_url or None) if server else None,
        qdrant_path=str(settings.qdrant_path) if server and settings.qdrant_path is not None else None,
        collection_prefix=prefix,
        qdrant_api_key=Secret.from_env_var(QDRANT_API_KEY_VARIABLE, strict=False) if server else None,
        opener=open_store_spec,
    )


def open_store_spec(spec: StoreSpec) -> KnowledgeStore:
    """Open the stores ``spec`` names, with the other settings (buffer pool...) from the environment.

    The opener of the specs ``store_spec`` makes: ``store_registry.open_store`` calls it when this process has not
    opened the data dir yet.

    Raises:
        NothingIngestedError: the data dir holds no graph.
        StoreLockedError: another process holds the data dir.
    """
    settings = load_settings()
    api_key = spec.qdrant_api_key.resolve_value() if spec.qdrant_api_key is not None else None
    update = {
        "data_dir": Path(spec.data_dir),
        "qdrant_url": spec.qdrant_url,
        "qdrant_path": Path(spec.qdrant_path) if spec.qdrant_path is not None else None,
        "qdrant_api_key": SecretStr(api_key) if isinstance(api_key, str) else None,
    }
    agrag = settings.agrag.model_copy(update=update)
    if not agrag.graph_path.exists():
        raise NothingIngestedError(agrag.data_dir)
    vector_store: VectorStoreConfig = (
        EdgeVectorStoreConfig()
        if spec.vector_backend is VectorBackend.EDGE
        else QdrantVectorStoreConfig(collection_prefix=spec.collection_prefix or defaults.QDRANT_COLLECTION_PREFIX)
    )
    retrieval = settings.retrieval.model_copy(update={"rrf_k": spec.rrf_k})
    hashed = spec.embedding_model.startswith(HASHED_PREFIX)
    backend = EmbedderBackend.HASHED if hashed else EmbedderBackend.TORCH
    # the model loads only if never recorded
    embedder = SentenceTransformersTextEmbedder(spec.embedding_model, backend=backend.value)
    return open_knowledge_store(agrag, vector_store, embedder, retrieval)
