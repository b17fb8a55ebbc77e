"""The stages of ingestion as Prefect tasks, each a thin call into components."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace

from prefect import get_run_logger, task
from prefect.cache_policies import NO_CACHE
from tqdm import tqdm

from agrag.components.communities.leiden_community_detector import LeidenCommunityDetector
from agrag.components.data_models.chunk import Chunk
from agrag.components.data_models.community import Community
from agrag.components.data_models.entity import Entity
from agrag.components.data_models.extraction import ChunkFailure, Extraction
from agrag.components.data_models.llm_estimate import LLMEstimate
from agrag.components.data_models.loaded_document import LoadedDocument
from agrag.components.data_models.ontology import PrunedReport
from agrag.components.data_models.resolution import MERGED, Resolution
from agrag.components.embedders.sentence_transformers_text_embedder import SentenceTransformersTextEmbedder
from agrag.components.errors import LLMBudgetError
from agrag.components.extractors.lexical_entity_extractor import LexicalEntityExtractor
from agrag.components.extractors.llm_entity_extractor import LLMEntityExtractor
from agrag.components.extractors.ontology_pruner import OntologyPruner
from agrag.components.extractors.triples_file_extractor import TriplesFileExtractor
from agrag.components.llm.openai_chat_client import OpenAIChatClient
from agrag.components.loaders.file_failure import FileFailure
from agrag.components.loaders.folder_loader import FolderLoader
from agrag.components.reporters.extractive_community_reporter import ExtractiveCommunityReporter
from agrag.components.reporters.llm_community_reporter import LLMCommunityReporter
from agrag.components.resolvers.entity_resolver import EntityResolver
from agrag.components.stores.knowledge_store import KnowledgeStore
from agrag.components.stores.vector_payloads import (
    chunk_payload,
    community_payload,
    community_report_text,
    entity_payload,
)
from agrag.components.stores.vector_store import MERGED_STATUS, STATUS_FIELD, VectorPoint
from agrag.pipelines.config_models import (
    CommunityConfig,
    IngestConfig,
    LLMExtractorConfig,
    ResolutionConfig,
    TriplesExtractorConfig,
)
from agrag.pipelines.ingest_components import chunker_for, ontology_from_config

# Every task uses NO_CACHE and persist_result=False: stage inputs are large in-memory objects and open stores,
# which Prefect must neither hash nor persist.


@contextmanager
def _bar(enabled: bool, total: int, what: str, unit: str) -> Iterator[Callable[[int], None] | None]:
    """A progress bar for a long stage, or None when bars are off."""
    if not enabled or total == 0:
        yield None
        return
    with tqdm(total=total, desc=what, unit=unit, leave=False) as bar:
        yield bar.update


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
    loader = FolderLoader(max_bytes=config.loader.max_file_bytes, suffixes=config.loader.suffixes)
    out = loader.run(root=folder)
    return out["documents"], out["failures"]  # type: ignore[return-value]


@task(name="select-changed", cache_policy=NO_CACHE, persist_result=False)
def select_changed(documents: list[LoadedDocument], store: KnowledgeStore) -> list[LoadedDocument]:
    """Keep the documents whose version is not the stored current one (content hashes decide)."""
    stored = store.graph.document_versions([d.document.id for d in documents])
    return [d for d in documents if stored.get(d.document.id) != d.document.version]


@task(name="chunk", cache_policy=NO_CACHE, persist_result=False)
def chunk_documents(documents: list[LoadedDocument], config: IngestConfig) -> list[Chunk]:
    """Cut documents with the configured chunker (``ingest/chunker``)."""
    return chunker_for(config.chunker).run(documents=documents)["chunks"]


@task(name="extract", cache_policy=NO_CACHE, persist_result=False)
def extract_entities(
    chunks: list[Chunk], config: IngestConfig, llm: OpenAIChatClient | None, progress: bool
) -> tuple[Extraction, list[ChunkFailure]]:
    """Find entities and relations in the searchable chunks with the configured extractor (``ingest/extractor``)."""
    settings = config.extractor
    searchable = [c for c in chunks if c.searchable]
    if isinstance(settings, TriplesExtractorConfig):
        out = TriplesFileExtractor(settings.path).run(chunks=searchable)
        if out["unmatched_chunks"]:
            get_run_logger().warning(
                "%d of %d chunks match no passage of %s and got no entities",
                out["unmatched_chunks"],
                len(searchable),
                settings.path,
            )
        return out["extraction"], []
    if isinstance(settings, LLMExtractorConfig):
        assert llm is not None  # checked before the run starts
        with _bar(progress, len(searchable), "LLM extraction", "chunk") as tick:
            extractor = LLMEntityExtractor(
                llm,
                ontology_from_config(config.ontology),
                prompt=settings.prompt,
                gleaning_rounds=settings.gleaning_rounds,
                concurrency=settings.concurrency,
                progress=tick,
            )
            _within_budget(extractor.estimate(searchable), config.max_llm_calls)
            llm_out = extractor.run(chunks=searchable)
        failures: list[ChunkFailure] = llm_out["failures"]
        for failure in failures:
            get_run_logger().warning("chunk %s got no entities: %s", failure.chunk_id, failure.reason)
        return llm_out["extraction"], failures
    extraction = LexicalEntityExtractor(min_name_length=settings.min_name_length).run(chunks=searchable)["extraction"]
    return extraction, []


def _within_budget(estimate: LLMEstimate, limit: int) -> None:
    """Log the estimate of LLM extraction; refuse it, before any call, when it is over ``ingest.max_llm_calls``."""
    get_run_logger().info(
        "LLM extraction: %d chunks, up to %d calls, about %d prompt tokens (%d chunks answered from the cache)",
        estimate.items,
        estimate.calls,
        estimate.prompt_tokens,
        estimate.cached,
    )
    if estimate.calls > limit:
        raise LLMBudgetError("LLM extraction", estimate, limit)


@task(name="prune", cache_policy=NO_CACHE, persist_result=False)
def prune_to_ontology(extraction: Extraction, config: IngestConfig) -> tuple[Extraction, PrunedReport]:
    """Drop what the ontology (``ingest/ontology``) does not declare, and report it."""
    out = OntologyPruner(ontology_from_config(config.ontology)).run(extraction=extraction)
    return out["extraction"], out["pruned"]


@task(name="resolve", cache_policy=NO_CACHE, persist_result=False)
def resolve_entities(
    extraction: Extraction,
    config: ResolutionConfig,
    store: KnowledgeStore,
    embedder: SentenceTransformersTextEmbedder,
    llm: OpenAIChatClient | None,
) -> Resolution:
    """Merge duplicates against the batch and the stored entities; keep homonyms apart; list near misses."""
    resolver = EntityResolver(
        fuzzy_enabled=config.fuzzy.enabled,
        fuzzy_merge_threshold=config.fuzzy.merge_threshold,
        fuzzy_candidate_threshold=config.fuzzy.candidate_threshold,
        embed=embedder.embed_batch if config.embedding.enabled else None,
        embedding_threshold=config.embedding.threshold,
        llm=llm if config.llm.enabled else None,
        llm_max_pairs=config.llm.max_pairs,
    )
    resolution: Resolution = resolver.run(extraction=extraction, known=store.graph.canonical_entities())["resolution"]
    return resolution


@dataclass(frozen=True, slots=True)
class EmbeddedPoints:
    """The vector points one ingest writes: searchable chunks and new entities."""

    chunks: list[VectorPoint]
    entities: list[VectorPoint]


@task(name="embed", cache_policy=NO_CACHE, persist_result=False)
def embed(
    chunks: list[Chunk], entities: list[Entity], merged: set[str], embedder: SentenceTransformersTextEmbedder
) -> EmbeddedPoints:
    """Embed the searchable chunks and the entities that have no vectors yet (merged ones too, for an undo)."""
    searchable = [c for c in chunks if c.searchable]
    chunk_texts = [chunk_embedding_text(c) for c in searchable]
    entity_texts = [entity_embedding_text(e) for e in entities]
    vectors = embedder.embed_batch(chunk_texts + entity_texts)
    chunk_points = [
        VectorPoint(c.id, vector, text, chunk_payload(c))
        for c, vector, text in zip(searchable, vectors[: len(searchable)], chunk_texts, strict=True)
    ]
    entity_points = [
        VectorPoint(e.id, vector, text, entity_payload(e, merged=e.id in merged))
        for e, vector, text in zip(entities, vectors[len(searchable) :], entity_texts, strict=True)
    ]
    return EmbeddedPoints(chunk_points, entity_points)


@dataclass(frozen=True, slots=True)
class WriteOutcome:
    """Chunks of older versions superseded by the write, and entities that only they supported (deleted)."""

    superseded: int
    entities_removed: int


@task(name="write", cache_policy=NO_CACHE, persist_result=False)
def write_stores(
    store: KnowledgeStore,
    documents: list[LoadedDocument],
    chunks: list[Chunk],
    resolution: Resolution,
    points: EmbeddedPoints,
    *,
    run_id: str,
) -> WriteOutcome:
    """Write chunks, entities, mentions, relations and resolution decisions; commit each document last.

    The chunks of older versions are marked superseded, and what only they supported (relation support, entities)
    leaves the current graph. Every write is an upsert keyed by id, so a run interrupted here can simply run again.
    """
    extraction = resolution.extraction
    superseded = store.graph.write_chunks([d.document for d in documents], chunks)
    store.chunks.upsert(points.chunks)
    store.graph.upsert_entities(extraction.entities)
    store.entities.upsert(points.entities)
    store.graph.upsert_mentions(extraction.mentions)
    store.graph.upsert_about(extraction.about)
    store.graph.upsert_relations(extraction.relations)
    store.graph.apply_resolution(resolution.decisions, resolution.candidates, run_id)
    merged = [d.member_id for d in resolution.decisions if d.decision == MERGED]
    store.entities.set_payload(merged, {STATUS_FIELD: MERGED_STATUS})
    removed = store.retire_chunks(superseded)  # after the new version's links, so what it still supports stays
    chunk_counts = Counter(c.document_id for c in chunks)
    store.graph.commit_documents([(d.document, chunk_counts[d.document.id]) for d in documents])
    return WriteOutcome(len(superseded), len(removed))


@task(name="communities", cache_policy=NO_CACHE, persist_result=False)
def detect_communities(store: KnowledgeStore, config: CommunityConfig) -> list[Community]:
    """Hierarchical Leiden over the resolved entity graph."""
    entity_ids, edges = store.graph.entity_graph()
    detector = LeidenCommunityDetector(
        max_levels=config.max_levels,
        max_cluster_size=config.max_cluster_size,
        min_size=config.min_size,
        resolution=config.resolution,
        seed=config.seed,
    )
    communities: list[Community] = detector.run(entity_ids=entity_ids, edges=edges)["communities"]
    return communities


@dataclass(frozen=True, slots=True)
class ReportOutcome:
    """How the reports stage went: reports by method, reused reports, and LLM fallbacks."""

    by_method: dict[str, int]
    reused: int
    fallbacks: int


@task(name="reports", cache_policy=NO_CACHE, persist_result=False)
def write_reports(
    store: KnowledgeStore,
    communities: list[Community],
    config: CommunityConfig,
    llm: OpenAIChatClient | None,
    embedder: SentenceTransformersTextEmbedder,
    *,
    progress: bool = False,
) -> ReportOutcome:
    """Report on every community, embed the reports, and store the hierarchy in place of the previous one.

    A community whose members did not change keeps its stored report (no LLM call, no new sentence picking).
    """
    previous = {c.id: c for c in store.graph.communities()}
    wanted_method = "llm" if llm is not None else "extractive"
    reused = {
        c.id for c in communities if (old := previous.get(c.id)) and old.report and old.report.method == wanted_method
    }
    todo = [c for c in communities if c.id not in reused]
    fallbacks = 0
    written: dict[str, Community] = {}
    if todo:
        entities, relations, chunks, mentions = store.graph.community_inputs(
            sorted({e for c in todo for e in c.entity_ids})
        )
        extractive = ExtractiveCommunityReporter(sentences=config.report_sentences)
        if llm is None:
            reported = extractive.run(todo, entities, relations, chunks, mentions)["communities"]
        else:
            with _bar(progress, len(todo), "LLM community reports", "report") as tick:
                reporter = LLMCommunityReporter(llm, fallback=extractive, progress=tick)
                out = reporter.run(todo, entities, relations, chunks, mentions)
            reported, fallbacks = out["communities"], int(out["fallbacks"])
        written = {c.id: c for c in reported}
    final = [written.get(c.id) or replace(c, report=previous[c.id].report) for c in communities]
    texts = [community_report_text(c) for c in final]
    vectors = embedder.embed_batch(texts) if final else []
    store.communities.upsert(
        [VectorPoint(c.id, v, t, community_payload(c)) for c, v, t in zip(final, vectors, texts, strict=True)]
    )
    store.communities.delete(sorted(set(previous) - {c.id for c in final}))
    store.graph.replace_communities(final)
    return ReportOutcome(dict(Counter(c.report.method for c in final if c.report)), len(reused), fallbacks)
