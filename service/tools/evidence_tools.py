"""The evidence tools: discover, fetch, navigate, find_entities, explore, check_citations, render_citations.

Each runs inside the caller's evidence session, whose document scope is part of every store query, and returns the
session's own frozen result.
"""

from __future__ import annotations

from pydantic import Field

from agrag.components.data_models.citations import CitationCheck, RenderedAnswer
from agrag.components.data_models.evidence import (
    MAX_DEPTH,
    MAX_LIMIT,
    Direction,
    DiscoverMode,
    DiscoverResult,
    EntityEvidence,
    ExploreResult,
    FetchResult,
)
from agrag.service.tools.tool import Tool, ToolContext, ToolInput

MAX_QUERY_CHARS = 4000
MAX_ANSWER_CHARS = 100_000
EVIDENCE_ID = "An evidence id, e.g. d1f3a9c2b4e5d6f.3b9f0c1d2e4a.c2 (a chunk) or ...s120-480 (a character span)."


class DiscoverInput(ToolInput):
    """The arguments of ``discover``."""

    query: str = Field(..., min_length=1, max_length=MAX_QUERY_CHARS, description="What to look for.")
    mode: DiscoverMode = Field(
        DiscoverMode.GRAPH,
        description="graph (the bridge recipe's walk from the names the question gives: the best on every question "
        "set measured), keyword (BM25), vector (meaning) or hybrid (both, fused by Reciprocal Rank Fusion).",
    )
    limit: int = Field(10, ge=1, le=MAX_LIMIT, description=f"The most passages returned (1 to {MAX_LIMIT}).")


class FetchInput(ToolInput):
    """The arguments of ``fetch``."""

    ids: tuple[str, ...] = Field(
        ..., min_length=1, max_length=MAX_LIMIT, description=f"Evidence ids to read (1 to {MAX_LIMIT}). {EVIDENCE_ID}"
    )


class NavigateInput(ToolInput):
    """The arguments of ``navigate``."""

    id: str = Field(..., min_length=1, description=f"The passage to move from. {EVIDENCE_ID}")
    direction: Direction = Field(
        ...,
        description="parent (the enclosing section), children, siblings, previous, next, or cells (of a table: "
        "every cell, or from a cell's span the other cells of its row and column).",
    )


class FindEntitiesInput(ToolInput):
    """The arguments of ``find_entities``."""

    query: str = Field(..., min_length=1, max_length=MAX_QUERY_CHARS, description="A name or a description.")
    limit: int = Field(10, ge=1, le=MAX_LIMIT, description=f"The most entities returned (1 to {MAX_LIMIT}).")


class ExploreInput(ToolInput):
    """The arguments of ``explore``."""

    entity: str = Field(..., min_length=1, max_length=500, description="An entity id (from find_entities) or a name.")
    depth: int = Field(1, ge=1, le=MAX_DEPTH, description=f"Hops outward (1 to {MAX_DEPTH}).")
    relation_types: tuple[str, ...] | None = Field(
        None, description="Only cross relations of these types, e.g. ['WORKS_AT']; none: every type."
    )
    limit: int = Field(50, ge=1, le=MAX_LIMIT, description=f"The most relations returned (1 to {MAX_LIMIT}).")


class AnswerInput(ToolInput):
    """The arguments of ``check_citations`` and ``render_citations``."""

    answer: str = Field(
        ...,
        min_length=1,
        max_length=MAX_ANSWER_CHARS,
        description="A draft answer citing evidence ids in square brackets, e.g. 'Maria wrote it [d1….c2].'",
    )


def _discover(context: ToolContext, arguments: DiscoverInput) -> DiscoverResult:
    return context.evidence_session().discover(arguments.query, arguments.mode, arguments.limit)


def _fetch(context: ToolContext, arguments: FetchInput) -> FetchResult:
    return context.evidence_session().fetch(arguments.ids)


def _navigate(context: ToolContext, arguments: NavigateInput) -> FetchResult:
    return context.evidence_session().navigate(arguments.id, arguments.direction)


def _find_entities(context: ToolContext, arguments: FindEntitiesInput) -> tuple[EntityEvidence, ...]:
    return context.evidence_session().find_entities(arguments.query, arguments.limit)


def _explore(context: ToolContext, arguments: ExploreInput) -> ExploreResult:
    session = context.evidence_session()
    return session.explore(arguments.entity, arguments.depth, arguments.relation_types, arguments.limit)


def _check(context: ToolContext, arguments: AnswerInput) -> CitationCheck:
    return context.evidence_session().check_citations(arguments.answer)


def _render(context: ToolContext, arguments: AnswerInput) -> RenderedAnswer:
    return context.evidence_session().render_citations(arguments.answer)


DISCOVER: Tool[DiscoverInput, DiscoverResult] = Tool(
    name="discover",
    title="Find passages",
    description=(
        "Find passages about a question or some keywords in the current versions of the documents you may read. "
        "Returns up to `limit` hits, best first, each with its evidence id, a short snippet, its title, heading "
        "path and character span; `truncated` says more matched. Use it first, then `fetch` the ids whose snippet "
        "looks relevant: snippets are not quotable. Cost: one query embedding and two index searches, milliseconds."
    ),
    input_model=DiscoverInput,
    output_type=DiscoverResult,
    handler=_discover,
    in_session=True,
)
FETCH: Tool[FetchInput, FetchResult] = Tool(
    name="fetch",
    title="Read passages",
    description=(
        "Read the exact text behind evidence ids, in the order asked, with title, headings and whether the "
        "version is still current. Ids that do not exist or lie outside your documents come back in `not_found`. "
        "Only text read with fetch or navigate can be cited in check_citations and render_citations. Cost: one "
        "graph read, milliseconds."
    ),
    input_model=FetchInput,
    output_type=FetchResult,
    handler=_fetch,
    in_session=True,
)
NAVIGATE: Tool[NavigateInput, FetchResult] = Tool(
    name="navigate",
    title="Move to nearby passages",
    description=(
        "Read the passages next to one: its enclosing section (parent), the passages cut from a section "
        "(children), its siblings, the previous or next passage, or the cells of a table. Use it when a passage "
        "starts or ends mid-thought, or to read a table's row and column. Returns their exact text, like fetch. "
        "Cost: one graph read, milliseconds."
    ),
    input_model=NavigateInput,
    output_type=FetchResult,
    handler=_navigate,
    in_session=True,
)
FIND_ENTITIES: Tool[FindEntitiesInput, tuple[EntityEvidence, ...]] = Tool(
    name="find_entities",
    title="Find entities",
    description=(
        "Find the people, systems, places and other entities your documents name that match a name or a "
        "description, each with its id, label and up to three evidence ids of passages about it. Use it before "
        "`explore`, or to learn how a name is spelled in the sources. A token limited to documents gets no "
        "descriptions (they merge what every document said). Cost: one query embedding and a few graph reads."
    ),
    input_model=FindEntitiesInput,
    output_type=tuple[EntityEvidence, ...],
    handler=_find_entities,
    in_session=True,
)
EXPLORE: Tool[ExploreInput, ExploreResult] = Tool(
    name="explore",
    title="Explore relations",
    description=(
        "Follow the relations around one entity (its id or exact name) outward up to three hops, nearest first. "
        "Each edge names its type, its two ends and the evidence ids of the current passages that state it "
        "(kind assertion), or none when those passages were superseded (kind path). Use it for questions that "
        "chain facts (who worked with the author of X), then fetch the passages to cite them. Cost: one graph "
        "read per hop, milliseconds to tens of milliseconds."
    ),
    input_model=ExploreInput,
    output_type=ExploreResult,
    handler=_explore,
    in_session=True,
)
CHECK_CITATIONS: Tool[AnswerInput, CitationCheck] = Tool(
    name="check_citations",
    title="Check an answer's citations",
    description=(
        "Check the evidence ids a draft answer cites against what this session read: ids never fetched, outside "
        "your documents or malformed are removed and listed with the reason; sentences with figures or names but "
        "no citation, and cited sentences whose figures or names the cited text lacks, come back as warnings. "
        "Call it before giving an answer. No LLM is used; cost: milliseconds."
    ),
    input_model=AnswerInput,
    output_type=CitationCheck,
    handler=_check,
    in_session=True,
)
RENDER_CITATIONS: Tool[AnswerInput, RenderedAnswer] = Tool(
    name="render_citations",
    title="Render an answer with sources",
    description=(
        "Turn a draft answer's valid citations into numbered references [1], [2] and append a Sources list "
        "(title, headings, version of each); invalid citations are dropped (check_citations says why). Use it for "
        "the final answer shown to a person. No LLM is used; cost: milliseconds."
    ),
    input_model=AnswerInput,
    output_type=RenderedAnswer,
    handler=_render,
    in_session=True,
)
