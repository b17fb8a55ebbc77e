"""One source of defaults: the YAML under conf/, the config models and the component constructors agree.

Every option of every config group is composed with Hydra and validated; the YAML of each option that documents
defaults must hold the model's defaults, and every component argument a setting feeds must default to the same
value. A failure lists every drift at once.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, get_args

import pytest
from pydantic import BaseModel
from pydantic_core import PydanticUndefined

from agrag.components.chunkers.fixed_size_chunker import FixedSizeChunker
from agrag.components.chunkers.sentence_chunker import SentenceChunker
from agrag.components.chunkers.structural_chunker import StructuralChunker
from agrag.components.communities.leiden_community_detector import LeidenCommunityDetector
from agrag.components.cutters.limit_cutter import LimitCutter
from agrag.components.data_models.edge_shard_settings import EdgeShardSettings
from agrag.components.data_models.qdrant_collection_settings import QdrantCollectionSettings
from agrag.components.embedders.sentence_transformers_text_embedder import SentenceTransformersTextEmbedder
from agrag.components.expanders.graph_bfs_expander import GraphBfsExpander
from agrag.components.expanders.graph_community_expander import GraphCommunityExpander
from agrag.components.extractors.lexical_entity_extractor import LexicalEntityExtractor
from agrag.components.extractors.llm_entity_extractor import LLMEntityExtractor
from agrag.components.joiners.rrf_joiner import RRFJoiner
from agrag.components.loaders.folder_loader import FolderLoader
from agrag.components.reporters.extractive_community_reporter import ExtractiveCommunityReporter
from agrag.components.rerankers.cross_encoder_reranker import CrossEncoderReranker
from agrag.components.resolvers.entity_resolver import EntityResolver
from agrag.components.retrievers.llm_query_analyzer import LLMQueryAnalyzer
from agrag.components.retrievers.page_rank_chunk_retriever import PageRankChunkRetriever
from agrag.components.stores.qdrant_edge_vector_store import QdrantEdgeVectorStore
from agrag.components.stores.qdrant_server_vector_store import QdrantServerVectorStore
from agrag.pipelines.config_loader import available_options, compose_option, load_config, packaged_conf_dir
from agrag.pipelines.config_models import (
    AgragConfig,
    CommunityConfig,
    EdgeVectorStoreConfig,
    EmbedderConfig,
    EmbeddingResolutionConfig,
    FixedChunkerConfig,
    FuzzyResolutionConfig,
    LexicalExtractorConfig,
    LLMExtractorConfig,
    LLMResolutionConfig,
    LoaderConfig,
    QdrantVectorStoreConfig,
    RecipeConfig,
    SentenceChunkerConfig,
    StructuralChunkerConfig,
)
from agrag.pipelines.settings import RetrievalSettings

# The config groups and the field of AgragConfig (dotted) each one fills.
GROUPS = {
    "recipe": "recipe",
    "embedder": "embedder",
    "vector_store": "vector_store",
    "ingest": "ingest",
    "evaluation": "evaluation",
    "ingest/chunker": "ingest.chunker",
    "ingest/extractor": "ingest.extractor",
    "ingest/ontology": "ingest.ontology",
}
# Groups whose options are choices of values on purpose (each recipe its own limit, each ontology its own labels, the
# embedder's backend): only their default option documents the model's defaults. In the other groups each option is
# a model of its own.
CHOICE_GROUPS = {"recipe": "hybrid", "ingest/ontology": "open", "embedder": "minilm"}
# Keys that name or describe an option rather than set a default.
IDENTITY_KEYS = {"name", "description"}
# Options that cannot be composed without a value the user must give.
REQUIRED_OVERRIDES = {("ingest/extractor", "triples"): ["ingest.extractor.path=/data/openie.json"]}


@dataclass(frozen=True)
class Link:
    """A component argument fed by a setting: both must default to the same value."""

    key: str
    model: type[BaseModel]
    field: str
    component: Callable[..., Any]
    param: str


def links(
    prefix: str, model: type[BaseModel], component: Callable[..., Any], fields: str, option: str = ""
) -> list[Link]:
    """The links of one model to one component.

    ``fields`` lists the fields, a field named ``field=argument`` where its argument's name differs; each key is
    ``prefix.field`` (``PREFIX_FIELD`` for an env prefix), followed by `` (option)`` where given.
    """
    found = []
    for word in fields.split():
        field, _, arg = word.partition("=")
        key = f"{prefix}_{field.upper()}" if prefix.isupper() else f"{prefix}.{field}"
        found.append(Link(key + (f" ({option})" if option else ""), model, field, component, arg or field))
    return found


# fmt: off
LINKS = (
    *links("embedder", EmbedderConfig, SentenceTransformersTextEmbedder, "model device batch_size"),
    *links("vector_store", QdrantVectorStoreConfig, QdrantServerVectorStore, "collection_prefix=prefix"),
    *links("vector_store", QdrantVectorStoreConfig, QdrantCollectionSettings,
           "on_disk_payload hnsw_m hnsw_ef_construct quantization"),
    *links("vector_store", EdgeVectorStoreConfig, EdgeShardSettings, "quantization indexing_threshold_kb oversampling",
           "edge"),
    *links("ingest.loader", LoaderConfig, FolderLoader, "max_file_bytes=max_bytes suffixes"),
    *links("ingest.chunker", StructuralChunkerConfig, StructuralChunker, "max_chars section_max_chars table_max_rows",
           "structural"),
    *links("ingest.chunker", SentenceChunkerConfig, SentenceChunker, "max_chars overlap_sentences table_max_rows",
           "sentence"),
    *links("ingest.chunker", FixedChunkerConfig, FixedSizeChunker, "size overlap table_max_rows", "fixed"),
    *links("ingest.extractor", LexicalExtractorConfig, LexicalEntityExtractor, "min_name_length", "lexical"),
    *links("ingest.extractor", LLMExtractorConfig, LLMEntityExtractor, "prompt gleaning_rounds concurrency", "llm"),
    *links("ingest.resolution.fuzzy", FuzzyResolutionConfig, EntityResolver,
           "enabled=fuzzy_enabled merge_threshold=fuzzy_merge_threshold candidate_threshold=fuzzy_candidate_threshold"),
    *links("ingest.resolution.embedding", EmbeddingResolutionConfig, EntityResolver, "threshold=embedding_threshold"),
    *links("ingest.resolution.llm", LLMResolutionConfig, EntityResolver, "max_pairs=llm_max_pairs"),
    *links("ingest.communities", CommunityConfig, LeidenCommunityDetector,
           "max_levels max_cluster_size min_size resolution seed"),
    *links("ingest.communities", CommunityConfig, ExtractiveCommunityReporter, "report_sentences=sentences"),
    *links("recipe", RecipeConfig, LimitCutter, "limit"),
    *links("recipe", RecipeConfig, GraphCommunityExpander, "community_top_k=top_k"),
    *links("recipe", RecipeConfig, CrossEncoderReranker, "community_top_k=community_slots"),
    *links("RETRIEVAL", RetrievalSettings, RRFJoiner, "rrf_k=k"),
    *links("RETRIEVAL", RetrievalSettings, QdrantEdgeVectorStore, "rrf_k"),
    *links("RETRIEVAL", RetrievalSettings, QdrantServerVectorStore, "rrf_k"),
    *links("RETRIEVAL", RetrievalSettings, PageRankChunkRetriever, "ppr_damping=damping ppr_temperature=temperature"),
    *links("RETRIEVAL", RetrievalSettings, GraphBfsExpander, "traversal_depth=depth traversal_per_hop=per_hop"),
    *links("RETRIEVAL", RetrievalSettings, LLMQueryAnalyzer, "query_analysis_timeout_seconds=timeout_seconds"),
)
# fmt: on


@pytest.fixture(autouse=True)
def _packaged_conf_only(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Compose the shipped conf/ alone: no ./conf of the working folder, no AGRAG_CONFIG_DIR."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("AGRAG_CONFIG_DIR", raising=False)
    for name in ("RETRIEVAL_RRF_K", "RETRIEVAL_PPR_DAMPING", "RETRIEVAL_PPR_TEMPERATURE", "RETRIEVAL_TRAVERSAL_DEPTH"):
        monkeypatch.delenv(name, raising=False)


def _options() -> Iterator[tuple[str, str]]:
    for group in GROUPS:
        for option in available_options(group, [packaged_conf_dir()]):
            yield group, option


def _model_default(model: type[BaseModel], name: str) -> Any:
    """The default of a field, or ``PydanticUndefined`` for a required one."""
    return model.model_fields[name].get_default(call_default_factory=True)


def _members(annotation: Any) -> list[type[BaseModel]]:
    """The config models a field holds: the model itself, or each model of a union."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [annotation]
    return [model for arg in get_args(annotation) for model in _members(arg)]


def _model_of(group_path: str, option: dict[str, Any]) -> type[BaseModel]:
    """The config model an option of a group is validated by (the member of a union its ``kind``/``backend`` picks)."""
    models: list[type[BaseModel]] = [AgragConfig]
    for part in group_path.split("."):
        models = _members(models[0].model_fields[part].annotation)
    if len(models) == 1:  # not a union: a field named backend (the embedder's) is a setting, not a tag
        return models[0]
    for model in models:
        tag = next((k for k in ("kind", "backend") if k in model.model_fields), None)
        if tag is None or _model_default(model, tag) == option.get(tag):
            return model
    raise AssertionError(f"no model of {group_path} takes {option}")


def yaml_drifts(key: str, model: type[BaseModel], option: dict[str, Any]) -> list[str]:
    """Where an option's YAML values differ from the model's defaults (nested models compared key by key)."""
    drifts = []
    for name, raw in option.items():
        if name in IDENTITY_KEYS or name not in model.model_fields or name == "defaults":
            continue
        default = _model_default(model, name)
        if default is PydanticUndefined or default == "???":
            continue
        if isinstance(default, BaseModel) and isinstance(raw, dict):
            drifts += yaml_drifts(f"{key}.{name}", type(default), raw)
            continue
        value = getattr(model.model_validate({**_required(model), name: raw}), name)
        if value != default:
            drifts.append(f"{key}.{name}: the YAML says {raw!r}, the model's default is {default!r}")
    return drifts


def _required(model: type[BaseModel]) -> dict[str, Any]:
    """Values for the required fields of a model, so one field can be validated alone."""
    stand_ins = {"methods": ["chunk"], "model": "all-MiniLM-L6-v2", "path": "x.json"}
    return {name: stand_ins[name] for name, field in model.model_fields.items() if field.is_required()}


def _parameters(component: Callable[..., Any]) -> Mapping[str, inspect.Parameter]:
    """The constructor's parameters (Haystack's ``@component`` hides them behind ``*args, **kwargs`` on the class)."""
    return inspect.signature(component.__init__ if isinstance(component, type) else component).parameters


def component_drifts(links: tuple[Link, ...], composed: AgragConfig) -> list[str]:
    """Where a component argument's default differs from the default of the setting that feeds it."""
    drifts = []
    for link in links:
        default = _model_default(link.model, link.field)
        if default is PydanticUndefined:  # required in the model: the shipped YAML's value is the default
            default = composed
            for part in link.key.split(" ")[0].split("."):
                default = getattr(default, part)
        param = _parameters(link.component)[link.param]
        if param.default is inspect.Parameter.empty:
            continue  # a required argument cannot drift
        if param.default != default:
            name = getattr(link.component, "__name__", str(link.component))
            drifts.append(
                f"{link.key}: the config default is {default!r}, {name}({link.param}=) defaults to {param.default!r}"
            )
    return drifts


@pytest.mark.parametrize(("group", "option"), list(_options()))
def test_every_option_composes_and_validates(group: str, option: str) -> None:
    config = load_config([f"{group}={option}", *REQUIRED_OVERRIDES.get((group, option), [])])
    node: Any = config
    for part in GROUPS[group].split("."):
        node = getattr(node, part)
    assert isinstance(node, BaseModel)
    if group in CHOICE_GROUPS:
        assert getattr(node, "name", option) == option


def test_the_yaml_of_every_group_holds_the_model_defaults() -> None:
    drifts = []
    checked = 0
    for group, option in _options():
        if CHOICE_GROUPS.get(group, option) != option:
            continue
        raw = compose_option(group, option)
        drifts += yaml_drifts(f"{GROUPS[group]} ({group}/{option}.yaml)", _model_of(GROUPS[group], raw), raw)
        checked += 1
    assert checked >= 12
    assert drifts == [], "YAML and config models disagree:\n  " + "\n  ".join(drifts)


def test_every_component_defaults_to_the_config_default() -> None:
    drifts = component_drifts(LINKS, load_config())
    assert drifts == [], "components and config models disagree:\n  " + "\n  ".join(drifts)


# The component defaults the issue found drifted from the config (each was written three times).
KNOWN_DRIFTS = [
    (StructuralChunker, "max_chars", 1500),
    (EntityResolver, "fuzzy_merge_threshold", 94.0),
    (EntityResolver, "embedding_threshold", 0.9),
    (LeidenCommunityDetector, "max_cluster_size", 12),
]


@pytest.mark.parametrize(("component", "param", "expected"), KNOWN_DRIFTS)
def test_the_known_drifts_are_gone(component: Callable[..., Any], param: str, expected: object) -> None:
    assert _parameters(component)[param].default == expected


def test_the_chunker_size_that_drifted_agrees_in_model_and_yaml() -> None:
    assert StructuralChunkerConfig().max_chars == load_config(["ingest/chunker=structural"]).ingest.chunker.max_chars
    assert StructuralChunkerConfig().max_chars == 1500


def test_a_drifted_default_is_listed() -> None:
    def drifted_chunker(max_chars: int = 1000) -> None:
        del max_chars

    link = Link("ingest.chunker.max_chars", StructuralChunkerConfig, "max_chars", drifted_chunker, "max_chars")
    assert component_drifts((link,), load_config()) == [
        "ingest.chunker.max_chars: the config default is 1500, drifted_chunker(max_chars=) defaults to 1000"
    ]
    assert yaml_drifts("ingest.chunker", StructuralChunkerConfig, {"kind": "structural", "max_chars": 1000}) == [
        "ingest.chunker.max_chars: the YAML says 1000, the model's default is 1500"
    ]
