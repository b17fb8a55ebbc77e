"""The validated shape of ``conf/``: one pydantic model per config group, every key described.

Hydra composes the YAML; these models check it (``extra="forbid"``: a misspelled key is an error naming it).
"""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from agrag.components.errors import UnknownRecipeMethodError


class StrictModel(BaseModel):
    """Base of every config model: unknown keys are errors and values cannot change after loading."""

    model_config = ConfigDict(extra="forbid", frozen=True)


class RetrievalMethod(StrEnum):
    """The search methods a recipe can run."""

    ENTITY = "entity"
    CHUNK = "chunk"
    PPR = "ppr"

    @classmethod
    def from_str(cls, value: str, recipe: str | None = None) -> RetrievalMethod:
        """Parse a method name; an unknown name raises ``UnknownRecipeMethodError`` listing the valid ones."""
        try:
            return cls(value)
        except ValueError:
            raise UnknownRecipeMethodError(str(value), [m.value for m in cls], recipe) from None


class RecipeConfig(StrictModel):
    """A named search recipe: which methods run, and how many results come back."""

    name: str = Field("custom", description="The recipe's name (the file name under conf/recipe).")
    description: str = Field("", description="What the recipe is for, in a sentence.")
    methods: tuple[RetrievalMethod, ...] = Field(
        ..., min_length=1, description="Methods to run at the same time: entity, chunk, ppr."
    )
    limit: int = Field(10, ge=1, le=1000, description="The most results returned.")

    @field_validator("methods", mode="before")
    @classmethod
    def _known_methods(cls, value: Any) -> Any:
        # Raised as UnknownRecipeMethodError (not a ValueError), so it reaches the user as the typed error.
        if isinstance(value, list | tuple):
            return tuple(v if isinstance(v, RetrievalMethod) else RetrievalMethod.from_str(str(v)) for v in value)
        return value


class EmbedderConfig(StrictModel):
    """The dense embedding model, used for chunks, entities and queries alike."""

    model: str = Field(..., description="'all-MiniLM-L6-v2' (bundled) or the folder of a sentence-transformers model.")
    device: str = Field("cpu", description="Torch device: cpu, cuda, mps.")
    batch_size: int = Field(64, ge=1, description="Texts embedded per batch during ingestion.")


class EdgeVectorStoreConfig(StrictModel):
    """Qdrant Edge shards under the data dir (the embedded default)."""

    backend: Literal["edge"] = "edge"


class QdrantVectorStoreConfig(StrictModel):
    """A Qdrant server at ``AGRAG_QDRANT_URL``."""

    backend: Literal["qdrant"] = "qdrant"
    collection_prefix: str = Field("agrag", pattern=r"^[A-Za-z0-9_-]+$", description="Collection name prefix.")


VectorStoreConfig = Annotated[EdgeVectorStoreConfig | QdrantVectorStoreConfig, Field(discriminator="backend")]


class LoaderConfig(StrictModel):
    """Which files ingestion reads."""

    max_file_bytes: int = Field(20 * 1024 * 1024, ge=1, description="Larger files are reported and skipped.")


class ChunkerConfig(StrictModel):
    """How documents are cut into passages."""

    max_chars: int = Field(1500, ge=200, description="Sections longer than this are split at paragraph breaks.")


class LexicalExtractorConfig(StrictModel):
    """The offline lexical entity and relation extractor."""

    kind: Literal["lexical"] = "lexical"
    min_name_length: int = Field(2, ge=1, description="Entity names shorter than this are ignored.")


class TriplesExtractorConfig(StrictModel):
    """Entities and triples imported from a JSON file of precomputed extractions."""

    kind: Literal["triples"] = "triples"
    path: str = Field(..., min_length=1, description="The JSON file of extractions (HippoRAG OpenIE format).")


ExtractorConfig = Annotated[LexicalExtractorConfig | TriplesExtractorConfig, Field(discriminator="kind")]


class IngestConfig(StrictModel):
    """The stages of ``agrag ingest``."""

    loader: LoaderConfig = LoaderConfig()
    chunker: ChunkerConfig = ChunkerConfig()
    extractor: ExtractorConfig = LexicalExtractorConfig()


class EvalConfig(StrictModel):
    """What ``agrag eval`` runs and how it scores."""

    recipes: tuple[str, ...] = Field(
        ("hybrid", "chunk", "multi_hop"), min_length=1, description="Recipes (conf/recipe names) to score."
    )
    ks: tuple[int, ...] = Field((2, 5, 10), min_length=1, description="The k of each Recall@k column.")
    result_limit: int = Field(
        30, ge=1, le=1000, description="Each recipe's limit during eval, so the passage list reaches the largest k."
    )
    llm_triples: bool = Field(
        False, description="Also score the recipes on a graph built from the dataset's precomputed LLM triples."
    )
    max_questions: int | None = Field(None, ge=1, description="Score only the first N questions (a quick check).")
    bootstrap_samples: int = Field(1000, ge=100, description="Resamples of the paired bootstrap.")
    seed: int = Field(0, description="Seed of the bootstrap.")

    @field_validator("ks")
    @classmethod
    def _positive_ks(cls, value: tuple[int, ...]) -> tuple[int, ...]:
        if any(k < 1 for k in value):
            raise ValueError("every k must be at least 1")
        return tuple(sorted(set(value)))


class AgragConfig(StrictModel):
    """Everything ``conf/`` composes to."""

    recipe: RecipeConfig
    embedder: EmbedderConfig
    vector_store: VectorStoreConfig
    ingest: IngestConfig = IngestConfig()
    evaluation: EvalConfig = EvalConfig()
