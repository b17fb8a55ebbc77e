"""The ``search`` tool: a recipe search, its input, and an output whose hits say what kind of item they carry."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, StringConstraints

from agrag.components.data_models.chunk import Chunk
from agrag.components.data_models.community import Community
from agrag.components.data_models.cypher_row import CypherRow
from agrag.components.data_models.entity import Entity
from agrag.components.data_models.fact import Fact
from agrag.components.data_models.relation import Relation
from agrag.components.data_models.resolved_entity import ResolvedEntity
from agrag.components.data_models.search_filters import SearchFilters
from agrag.components.data_models.search_result import SearchResult, search_method_from_str
from agrag.components.data_models.search_trace import SearchTrace
from agrag.components.retrievers.filter_support import SearchFilter, honouring, refused_filters
from agrag.pipelines.config_models import RecipeConfig
from agrag.pipelines.document_ids import check_documents_known
from agrag.service.tools.errors import OverrideNotAllowedError, ScopedRecipeError
from agrag.service.tools.text_fields import DocumentIdText
from agrag.service.tools.tool import Tool, ToolContext, ToolInput

MAX_QUERY_CHARS = 4000
MAX_OVERRIDES = 20

RecipeName = Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9_-]{1,100}$")]
# A stored integer field is a 64-bit integer in both stores; a larger value failed inside Qdrant's filter conversion.
StoredInt = Annotated[int, Field(ge=-(2**63), le=2**63 - 1)]


class FiltersInput(ToolInput):
    """What results a search may return; every list means any of its values."""

    labels: tuple[str, ...] = Field((), description="Only entities with one of these labels, e.g. ['Person'].")
    relation_types: tuple[str, ...] = Field(
        (), description="The graph walk (recipes with bfs) crosses only relations of these types."
    )
    document_ids: tuple[DocumentIdText, ...] = Field(
        (),
        description="Only entities, chunks and communities from these documents (ids start with 'd'). With a token "
        "limited to documents, the ids outside its documents are dropped; none left means no result.",
    )
    properties: dict[str, str | StoredInt | tuple[str, ...]] = Field(
        default_factory=dict,
        description="Exact matches on stored fields, a list meaning any of, e.g. {'kind': 'table'} for chunks or "
        "{'level': 0} for communities.",
    )


class SearchInput(ToolInput):
    """The arguments of ``search``."""

    query: str = Field(..., min_length=1, max_length=MAX_QUERY_CHARS, description="The question or keywords.")
    recipe: RecipeName | RecipeConfig | None = Field(
        None,
        description="A recipe name (entity, chunk, hybrid, hybrid_reranked, graph_expand, thematic, text2cypher, "
        "multi_hop, fact, or one of the server's own conf/recipe files), or a whole recipe object with the fields of a "
        "recipe YAML (methods, bfs, reranker, limit, ...). Default: the server's configured recipe.",
    )
    overrides: tuple[str, ...] = Field(
        (),
        max_length=MAX_OVERRIDES,
        description="Hydra overrides of the recipe, e.g. ['recipe.limit=5', 'recipe.bfs_depth=1']; only recipe "
        "keys, and only with a recipe name.",
    )
    filters: FiltersInput | None = Field(None, description="What results may come back; none means no limit.")
    trace: bool = Field(False, description="Also return what each method and step did, with timings.")


class _Hit(BaseModel):
    model_config = ConfigDict(frozen=True)

    score: float = Field(..., description="The score of the step that ranked it last (RRF after fusion).")
    method: str = Field(..., description="The method that ranked it best.")
    methods: tuple[str, ...] = Field((), description="Every method that found it, best first.")
    parent: Chunk | None = Field(None, description="For a child chunk, the section chunk it was cut from.")


class EntityHit(_Hit):
    """An entity found by a search (its description is empty for a token limited to documents).

    An entity that resolution formed from several extracted ones is a ``ResolvedEntity``: the same fields plus
    ``merged_from``, the entities merged into it with the rule and reason of each merge.
    """

    kind: Literal["entity"] = "entity"
    # Entity first: a plain entity's JSON fits both, and pydantic's union then keeps the first.
    item: Entity | ResolvedEntity


class ChunkHit(_Hit):
    """A passage: the exact text of one chunk of one document version."""

    kind: Literal["chunk"] = "chunk"
    item: Chunk


class RelationHit(_Hit):
    """A relation reached by the graph walk."""

    kind: Literal["relation"] = "relation"
    item: Relation


class FactHit(_Hit):
    """A fact (subject -[predicate]-> object) with the passages that state it, each citable by its evidence id."""

    kind: Literal["fact"] = "fact"
    item: Fact


class CommunityHit(_Hit):
    """A community of entities with its report."""

    kind: Literal["community"] = "community"
    item: Community


class RowHit(_Hit):
    """A row of a graph query text2cypher wrote from the question."""

    kind: Literal["row"] = "row"
    item: CypherRow


SearchHit = Annotated[EntityHit | ChunkHit | RelationHit | FactHit | CommunityHit | RowHit, Field(discriminator="kind")]
_HIT_OF: dict[type, Callable[..., SearchHit]] = {
    Entity: EntityHit,
    ResolvedEntity: EntityHit,
    Chunk: ChunkHit,
    Relation: RelationHit,
    Fact: FactHit,
    Community: CommunityHit,
    CypherRow: RowHit,
}


def hit_of(result: SearchResult) -> SearchHit:
    """The output form of one result: its item with the kind named."""
    return _HIT_OF[type(result.item)](
        item=result.item, score=result.score, method=result.method, methods=result.methods, parent=result.parent
    )


def result_of(hit: SearchHit) -> SearchResult:
    """The ``SearchResult`` a hit stands for (exactly the one ``hit_of`` was given)."""
    methods = tuple(search_method_from_str(m) for m in hit.methods)
    return SearchResult(hit.item, hit.score, search_method_from_str(hit.method), methods, hit.parent)


class SearchOutput(BaseModel):
    """What ``search`` returns: the ranked hits and, when asked, the trace."""

    model_config = ConfigDict(frozen=True)

    query: str = Field(..., description="The query searched.")
    recipe: str = Field(..., description="The name of the recipe that ran.")
    hits: tuple[SearchHit, ...] = Field(..., description="Best first; each names its kind beside the item.")
    trace: SearchTrace | None = Field(
        None, description="What each method and step did, and the query's analysis (when trace was asked)."
    )

    @classmethod
    def of(cls, query: str, recipe: str, results: list[SearchResult], trace: SearchTrace | None) -> SearchOutput:
        """The output of a search's results."""
        return cls(query=query, recipe=recipe, hits=tuple(hit_of(r) for r in results), trace=trace)

    def results(self) -> list[SearchResult]:
        """The hits as the ``SearchResult`` values the engine returned."""
        return [result_of(hit) for hit in self.hits]


def _recipe(context: ToolContext, arguments: SearchInput) -> RecipeConfig:
    if isinstance(arguments.recipe, RecipeConfig):
        if arguments.overrides:
            raise OverrideNotAllowedError(
                "Overrides apply to a recipe given by name; with a recipe object, set those fields in the object."
            )
        return arguments.recipe
    for override in arguments.overrides:
        key = override.partition("=")[0].lstrip("+~")
        if key != "recipe" and not key.startswith("recipe."):
            raise OverrideNotAllowedError(
                f"Search takes recipe overrides only (recipe.KEY=VALUE), but got {override!r}. Settings of the stores "
                "and the embedder are fixed while the server runs."
            )
    name = [f"recipe={arguments.recipe}"] if arguments.recipe is not None else []
    return context.host.recipe([*name, *arguments.overrides])


def _check_scopable(recipe: RecipeConfig) -> None:
    """Refuse up front a recipe none of whose methods can keep to a document filter (thematic, text2cypher).

    A recipe with a method that keeps to documents runs: the engine skips each method or step that ``filter_support``
    says cannot keep to the caller's documents (community_expand in graph_expand and hybrid_reranked), and the
    trace names it and why. Refusing the whole recipe for one optional step would take graph_expand from every
    scoped caller.
    """
    # a client of the API imports the tool definitions: they load without Haystack (and torch, a second)
    from agrag.pipelines.search_pipeline import recipe_parts  # noqa: PLC0415

    refused = [part for part in recipe_parts(recipe) if refused_filters(part, (SearchFilter.DOCUMENT_IDS,))]
    if {method.value for method in recipe.methods} <= set(refused):
        raise ScopedRecipeError(recipe.name, refused, honouring(SearchFilter.DOCUMENT_IDS))


def _filters(context: ToolContext, given: FiltersInput | None) -> SearchFilters | None:
    """The search filters within the caller's scope; raises ``_NothingVisible`` when they leave no document.

    Raises:
        UnknownDocumentIdError: a document id the caller named (within its scope) names no stored document.
    """
    asked = given.document_ids if given is not None else ()
    scope = context.scope.document_ids
    if scope is None:
        documents = asked
    else:
        # An empty document filter means "no filter", so an empty intersection must never reach the engine.
        documents = tuple(d for d in asked if d in scope) if asked else scope
        if not documents:
            raise _NothingVisible
    if asked:  # ids the caller named (never the token's own scope, which may name documents not ingested yet)
        check_documents_known(context.runtime.store.graph, documents)
    filters = SearchFilters(
        labels=given.labels if given is not None else (),
        relation_types=given.relation_types if given is not None else (),
        document_ids=documents,
        properties=dict(given.properties) if given is not None else {},
    )
    return None if filters.empty else filters


class _NothingVisible(Exception):
    """The caller may read none of the documents the filters ask for."""


def search(context: ToolContext, arguments: SearchInput) -> SearchOutput:
    """Run the recipe within the caller's scope; see ``SEARCH``."""
    recipe = _recipe(context, arguments)
    scoped = context.scope.document_ids is not None
    if scoped:
        _check_scopable(recipe)
    try:
        filters = _filters(context, arguments.filters)
    except _NothingVisible:
        empty = SearchTrace(arguments.query, recipe.name, (), 0, 0, 0.0) if arguments.trace else None
        return SearchOutput.of(arguments.query, recipe.name, [], empty)
    response = context.runtime.engine.search_sync(arguments.query, recipe, filters)
    results = response.results
    if scoped:
        # An entity's description merges what every document said of it, so a scoped caller gets names only.
        results = [
            replace(r, item=replace(r.item, description="")) if isinstance(r.item, Entity) else r for r in results
        ]
    return SearchOutput.of(arguments.query, recipe.name, results, response.trace if arguments.trace else None)


SEARCH: Tool[SearchInput, SearchOutput] = Tool(
    name="search",
    title="Search with a recipe",
    description=(
        "Search the knowledge graph with a retrieval recipe and get one ranked list: entities, passages (chunks), "
        "relations, community reports or graph-query rows, each hit naming its kind, its score and the methods that "
        "found it. Use it to answer a question in one call or to see which recipe finds what; to read, quote and "
        "cite exact passages, use an evidence session (discover, fetch) instead. Choose the recipe by name "
        "(hybrid: entities and passages; multi_hop: questions that chain facts; thematic: community reports; "
        "graph_expand: relations around the entities found; text2cypher: counts and lists, needs an LLM) or send a "
        "recipe object. Cost: one query embedding and the recipe's methods, usually tens of milliseconds on the "
        "embedded stores; a cross-encoder re-rank adds about a second on CPU, text2cypher one or two LLM calls. "
        "A token limited to documents may run every method and step that keeps to its documents (entity, chunk, "
        "ppr, bfs and the re-rankers): a recipe whose methods all read every document (thematic, text2cypher) is "
        "refused; in another recipe a step that cannot keep to documents (community, community_expand) does not "
        "run and the trace (trace: true) says so."
    ),
    input_model=SearchInput,
    output_type=SearchOutput,
    handler=search,
)
