"""The stages of ingestion as Prefect tasks, each a thin call into components."""

from __future__ import annotations

from collections import Counter

from prefect import get_run_logger, task
from prefect.cache_policies import NO_CACHE

from agrag.components.chunkers.structural_chunker import StructuralChunker
from agrag.components.data_models.chunk import Chunk
from agrag.components.data_models.entity import Entity
from agrag.components.data_models.extraction import Extraction
from agrag.components.data_models.loaded_document import LoadedDocument
from agrag.components.embedders.sentence_transformers_text_embedder import SentenceTransformersTextEmbedder
from agrag.components.extractors.lexical_entity_extractor import LexicalEntityExtractor
from agrag.components.extractors.triples_file_extractor import TriplesFileExtractor
from agrag.components.loaders.text_file_loader import FileFailure, TextFileLoader
from agrag.components.resolvers.exact_name_resolver import ExactNameResolver
from agrag.components.stores.knowledge_store import KnowledgeStore
from agrag.components.stores.vector_payloads import chunk_payload, entity_payload
from agrag.components.stores.vector_store import STATUS_FIELD, SUPERSEDED, VectorPoint
from agrag.pipelines.config_models import IngestConfig, TriplesExtractorConfig

# Every task uses NO_CACHE and persist_result=False: stage inputs are large in-memory objects and open stores,
# which Prefect must neither hash nor persist.


def chunk_embedding_text(chunk: Chunk) -> str:
    """What the chunk's vectors are computed from: where it sits, then what it says.

    A heading the chunk's first line already states is not repeated.
    """
    path = chunk.heading_path if chunk.heading_path[:1] == (chunk.title,) else (chunk.title, *chunk.heading_path)
    first_line = chunk.text.split("\n", 1)[0].lstrip("#").strip()
    if path and path[-1] == first_line:
        path = path[:-1]
    prefix = " > ".join(p for p in path if p)
    return f"{prefix}\n{chunk.text}" if prefix else chunk.text


def entity_embedding_text(entity: Entity) -> str:
    """What the entity's vectors are computed from: its name, type and description."""
    return f"{entity.name} ({entity.label}): {entity.description}"


@task(name="load", cache_policy=NO_CACHE, persist_result=False)
def load_documents(folder: str, config: IngestConfig) -> tuple[list[LoadedDocument], list[FileFailure]]:
    """Read the folder's files; unreadable files are reported, not fatal."""
    out = TextFileLoader(max_bytes=config.loader.max_file_bytes).run(root=folder)
    return out["documents"], out["failures"]  # type: ignore[return-value]


@task(name="select-changed", cache_policy=NO_CACHE, persist_result=False)
def select_changed(documents: list[LoadedDocument], store: KnowledgeStore) -> list[LoadedDocument]:
    """Keep the documents whose version is not the stored current one (content hashes decide)."""
    stored = store.graph.document_versions([d.document.id for d in documents])
    return [d for d in documents if stored.get(d.document.id) != d.document.version]


@task(name="chunk", cache_policy=NO_CACHE, persist_result=False)
def chunk_documents(documents: list[LoadedDocument], config: IngestConfig) -> list[Chunk]:
    """Cut documents at their headings."""
    return StructuralChunker(max_chars=config.chunker.max_chars).run(documents=documents)["chunks"]


@task(name="extract", cache_policy=NO_CACHE, persist_result=False)
def extract_entities(chunks: list[Chunk], config: IngestConfig) -> Extraction:
    """Find entities and relations with the configured extractor (``ingest/extractor``)."""
    settings = config.extractor
    if isinstance(settings, TriplesExtractorConfig):
        out = TriplesFileExtractor(settings.path).run(chunks=chunks)
        if out["unmatched_chunks"]:
            get_run_logger().warning(
                "%d of %d chunks match no passage of %s and got no entities",
                out["unmatched_chunks"],
                len(chunks),
                settings.path,
            )
        return out["extraction"]  # type: ignore[no-any-return]
    return LexicalEntityExtractor(min_name_length=settings.min_name_length).run(chunks=chunks)["extraction"]


@task(name="resolve", cache_policy=NO_CACHE, persist_result=False)
def resolve_entities(extraction: Extraction) -> Extraction:
    """Merge entities by normalized name."""
    return ExactNameResolver().run(extraction=extraction)["extraction"]


@task(name="embed", cache_policy=NO_CACHE, persist_result=False)
def embed(
    chunks: list[Chunk], entities: list[Entity], embedder: SentenceTransformersTextEmbedder
) -> tuple[list[VectorPoint], list[VectorPoint]]:
    """Embed chunks and the entities that have no vectors yet."""
    chunk_texts = [chunk_embedding_text(c) for c in chunks]
    entity_texts = [entity_embedding_text(e) for e in entities]
    vectors = embedder.embed_batch(chunk_texts + entity_texts)
    chunk_points = [
        VectorPoint(c.id, vector, text, chunk_payload(c))
        for c, vector, text in zip(chunks, vectors[: len(chunks)], chunk_texts, strict=True)
    ]
    entity_points = [
        VectorPoint(e.id, vector, text, entity_payload(e))
        for e, vector, text in zip(entities, vectors[len(chunks) :], entity_texts, strict=True)
    ]
    return chunk_points, entity_points


@task(name="write", cache_policy=NO_CACHE, persist_result=False)
def write_stores(
    store: KnowledgeStore,
    documents: list[LoadedDocument],
    chunks: list[Chunk],
    extraction: Extraction,
    points: tuple[list[VectorPoint], list[VectorPoint]],
) -> int:
    """Write chunks, entities, mentions and relations to both stores; commit each document last.

    Every write is an upsert keyed by id, so a run interrupted here can simply run again. Returns the number of
    chunks of older versions marked superseded.
    """
    chunk_points, entity_points = points
    superseded = store.graph.write_chunks([d.document for d in documents], chunks)
    store.chunks.upsert(chunk_points)
    store.chunks.set_payload(superseded, {STATUS_FIELD: SUPERSEDED})
    store.graph.upsert_entities(extraction.entities)
    store.entities.upsert(entity_points)
    store.graph.upsert_mentions(extraction.mentions)
    store.graph.upsert_about(extraction.about)
    store.graph.upsert_relations(extraction.relations)
    chunk_counts = Counter(c.document_id for c in chunks)
    store.graph.commit_documents([(d.document, chunk_counts[d.document.id]) for d in documents])
    return len(superseded)
