"""Opens the stores a configuration and the settings describe."""

from __future__ import annotations

from contextlib import ExitStack

from agrag.components.embedders.sentence_transformers_text_embedder import SentenceTransformersTextEmbedder
from agrag.components.embedders.sqlite_embedding_cache import SqliteEmbeddingCache
from agrag.components.errors import ConfigError
from agrag.components.stores.data_dir_lock import DataDirLock
from agrag.components.stores.graph_store import GraphStore
from agrag.components.stores.knowledge_store import KnowledgeStore
from agrag.components.stores.kuzu_graph_store import KuzuGraphStore
from agrag.components.stores.qdrant_edge_vector_store import QdrantEdgeVectorStore
from agrag.components.stores.sqlite_phase_journal import SqlitePhaseJournal
from agrag.components.stores.vector_store import STATUS_FIELD, VectorCollection, VectorStore
from agrag.pipelines.config_models import (
    EdgeVectorStoreConfig,
    EmbedderConfig,
    QdrantVectorStoreConfig,
    VectorStoreConfig,
)
from agrag.pipelines.settings import AgragSettings, RetrievalSettings, load_retrieval_settings

# Payload fields the chunk filters use; indexed so filtering never scans every point.
KEYWORD_FIELDS = {
    VectorCollection.CHUNKS: (STATUS_FIELD, "document_id"),
    VectorCollection.ENTITIES: (STATUS_FIELD,),
    VectorCollection.COMMUNITIES: ("level",),
}

PHASE_JOURNAL_FILE = "phases.sqlite"
MODEL_KEY = "embedding_model"
DIMENSION_KEY = "embedding_dimension"
VECTOR_BACKEND_KEY = "vector_store"


def open_embedding_cache(settings: AgragSettings, config: EmbedderConfig) -> SqliteEmbeddingCache | None:
    """The embedding cache of ``AGRAG_EMBEDDING_CACHE_DIR`` for the configured model, or None when it is unset."""
    if settings.embedding_cache_dir is None:
        return None
    return SqliteEmbeddingCache(settings.embedding_cache_dir, config.model)


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
            settings.vectors_dir / collection.value, collection, dimension, rrf_k, KEYWORD_FIELDS[collection]
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
        ConfigError: the data dir's vectors live in another backend; the message names the override to use.
    """
    recorded = graph.info().get(VECTOR_BACKEND_KEY)
    if recorded is None:
        graph.set_info({VECTOR_BACKEND_KEY: config.backend})
    elif recorded != config.backend:
        raise ConfigError(
            f"This data dir keeps its vectors in vector_store={recorded}, but the command asked for "
            f"vector_store={config.backend}. Add the override vector_store={recorded} (every agrag command takes it)."
        )


def open_knowledge_store(
    settings: AgragSettings,
    vector_store: VectorStoreConfig,
    embedder: SentenceTransformersTextEmbedder,
    retrieval: RetrievalSettings | None = None,
) -> KnowledgeStore:
    """Open the graph and the three vector collections; if one fails to open, the ones already open are closed."""
    rrf_k = (retrieval or load_retrieval_settings()).rrf_k
    with ExitStack() as opened:
        lock = DataDirLock(settings.data_dir)
        lock.acquire()
        opened.callback(lock.release)
        graph = KuzuGraphStore(settings.graph_path, buffer_pool_mb=settings.kuzu_buffer_pool_mb)
        opened.callback(graph.close)
        check_vector_backend(graph, vector_store)
        dimension = embedding_dimension(graph, embedder)
        chunks = open_vector_store(VectorCollection.CHUNKS, vector_store, settings, dimension, rrf_k)
        opened.callback(chunks.close)
        entities = open_vector_store(VectorCollection.ENTITIES, vector_store, settings, dimension, rrf_k)
        opened.callback(entities.close)
        communities = open_vector_store(VectorCollection.COMMUNITIES, vector_store, settings, dimension, rrf_k)
        opened.pop_all()
    journal = SqlitePhaseJournal(settings.data_dir / PHASE_JOURNAL_FILE)
    return KnowledgeStore(
        graph=graph, chunks=chunks, entities=entities, communities=communities, lock=lock, journal=journal
    )
