"""The validated shape of ``conf/``: one pydantic model per config group, every key described.

Hydra composes the YAML; these models check it (``extra="forbid"``: a misspelled key is an error naming it).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import (
    Field,
    SerializerFunctionWrapHandler,
    field_validator,
    model_serializer,
    model_validator,
)

from agrag.components import defaults
from agrag.components.data_models.edge_shard_settings import EdgeShardSettings
from agrag.components.data_models.embedder_backend import EmbedderBackend
from agrag.components.data_models.qdrant_collection_settings import QdrantCollectionSettings, VectorQuantization
from agrag.pipelines.eval_config import EvalConfig
from agrag.pipelines.parallel_config import ParallelConfig
from agrag.pipelines.plan_models import FinalizePolicy, PlanConfig
from agrag.pipelines.recipe_config import RecipeConfig, Reranker, RetrievalMethod
from agrag.pipelines.strict_model import StrictModel, refuse_bool_numbers, takes_number

__all__ = [  # the recipe, eval and base models live in their own modules; imported from here as before
    "AgragConfig",
    "EvalConfig",
    "RecipeConfig",
    "Reranker",
    "RetrievalMethod",
    "StrictModel",
    "refuse_bool_numbers",
    "takes_number",
]


class EmbedderConfig(StrictModel):
    """The dense embedding model, used for chunks, entities and queries alike."""

    model: str = Field(..., description="'all-MiniLM-L6-v2' (bundled) or the folder of a sentence-transformers model.")
    device: str = Field(defaults.EMBEDDER_DEVICE, description="Torch device: cpu, cuda, mps.")
    batch_size: int = Field(
        defaults.EMBEDDER_BATCH_SIZE, ge=1, description="Texts embedded per batch during ingestion."
    )
    backend: EmbedderBackend = Field(
        EmbedderBackend.TORCH,
        description="torch (sentence-transformers); onnx: ONNX Runtime on the CPU, the same vectors several times "
        "faster; the model is exported once to AGRAG_ONNX_DIR on first use (embedder=minilm_onnx); onnx_int8: the "
        "export quantized to int8, faster again, close vectors (embedder=minilm_onnx_int8); hashed: no model, vectors "
        "hashed from the words, for benchmarks only (embedder=hashed).",
    )


class EdgeVectorStoreConfig(StrictModel):
    """Qdrant Edge shards under the data dir (the embedded default)."""

    backend: Literal["edge"] = "edge"
    quantization: VectorQuantization = Field(
        VectorQuantization.INT8,
        description="int8: an indexed collection is searched through int8 copies of its vectors, the best "
        "candidates rescored with the originals (4 to 5 times faster, the same scores); none: float32 scans.",
    )
    indexing_threshold_kb: int = Field(
        defaults.EDGE_INDEXING_THRESHOLD_KB,
        ge=1,
        description="KB of vectors a collection's growing segment may hold before an ingestion indexes it "
        "(about 6,600 vectors of 384 floats at the default).",
    )
    oversampling: float = Field(
        defaults.EDGE_OVERSAMPLING,
        ge=1.0,
        le=16.0,
        description="Candidates of the int8 scan rescored per result asked for (more: closer to an exact scan).",
    )

    def shard_settings(self) -> EdgeShardSettings:
        """How the shards index and search their vectors."""
        return EdgeShardSettings(self.quantization, self.indexing_threshold_kb, self.oversampling)


class QdrantVectorStoreConfig(StrictModel):
    """A Qdrant server at ``AGRAG_QDRANT_URL``."""

    backend: Literal["qdrant"] = "qdrant"
    collection_prefix: str = Field(
        defaults.QDRANT_COLLECTION_PREFIX, pattern=r"^[A-Za-z0-9_-]+$", description="Collection name prefix."
    )
    on_disk_payload: bool = Field(defaults.QDRANT_ON_DISK_PAYLOAD, description="Keep payloads on the server's disk.")
    hnsw_m: int = Field(defaults.QDRANT_HNSW_M, ge=4, le=128, description="Edges per node of the HNSW graph.")
    hnsw_ef_construct: int = Field(
        defaults.QDRANT_HNSW_EF_CONSTRUCT, ge=4, le=1000, description="Candidates kept while building the HNSW graph."
    )
    quantization: VectorQuantization = Field(
        VectorQuantization.NONE, description="none, or int8: scalar-quantized copies in memory, rescored."
    )

    def layout(self) -> QdrantCollectionSettings:
        """The settings a new collection is created with."""
        return QdrantCollectionSettings(self.on_disk_payload, self.hnsw_m, self.hnsw_ef_construct, self.quantization)


VectorStoreConfig = Annotated[EdgeVectorStoreConfig | QdrantVectorStoreConfig, Field(discriminator="backend")]


class LoaderConfig(StrictModel):
    """Which files ingestion reads."""

    max_file_bytes: int = Field(
        defaults.LOADER_MAX_FILE_BYTES, ge=1, description="Larger files are reported and skipped."
    )
    suffixes: tuple[str, ...] = Field(
        defaults.LOADER_SUFFIXES,
        min_length=1,
        description="File name endings read; other files are left alone (not reported).",
    )

    @field_validator("suffixes")
    @classmethod
    def _dotted(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        return tuple(s.lower() if s.startswith(".") else f".{s.lower()}" for s in value)


class StructuralChunkerConfig(StrictModel):
    """Cut at headings: each section a parent chunk, its paragraphs small child chunks; tables by rows."""

    kind: Literal["structural"] = "structural"
    max_chars: int = Field(
        defaults.STRUCTURAL_MAX_CHARS, ge=100, description="Child chunks are cut at paragraph breaks to at most this."
    )
    section_max_chars: int = Field(
        defaults.STRUCTURAL_SECTION_MAX_CHARS,
        ge=200,
        description="A section longer than this gets several parent chunks, each of at most this.",
    )
    table_max_rows: int = Field(30, ge=1, description="Tables with more rows are cut into chunks of this many rows.")


class SentenceChunkerConfig(StrictModel):
    """Whole sentences packed up to a size, within each section; tables by rows."""

    kind: Literal["sentence"] = "sentence"
    max_chars: int = Field(
        defaults.SENTENCE_MAX_CHARS, ge=100, description="Sentences are packed into chunks of at most this."
    )
    overlap_sentences: int = Field(
        defaults.SENTENCE_OVERLAP_SENTENCES, ge=0, description="Sentences repeated at the start of the next chunk."
    )
    table_max_rows: int = Field(30, ge=1, description="Tables with more rows are cut into chunks of this many rows.")


class FixedChunkerConfig(StrictModel):
    """Windows of a fixed size (cut at white space), within each section; tables by rows."""

    kind: Literal["fixed"] = "fixed"
    size: int = Field(defaults.FIXED_SIZE, ge=50, description="Characters per chunk.")
    overlap: int = Field(defaults.FIXED_OVERLAP, ge=0, description="Characters shared by consecutive chunks.")
    table_max_rows: int = Field(30, ge=1, description="Tables with more rows are cut into chunks of this many rows.")

    @model_validator(mode="after")
    def _overlap_below_size(self) -> FixedChunkerConfig:
        if self.overlap >= self.size:
            raise ValueError(f"overlap ({self.overlap}) must be smaller than size ({self.size})")
        return self


ChunkerConfig = Annotated[
    StructuralChunkerConfig | SentenceChunkerConfig | FixedChunkerConfig, Field(discriminator="kind")
]


class LexicalExtractorConfig(StrictModel):
    """The offline lexical entity and relation extractor."""

    kind: Literal["lexical"] = "lexical"
    min_name_length: int = Field(
        defaults.LEXICAL_MIN_NAME_LENGTH, ge=1, description="Entity names shorter than this are ignored."
    )


class LLMExtractorConfig(StrictModel):
    """Entities and relations from an LLM behind an OpenAI-compatible endpoint (AGRAG_LLM_* settings)."""

    kind: Literal["llm"] = "llm"
    prompt: Literal["rich", "light"] = Field(
        defaults.LLM_EXTRACTOR_PROMPT,
        description="rich: entities with descriptions and relations with evidence; light: names, labels and triples "
        "only (fewer tokens).",
    )
    gleaning_rounds: int = Field(
        defaults.LLM_EXTRACTOR_GLEANING_ROUNDS,
        ge=0,
        le=5,
        description="Extra rounds asking the LLM for what it missed; 0 asks once.",
    )
    concurrency: int = Field(
        defaults.LLM_EXTRACTOR_CONCURRENCY, ge=1, le=64, description="Chunks sent to the LLM at the same time."
    )


class TriplesExtractorConfig(StrictModel):
    """Entities and triples imported from a JSON file of precomputed extractions."""

    kind: Literal["triples"] = "triples"
    path: str = Field(..., min_length=1, description="The JSON file of extractions (HippoRAG OpenIE format).")


ExtractorConfig = Annotated[
    LexicalExtractorConfig | LLMExtractorConfig | TriplesExtractorConfig, Field(discriminator="kind")
]


class OntologyConfig(StrictModel):
    """The entity labels and relation types the graph may hold; extraction output is pruned to them."""

    name: str = Field("open", description="The ontology's name (the file name under conf/ingest/ontology).")
    entity_labels: tuple[str, ...] = Field((), description="Allowed entity labels; empty allows every label.")
    relation_types: dict[str, tuple[tuple[str, str], ...]] = Field(
        default_factory=dict,
        description="Allowed relation types, each with its allowed [source label, target label] pairs ('*' for "
        "any label); empty allows every relation.",
    )
    label_descriptions: dict[str, str] = Field(
        default_factory=dict,
        description="What entities of a label are, by label, e.g. {Vendor: 'A company that sells us parts'}; the "
        "LLM extractor's prompt shows them. With no entity_labels declared, the described labels are suggested.",
    )
    relation_descriptions: dict[str, str] = Field(
        default_factory=dict, description="What a relation type means, by type; the LLM extractor's prompt shows them."
    )

    @model_serializer(mode="wrap")
    def _without_empty_descriptions(self, handler: SerializerFunctionWrapHandler) -> Any:
        # An ontology without descriptions dumps as before they existed, so the phase hashes of data dirs built
        # then (they hash this JSON) stay valid.
        data = handler(self)
        if isinstance(data, dict):
            for key in ("label_descriptions", "relation_descriptions"):
                if not data.get(key):
                    data.pop(key, None)
        return data

    @field_validator("relation_types", mode="before")
    @classmethod
    def _pairs(cls, value: Any) -> Any:
        if not isinstance(value, dict):
            return value
        for rel_type, pairs in value.items():
            if not isinstance(pairs, list | tuple) or any(
                not isinstance(p, list | tuple) or len(p) != 2 for p in pairs
            ):
                raise ValueError(
                    f"relation type {rel_type!r} needs a list of [source label, target label] pairs, "
                    f"e.g. {rel_type}: [[Person, Component]]"
                )
        return value

    @model_validator(mode="after")
    def _declared_labels(self) -> OntologyConfig:
        if not self.entity_labels:
            return self
        known = {*self.entity_labels, "*"}
        for rel_type, pairs in self.relation_types.items():
            for pair in pairs:
                if unknown := [label for label in pair if label not in known]:
                    raise ValueError(
                        f"relation type {rel_type!r} uses the label {unknown[0]!r}, which entity_labels does not "
                        f"declare ({', '.join(self.entity_labels)})"
                    )
        return self


class FuzzyResolutionConfig(StrictModel):
    """Merging names that are spelled nearly alike (rapidfuzz ratios, 0-100)."""

    enabled: bool = Field(defaults.FUZZY_ENABLED, description="Compare names that share a word.")
    merge_threshold: float = Field(
        defaults.FUZZY_MERGE_THRESHOLD, ge=0, le=100, description="A ratio at or above this merges."
    )
    candidate_threshold: float = Field(
        defaults.FUZZY_CANDIDATE_THRESHOLD,
        ge=0,
        le=100,
        description="A ratio at or above this (and below the merge threshold) is a near miss.",
    )


class ShortFormResolutionConfig(StrictModel):
    """Linking short forms ("Okafor", "Ada", "Dr. Okafor", "A. Okafor", "CT-60") to the one full name they fit."""

    enabled: bool = Field(
        defaults.SHORT_FORMS_ENABLED,
        description="Link surnames, first names, titles, possessives, initials and model codes when unambiguous.",
    )


class EmbeddingResolutionConfig(StrictModel):
    """Merging near misses whose name-and-description embeddings agree."""

    enabled: bool = Field(
        defaults.EMBEDDING_RESOLUTION_ENABLED,
        description="Embed near misses and merge those at or above the threshold.",
    )
    threshold: float = Field(
        defaults.EMBEDDING_RESOLUTION_THRESHOLD,
        ge=0,
        le=1,
        description="Cosine similarity at or above which a near miss merges.",
    )


class LLMResolutionConfig(StrictModel):
    """Asking the LLM (AGRAG_LLM_*) whether two remaining near misses are the same thing."""

    enabled: bool = Field(
        defaults.LLM_RESOLUTION_ENABLED, description="Ask the LLM a yes/no question per near-miss pair."
    )
    max_pairs: int = Field(
        defaults.LLM_RESOLUTION_MAX_PAIRS, ge=0, description="The most pairs asked per run; the rest stay candidates."
    )


class ResolutionConfig(StrictModel):
    """Entity resolution: exact names, then fuzzy names, short forms, embeddings and optionally the LLM."""

    fuzzy: FuzzyResolutionConfig = FuzzyResolutionConfig()
    short_forms: ShortFormResolutionConfig = ShortFormResolutionConfig()
    embedding: EmbeddingResolutionConfig = EmbeddingResolutionConfig()
    llm: LLMResolutionConfig = LLMResolutionConfig()


class CommunityConfig(StrictModel):
    """Hierarchical Leiden communities of the entity graph, and their reports."""

    enabled: bool = Field(True, description="Detect communities and write their reports after each ingest.")
    max_levels: int = Field(
        defaults.COMMUNITY_MAX_LEVELS,
        ge=1,
        le=6,
        description="The deepest level of the hierarchy (levels count from 0).",
    )
    max_cluster_size: int = Field(
        defaults.COMMUNITY_MAX_CLUSTER_SIZE,
        ge=2,
        description="A community larger than this is split again at the next level.",
    )
    min_size: int = Field(defaults.COMMUNITY_MIN_SIZE, ge=2, description="Communities smaller than this are not kept.")
    resolution: float = Field(
        defaults.COMMUNITY_RESOLUTION, gt=0, description="Leiden's resolution: higher gives more, smaller communities."
    )
    seed: int = Field(
        defaults.COMMUNITY_SEED, description="Leiden's random seed, so the same graph gives the same communities."
    )
    reports: Literal["auto", "llm", "extractive"] = Field(
        "auto", description="auto: LLM reports when AGRAG_LLM_BASE_URL is set, extractive ones otherwise."
    )
    report_sentences: int = Field(
        defaults.COMMUNITY_REPORT_SENTENCES, ge=1, le=10, description="Sentences in an extractive report's summary."
    )


class IngestConfig(StrictModel):
    """The stages of ``agrag ingest``."""

    loader: LoaderConfig = LoaderConfig()
    chunker: ChunkerConfig = StructuralChunkerConfig()
    extractor: ExtractorConfig = LexicalExtractorConfig()
    ontology: OntologyConfig = OntologyConfig()
    resolution: ResolutionConfig = ResolutionConfig()
    communities: CommunityConfig = CommunityConfig()
    max_llm_calls: int = Field(
        1000,
        ge=0,
        description="LLM extraction that would make more calls than this stops before the first one; raise it to go "
        "ahead. Answers already in the cache (AGRAG_DATA_DIR/llm-cache.sqlite) cost no call.",
    )
    supersede_other_folders: bool = Field(
        False,
        description="Let this ingestion supersede stored documents that may have come from another folder (the same "
        "path, stored before agrag recorded folders, with other text). Off: such an ingestion is refused and names "
        "them.",
    )
    write_batch_chunks: int = Field(
        200,
        ge=1,
        description="The write stage commits whole documents in batches of about this many chunks; searches in the "
        "same process wait at most for one batch and see each batch's documents as soon as it commits. Smaller "
        "batches make readers wait less, larger ones write a little faster. Does not change what is stored.",
    )
    bulk_load_min_chunks: int | None = Field(
        5000,
        ge=1,
        description="A first ingestion of at least this many chunks into an empty data dir is written as one "
        "batch, its graph by bulk copies in one transaction (tens of times faster on a large corpus): searches in "
        "the same process wait for that write and then see every document at once. null: always write in "
        "batches of write_batch_chunks.",
    )
    plan: PlanConfig = Field(
        PlanConfig(), description="Per-file plans: rules picking a chunker and extractor by glob, and their limits."
    )
    parallel: ParallelConfig = Field(
        ParallelConfig(), description="Embedding a large ingestion on Dask worker processes (off by default)."
    )
    finalize: FinalizePolicy = Field(
        FinalizePolicy.ON_WRITE,
        description="on_write: rebuild communities and reports after every ingestion that changed the graph; manual: "
        "leave them stale until `agrag finalize` (large corpora fed in pieces pay for them once).",
    )

    @model_validator(mode="after")
    def _plans_within_limits(self) -> IngestConfig:
        from agrag.pipelines.ingest_plans import check_plan  # noqa: PLC0415  # it imports this module

        check_plan(self)
        return self


class AgragConfig(StrictModel):
    """Everything ``conf/`` composes to."""

    recipe: RecipeConfig
    embedder: EmbedderConfig
    vector_store: VectorStoreConfig
    ingest: IngestConfig = IngestConfig()
    evaluation: EvalConfig = EvalConfig()
