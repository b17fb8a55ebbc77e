"""Builds the ingestion components a validated configuration asks for (no algorithms here)."""

from __future__ import annotations

from dataclasses import dataclass

from agrag.components.chunkers.fixed_size_chunker import FixedSizeChunker
from agrag.components.chunkers.sentence_chunker import SentenceChunker
from agrag.components.chunkers.structural_chunker import StructuralChunker
from agrag.components.data_models.ontology import Ontology, RelationPattern
from agrag.components.data_models.phase_key import config_hash
from agrag.components.errors import LLMNotConfiguredError
from agrag.components.llm.openai_chat_client import OpenAIChatClient
from agrag.components.llm.sqlite_llm_cache import SqliteLLMCache
from agrag.components.resolvers.entity_resolver import Embed, EntityResolver
from agrag.pipelines.config_models import (
    AgragConfig,
    ChunkerConfig,
    CommunityConfig,
    FixedChunkerConfig,
    IngestConfig,
    LLMExtractorConfig,
    OntologyConfig,
    ResolutionConfig,
    SentenceChunkerConfig,
)
from agrag.pipelines.ingest_plans import planned_extractors
from agrag.pipelines.settings import AgragSettings

Chunker = StructuralChunker | SentenceChunker | FixedSizeChunker


def chunker_for(config: ChunkerConfig) -> Chunker:
    """The chunker of ``ingest/chunker``."""
    if isinstance(config, SentenceChunkerConfig):
        return SentenceChunker(config.max_chars, config.overlap_sentences, config.table_max_rows)
    if isinstance(config, FixedChunkerConfig):
        return FixedSizeChunker(config.size, config.overlap, config.table_max_rows)
    return StructuralChunker(config.max_chars, config.section_max_chars, config.table_max_rows)


def entity_resolver(config: ResolutionConfig, embed: Embed, llm: OpenAIChatClient | None) -> EntityResolver:
    """The resolver of ``ingest.resolution``: fuzzy names, short forms, embeddings (``embed``) and the LLM check."""
    return EntityResolver(
        fuzzy_enabled=config.fuzzy.enabled,
        fuzzy_merge_threshold=config.fuzzy.merge_threshold,
        fuzzy_candidate_threshold=config.fuzzy.candidate_threshold,
        short_forms_enabled=config.short_forms.enabled,
        embed=embed if config.embedding.enabled else None,
        embedding_threshold=config.embedding.threshold,
        llm=llm if config.llm.enabled else None,
        llm_max_pairs=config.llm.max_pairs,
    )


def ontology_from_config(config: OntologyConfig) -> Ontology:
    """The ontology of ``ingest/ontology`` as the data type the extractors and the pruner read."""
    patterns = tuple(
        RelationPattern(rel_type, source, target)
        for rel_type, pairs in sorted(config.relation_types.items())
        for source, target in pairs
    )
    return Ontology(
        entity_labels=tuple(config.entity_labels),
        relations=patterns,
        label_descriptions=tuple(config.label_descriptions.items()),
        relation_descriptions=tuple(config.relation_descriptions.items()),
    )


LLM_CACHE_FILE = "llm-cache.sqlite"


def llm_client(settings: AgragSettings) -> OpenAIChatClient | None:
    """The client of the AGRAG_LLM_* endpoint, or None when no endpoint is set.

    Its answers are cached in the data dir (``llm-cache.sqlite``), so no prompt is paid for twice.
    """
    if not settings.llm_base_url:
        return None
    return OpenAIChatClient(
        settings.llm_base_url,
        settings.llm_model,
        settings.llm_api_key.get_secret_value() if settings.llm_api_key else None,
        timeout_seconds=settings.llm_timeout_seconds,
        max_retries=settings.llm_max_retries,
        cache=SqliteLLMCache(settings.data_dir / LLM_CACHE_FILE),
    )


def reports_use_llm(config: CommunityConfig, llm: OpenAIChatClient | None) -> bool:
    """Whether community reports come from the LLM (``communities.reports``: auto, llm or extractive)."""
    if config.reports == "llm" and llm is None:
        raise LLMNotConfiguredError("ingest.communities.reports=llm")
    return config.reports == "llm" or (config.reports == "auto" and llm is not None)


def check_llm_needs(config: IngestConfig, llm: OpenAIChatClient | None) -> None:
    """Fail before any work when the configuration asks for an LLM and none is configured."""
    if isinstance(config.extractor, LLMExtractorConfig) and llm is None:
        raise LLMNotConfiguredError("ingest/extractor=llm")
    if llm is None and any(isinstance(e, LLMExtractorConfig) for e in planned_extractors(config)):
        raise LLMNotConfiguredError("ingest.plan.rules (a rule with extractor llm)")
    if config.resolution.llm.enabled and llm is None:
        raise LLMNotConfiguredError("ingest.resolution.llm.enabled=true")
    if config.communities.enabled:
        reports_use_llm(config.communities, llm)


@dataclass(frozen=True, slots=True)
class PhaseHashes:
    """The configuration hash of each resumable phase: a phase's journaled output is reused only under its hash.

    Each hash covers the settings of its phase and of every phase before it.
    """

    chunk: str
    extract: str
    resolve: str
    embed: str


def phase_hashes(config: AgragConfig, llm_model: str | None) -> PhaseHashes:
    """Hash the settings each phase's output depends on (the LLM model counts for LLM extraction only)."""
    ingest = config.ingest
    chunk = config_hash(ingest.chunker.model_dump_json())
    extractor_model = llm_model if isinstance(ingest.extractor, LLMExtractorConfig) else ""
    extract = config_hash(
        chunk, ingest.extractor.model_dump_json(), ingest.ontology.model_dump_json(), extractor_model or ""
    )
    resolve_model = llm_model if ingest.resolution.llm.enabled else ""
    resolve = config_hash(extract, ingest.resolution.model_dump_json(), config.embedder.model, resolve_model or "")
    embed = config_hash(chunk, config.embedder.model)
    return PhaseHashes(chunk=chunk, extract=extract, resolve=resolve, embed=embed)
