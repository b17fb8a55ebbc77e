"""Every component constructor refuses a bad argument with ``ComponentConfigError``, saying what and how to fix it."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, cast

import pytest

from agrag.components import errors
from agrag.components.chunkers.fixed_size_chunker import FixedSizeChunker
from agrag.components.chunkers.sentence_chunker import SentenceChunker
from agrag.components.chunkers.structural_chunker import StructuralChunker
from agrag.components.communities.leiden_community_detector import LeidenCommunityDetector
from agrag.components.component_errors import ComponentConfigError
from agrag.components.cutters.limit_cutter import LimitCutter
from agrag.components.data_models.ontology import Ontology
from agrag.components.embedders.sentence_transformers_text_embedder import SentenceTransformersTextEmbedder
from agrag.components.errors import AgragError, ConfigError
from agrag.components.extractors.lexical_entity_extractor import LexicalEntityExtractor
from agrag.components.extractors.llm_entity_extractor import LLMEntityExtractor
from agrag.components.joiners.rrf_joiner import RRFJoiner
from agrag.components.llm.openai_chat_client import OpenAIChatClient
from agrag.components.loaders.folder_loader import FolderLoader
from agrag.components.reporters.extractive_community_reporter import ExtractiveCommunityReporter
from agrag.components.reporters.llm_community_reporter import LLMCommunityReporter
from agrag.components.rerankers.cross_encoder_reranker import CrossEncoderReranker
from agrag.components.rerankers.node_distance_reranker import NodeDistanceReranker
from agrag.components.resolvers.entity_resolver import EntityResolver
from agrag.components.stores.graph_store import GraphStore
from agrag.components.stores.qdrant_server_vector_store import QdrantServerVectorStore
from agrag.components.stores.vector_store import VectorCollection
from agrag.service.client.errors import error_from

NO_GRAPH = cast(GraphStore, None)  # the argument checks run before any store is touched


def _client() -> OpenAIChatClient:
    return OpenAIChatClient("http://127.0.0.1:9/v1", "model", None)


# (what is built, the name the message starts with, a word of the problem, a word of the fix)
BAD_ARGUMENTS: list[tuple[Callable[[], Any], str, str, str]] = [
    (lambda: StructuralChunker(max_chars=0), "StructuralChunker", "at least 1", "ingest.chunker.max_chars"),
    (lambda: SentenceChunker(overlap_sentences=-1), "SentenceChunker", "overlap_sentences", "ingest.chunker"),
    (lambda: FixedSizeChunker(size=100, overlap=100), "FixedSizeChunker", "overlap", "ingest.chunker.size"),
    (lambda: FolderLoader(max_bytes=0), "FolderLoader", "max_bytes", "ingest.loader.max_file_bytes"),
    (lambda: FolderLoader(suffixes=[".docx"]), "FolderLoader", ".docx", "ingest.loader.suffixes"),
    (lambda: LexicalEntityExtractor(min_name_length=0), "LexicalEntityExtractor", "min_name_length", "Set ingest"),
    (lambda: LLMEntityExtractor(_client(), Ontology(), prompt="short"), "LLMEntityExtractor", "'short'", "rich"),
    (lambda: LLMEntityExtractor(_client(), Ontology(), concurrency=0), "LLMEntityExtractor", "concurrency", "Set"),
    (
        lambda: EntityResolver(fuzzy_merge_threshold=80.0, fuzzy_candidate_threshold=85.0),
        "EntityResolver",
        "candidate_threshold",
        "ingest.resolution.fuzzy",
    ),
    (lambda: EntityResolver(embedding_threshold=1.5), "EntityResolver", "[0, 1]", "between 0 and 1"),
    (
        lambda: LeidenCommunityDetector(max_cluster_size=1),
        "LeidenCommunityDetector",
        "at least 2",
        "ingest.communities",
    ),
    (lambda: LeidenCommunityDetector(resolution=float("nan")), "LeidenCommunityDetector", "positive", "resolution"),
    (lambda: ExtractiveCommunityReporter(sentences=0), "ExtractiveCommunityReporter", "sentences", "report_sentences"),
    (lambda: LLMCommunityReporter(_client(), max_input_chars=10), "LLMCommunityReporter", "100", "Pass 100"),
    (
        lambda: SentenceTransformersTextEmbedder(batch_size=0),
        "SentenceTransformersTextEmbedder",
        "batch_size",
        "embedder",
    ),
    (lambda: RRFJoiner(k=0), "RRFJoiner", "at least 1", "RETRIEVAL_RRF_K"),
    (lambda: LimitCutter(limit=0), "LimitCutter", "at least 1", "recipe's limit"),
    (
        lambda: CrossEncoderReranker("/models/ce", limit=5, community_slots=-1),
        "CrossEncoderReranker",
        "-1",
        "community",
    ),
    (lambda: NodeDistanceReranker(NO_GRAPH, top_entities=0), "NodeDistanceReranker", "top_entities=0", "Pass"),
    (
        lambda: QdrantServerVectorStore(VectorCollection.CHUNKS, 384),
        "QdrantServerVectorStore",
        "exactly one of url or path",
        "AGRAG_QDRANT_URL",
    ),
]


@pytest.mark.parametrize(("build", "component", "problem", "fix"), BAD_ARGUMENTS)
def test_a_bad_argument_is_a_component_config_error_saying_what_and_how(
    build: Callable[[], Any], component: str, problem: str, fix: str
) -> None:
    with pytest.raises(ComponentConfigError) as caught:
        build()
    error = caught.value
    assert isinstance(error, ConfigError) and isinstance(error, AgragError)
    assert str(error).startswith(f"{component}: ")
    assert error.component == component
    assert problem in error.problem
    assert fix in error.fix


def test_it_is_importable_from_the_error_tree_and_rebuilt_by_name_on_the_client() -> None:
    assert errors.ComponentConfigError is ComponentConfigError
    with pytest.raises(AttributeError, match="NoSuchError"):
        _ = errors.NoSuchError  # type: ignore[attr-defined]
    message = str(ComponentConfigError("RRFJoiner", "RRF k must be at least 1, got 0", "Set RETRIEVAL_RRF_K."))
    rebuilt = error_from(400, {"error": "ComponentConfigError", "message": message})
    assert type(rebuilt) is ComponentConfigError
    assert str(rebuilt) == message
