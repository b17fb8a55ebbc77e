"""The config model of a retrieval recipe (``conf/recipe``): its methods, steps, re-ranker and limits.

``RetrievalMethod`` and ``Reranker`` live in ``components/data_models`` (components name their results with them)
and are re-exported here, where recipes have always imported them from.
"""

from __future__ import annotations

from typing import Any

from pydantic import Field, field_validator, model_validator

from agrag.components import defaults
from agrag.components.data_models.retrieval_method import Reranker, RetrievalMethod
from agrag.pipelines.strict_model import StrictModel

__all__ = ["RecipeConfig", "Reranker", "RetrievalMethod"]


class RecipeConfig(StrictModel):
    """A named search recipe: which methods run, which steps follow them, and how many results come back.

    The steps run in this order: the methods at the same time, Reciprocal Rank Fusion, the graph walk (``bfs``),
    community reports (``community_expand``), the re-rank (``reranker``, ``min_score``), the cut to ``limit``.
    """

    name: str = Field("custom", description="The recipe's name (the file name under conf/recipe).")
    description: str = Field("", description="What the recipe is for, in a sentence.")
    methods: tuple[RetrievalMethod, ...] = Field(
        ...,
        min_length=1,
        description="Methods to run at the same time: entity, chunk, community, text2cypher, ppr, fact.",
    )
    bfs: bool = Field(False, description="Walk the graph outward from the entity results and fuse the neighbours in.")
    bfs_depth: int | None = Field(
        None, ge=1, le=5, description="Hops of the walk; unset uses RETRIEVAL_TRAVERSAL_DEPTH."
    )
    bfs_passages: bool = Field(
        True,
        description="With bfs: also return the passages that state the walk (chunks naming the seeds or stating a "
        "walked relation), most similar to the query first.",
    )
    reranker: Reranker | None = Field(
        None, description="Re-rank the candidates: cross_encoder or node_distance; unset keeps the fused order."
    )
    min_score: float | None = Field(
        None, description="Drop results the reranker scores below this; unset uses RETRIEVAL_RERANKER_MIN_SCORE."
    )
    limit: int = Field(defaults.RECIPE_LIMIT, ge=1, le=1000, description="The most results returned.")
    community_expand: bool = Field(
        False, description="Fuse in the reports of the communities that overlap the entities found."
    )
    community_top_k: int = Field(
        defaults.RECIPE_COMMUNITY_TOP_K,
        ge=0,
        le=100,
        description="Reports to add, and the slots they keep after a cross_encoder re-rank.",
    )

    bridge: bool = Field(
        False,
        description="With ppr: a second round from the best walked passages through the specific names they share "
        "to the passages that name them (bridge questions on notes whose titles are not entity names).",
    )

    @field_validator("methods", mode="before")
    @classmethod
    def _known_methods(cls, value: Any) -> Any:
        # Raised as UnknownRecipeMethodError (not a ValueError), so it reaches the user as the typed error.
        if isinstance(value, list | tuple):
            return tuple(v if isinstance(v, RetrievalMethod) else RetrievalMethod.from_str(str(v)) for v in value)
        return value

    @field_validator("methods")
    @classmethod
    def _each_method_once(cls, methods: tuple[RetrievalMethod, ...]) -> tuple[RetrievalMethod, ...]:
        # Each method is one component of the search pipeline, named after it: a second one cannot be built.
        repeated = sorted({method.value for method in methods if methods.count(method) > 1})
        if repeated:
            raise ValueError(f"methods lists {', '.join(repeated)} more than once: list each method once")
        return methods

    @field_validator("reranker", mode="before")
    @classmethod
    def _known_reranker(cls, value: Any) -> Any:
        if value is None or isinstance(value, Reranker):
            return value
        try:
            return Reranker(str(value))
        except ValueError:
            valid = ", ".join(r.value for r in Reranker)
            raise ValueError(f"unknown reranker {value!r} (valid: {valid}, or null for none)") from None

    @model_validator(mode="after")
    def _steps_have_their_inputs(self) -> RecipeConfig:
        needs_entities = [step for step, on in (("bfs", self.bfs), ("community_expand", self.community_expand)) if on]
        if needs_entities and RetrievalMethod.ENTITY not in self.methods:
            raise ValueError(
                f"{' and '.join(needs_entities)} start from the entities found, but methods has no entity: "
                f"add entity to methods ({', '.join(m.value for m in self.methods)}) or turn them off"
            )
        if self.bridge and RetrievalMethod.PPR not in self.methods:
            raise ValueError("bridge follows the ppr walk, but methods has no ppr: add ppr to methods or remove bridge")
        if self.bfs_depth is not None and not self.bfs:
            raise ValueError("bfs_depth is set but bfs is false: set bfs: true or remove bfs_depth")
        if "bfs_passages" in self.model_fields_set and not self.bfs:
            raise ValueError("bfs_passages is set but bfs is false: set bfs: true or remove bfs_passages")
        return self
