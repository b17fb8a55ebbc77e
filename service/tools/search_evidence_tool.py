"""The ``search_evidence`` tool: find passages to read and cite, by keyword, meaning, both, or a graph walk.

Every mode is the evidence session's ``discover``. ``graph`` (the default) runs the ``bridge`` recipe (a personalized
PageRank walk from the names the question gives, then a round through the names its best passages share, within the
caller's documents) and returns its passages as evidence hits: it finds more of the passages that answer a question
than any text search on every set measured, so an agent's first search is already that good.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from agrag.components.data_models.evidence import (
    MAX_LIMIT,
    DiscoverMode,
    EvidenceHit,
    EvidenceSearchMode,
)
from agrag.service.tools.evidence_tools import MAX_QUERY_CHARS
from agrag.service.tools.tool import Tool, ToolContext, ToolInput


class SearchEvidenceInput(ToolInput):
    """The arguments of ``search_evidence``."""

    query: str = Field(..., min_length=1, max_length=MAX_QUERY_CHARS, description="The question, word for word.")
    mode: EvidenceSearchMode = Field(
        EvidenceSearchMode.GRAPH,
        description="graph (a walk from the names the question gives to the passages about them, then through the "
        "names the best passages share: the best first search, and for questions that chain facts), keyword (BM25), "
        "vector (meaning) or hybrid (both, fused by rank).",
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
    found = context.evidence_session().discover(arguments.query, DiscoverMode(arguments.mode), arguments.limit)
    return EvidenceSearchResult(
        mode=arguments.mode, hits=found.hits, failed_legs=found.failed_legs, truncated=found.truncated
    )


SEARCH_EVIDENCE: Tool[SearchEvidenceInput, EvidenceSearchResult] = Tool(
    name="search_evidence",
    title="Find passages to cite",
    description=(
        "Find passages about a question in the current versions of the documents you may read. Use it first, with "
        "the user's question word for word. Modes: graph (default; walks from the names the question gives to the "
        "passages about them and on through the names those share: best on every question set measured, and for "
        "questions that chain two or three facts, e.g. 'Where did the author of X study?'), hybrid (keywords and "
        "meaning), keyword, or vector. Returns up to `limit` hits, best "
        "first, each with its evidence id, a short snippet, title, heading path and character span; then "
        "fetch_evidence the ids that look relevant (snippets are not quotable). Cost: graph runs a graph walk, tens "
        "of milliseconds; the text modes take milliseconds."
    ),
    input_model=SearchEvidenceInput,
    output_type=EvidenceSearchResult,
    handler=_search_evidence,
    in_session=True,
)
