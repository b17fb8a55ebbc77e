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
from agrag.service.tools.search_tool import SEARCH
from agrag.service.tools.status_tool import STATUS
from agrag.service.tools.tool import Tool

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
)

TOOLS: dict[str, Tool[Any, Any]] = {tool.name: tool for tool in _ALL}
"""Every tool by name."""

SESSION_TOOLS: dict[str, Tool[Any, Any]] = {name: tool for name, tool in TOOLS.items() if tool.in_session}
"""The evidence tools, which run inside a caller's evidence session."""
