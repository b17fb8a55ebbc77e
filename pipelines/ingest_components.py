"""Builds the ingestion components a validated configuration asks for (no algorithms here)."""

from __future__ import annotations

from agrag.components.chunkers.fixed_size_chunker import FixedSizeChunker
from agrag.components.chunkers.sentence_chunker import SentenceChunker
from agrag.components.chunkers.structural_chunker import StructuralChunker
from agrag.components.data_models.ontology import Ontology, RelationPattern
from agrag.components.errors import LLMNotConfiguredError
from agrag.components.llm.openai_chat_client import OpenAIChatClient
from agrag.components.llm.sqlite_llm_cache import SqliteLLMCache
from agrag.pipelines.config_models import (
    ChunkerConfig,
    CommunityConfig,
    FixedChunkerConfig,
    IngestConfig,
    LLMExtractorConfig,
    OntologyConfig,
    SentenceChunkerConfig,
)
from agrag.pipelines.settings import AgragSettings

Chunker = StructuralChunker | SentenceChunker | FixedSizeChunker


def chunker_for(config: ChunkerConfig) -> Chunker:
    """The chunker of ``ingest/chunker``."""
    if isinstance(config, SentenceChunkerConfig):
        return SentenceChunker(config.max_chars, config.overlap_sentences, config.table_max_rows)
    if isinstance(config, FixedChunkerConfig):
        return FixedSizeChunker(config.size, config.overlap, config.table_max_rows)
    return StructuralChunker(config.max_chars, config.section_max_chars, config.table_max_rows)


def ontology_from_config(config: OntologyConfig) -> Ontology:
    """The ontology of ``ingest/ontology`` as the data type the extractors and the pruner read."""
    patterns = tuple(
        RelationPattern(rel_type, source, target)
        for rel_type, pairs in sorted(config.relation_types.items())
        for source, target in pairs
    )
    return Ontology(entity_labels=tuple(config.entity_labels), relations=patterns)


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
    if config.resolution.llm.enabled and llm is None:
        raise LLMNotConfiguredError("ingest.resolution.llm.enabled=true")
    if config.communities.enabled:
        reports_use_llm(config.communities, llm)
