"""Every tool agrag offers, by name, in the order a client should meet them."""

from __future__ import annotations

from typing import Any

from agrag.service.tools.documents_tool import LIST_DOCUMENTS
from agrag.service.tools.evidence_tools import (
    CHECK_CITATIONS,
    DISCOVER,
    EXPLORE,
    FETCH,
    FIND_ENTITIES,
    NAVIGATE,
    RENDER_CITATIONS,
)
from agrag.service.tools.ontology_tool import GET_ONTOLOGY
from agrag.service.tools.preview_tool import PREVIEW_FILES
from agrag.service.tools.run_tools import FINALIZE, REEXTRACT
from agrag.service.tools.search_evidence_tool import SEARCH_EVIDENCE
from agrag.service.tools.search_tool import SEARCH
from agrag.service.tools.set_ontology_tool import SET_ONTOLOGY
from agrag.service.tools.status_tool import STATUS
from agrag.service.tools.tool import Tool
from agrag.service.tools.write_tools import DELETE_DOCUMENT, INGEST

_ALL: tuple[Tool[Any, Any], ...] = (
    SEARCH,
    DISCOVER,
    FETCH,
    NAVIGATE,
    FIND_ENTITIES,
    EXPLORE,
    CHECK_CITATIONS,
    RENDER_CITATIONS,
    STATUS,
    LIST_DOCUMENTS,
    SEARCH_EVIDENCE,
    GET_ONTOLOGY,
)

TOOLS: dict[str, Tool[Any, Any]] = {tool.name: tool for tool in _ALL}
"""Every tool by name."""

SESSION_TOOLS: dict[str, Tool[Any, Any]] = {name: tool for name, tool in TOOLS.items() if tool.in_session}
"""The evidence tools, which run inside a caller's evidence session."""

MCP_READ_TOOLS: dict[str, Tool[Any, Any]] = {
    "search_evidence": SEARCH_EVIDENCE,
    "fetch_evidence": FETCH,
    "navigate": NAVIGATE,
    "find_entities": FIND_ENTITIES,
    "explore": EXPLORE,
    "check_citations": CHECK_CITATIONS,
    "render_citations": RENDER_CITATIONS,
    "search": SEARCH,
    "status": STATUS,
    "get_ontology": GET_ONTOLOGY,
    "list_documents": LIST_DOCUMENTS,
}
"""The read tools an MCP client sees, by the names of the spec (``fetch`` is ``fetch_evidence`` there)."""

WRITE_TOOLS: dict[str, Tool[Any, Any]] = {
    tool.name: tool for tool in (INGEST, DELETE_DOCUMENT, PREVIEW_FILES, SET_ONTOLOGY, REEXTRACT, FINALIZE)
}
"""The tools that write to the data dir, offered over MCP only by a server started with ``--allow-write``; with them
``preview_files``, which reads the files root (not the graph) as ingesting files does."""
