"""The ``search_evidence`` tool: find passages to read and cite, by keyword, meaning, both, or a graph walk.

``keyword``, ``vector`` and ``hybrid`` are the evidence session's ``discover``. ``graph`` runs the ``multi_hop``
recipe (a personalized PageRank walk from the entities the question names, within the caller's documents) and
returns its passages as evidence hits: on multi-hop questions it finds far more of the passages that answer them
than any text search, so an agent's first search can already be that good.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from agrag.components.data_models.chunk import Chunk
from agrag.components.data_models.evidence import (
    MAX_LIMIT,
    DiscoverMode,
    EvidenceHit,
    EvidenceLocation,
    EvidenceSearchMode,
)
from agrag.components.data_models.evidence_id import EvidenceId
from agrag.components.data_models.search_filters import SearchFilters
from agrag.components.evidence.snippets import snippet
from agrag.service.tools.evidence_tools import MAX_QUERY_CHARS
from agrag.service.tools.tool import Tool, ToolContext, ToolInput

GRAPH_RECIPE = "multi_hop"


class SearchEvidenceInput(ToolInput):
    """The arguments of ``search_evidence``."""

    query: str = Field(..., min_length=1, max_length=MAX_QUERY_CHARS, description="The question, word for word.")
    mode: EvidenceSearchMode = Field(
        EvidenceSearchMode.HYBRID,
        description="keyword (BM25), vector (meaning), hybrid (both, fused by rank), or graph (a walk from the "
        "entities the question names to the passages about them: best for questions that chain facts).",
    )
    limit: int = Field(10, ge=1, le=MAX_LIMIT, description=f"The most passages returned (1 to {MAX_LIMIT}).")


class EvidenceSearchResult(BaseModel):
    """The passages found, best first, each with the evidence id to fetch it by."""

    model_config = ConfigDict(frozen=True)

    mode: EvidenceSearchMode = Field(..., description="The mode that ran.")
    hits: tuple[EvidenceHit, ...] = Field(..., description="Best first: id, snippet, title, headings, span, score.")
    failed_legs: dict[str, str] = Field(default_factory=dict, description="Search legs that failed, with why.")
    truncated: bool = Field(False, description="More passages matched than were returned.")


def _search_evidence(context: ToolContext, arguments: SearchEvidenceInput) -> EvidenceSearchResult:
    if arguments.mode is not EvidenceSearchMode.GRAPH:
        found = context.evidence_session().discover(arguments.query, DiscoverMode(arguments.mode), arguments.limit)
        return EvidenceSearchResult(
            mode=arguments.mode, hits=found.hits, failed_legs=found.failed_legs, truncated=found.truncated
        )
    return _graph_search(context, arguments.query, arguments.limit)


def _graph_search(context: ToolContext, query: str, limit: int) -> EvidenceSearchResult:
    """The passages of the multi_hop recipe, within the session's documents."""
    scope = context.evidence_session().scope.document_ids
    if scope == ():
        return EvidenceSearchResult(mode=EvidenceSearchMode.GRAPH, hits=())
    recipe = context.host.recipe([f"recipe={GRAPH_RECIPE}", f"recipe.limit={limit + 1}"])
    filters = SearchFilters(document_ids=scope) if scope is not None else None
    response = context.runtime.engine.search_sync(query, recipe, filters)
    chunks = [(r.item, r.score, r.methods) for r in response.results if isinstance(r.item, Chunk)]
    hits = tuple(
        EvidenceHit(
            str(EvidenceId.of_chunk(chunk)),
            snippet(chunk.text, query),
            EvidenceLocation(chunk.title, chunk.heading_path, chunk.start, chunk.end),
            score,
            methods,
        )
        for chunk, score, methods in chunks[:limit]
    )
    failed = {status.method: status.error for status in response.trace.methods if not status.ok}
    return EvidenceSearchResult(
        mode=EvidenceSearchMode.GRAPH, hits=hits, failed_legs=failed, truncated=len(chunks) > limit
    )


SEARCH_EVIDENCE: Tool[SearchEvidenceInput, EvidenceSearchResult] = Tool(
    name="search_evidence",
    title="Find passages to cite",
    description=(
        "Find passages about a question in the current versions of the documents you may read. Use it first, with "
        "the user's question word for word. Modes: hybrid (default; keywords and meaning), keyword, vector, or "
        "graph (walks from the entities the question names to the passages about them; use it for questions that "
        "chain two or three facts, e.g. 'Where did the author of X study?'). Returns up to `limit` hits, best "
        "first, each with its evidence id, a short snippet, title, heading path and character span; then "
        "fetch_evidence the ids that look relevant (snippets are not quotable). Cost: milliseconds for the text "
        "modes; graph runs a graph walk, tens of milliseconds."
    ),
    input_model=SearchEvidenceInput,
    output_type=EvidenceSearchResult,
    handler=_search_evidence,
    in_session=True,
)
