"""The bounds of every page a caller asks for (documents, files): how far an offset may skip, checked once.

A request, a tool call or a command pages with ``offset`` and ``limit``; both are checked here before they reach a
store (and again by the input models, which refuse them first with the field's range in their message). A page
that starts past the last item is empty.
"""

from __future__ import annotations

from agrag.components.page_errors import PageRangeError

MAX_OFFSET = 10_000_000
"""The largest offset of any page: ten million, more items than a data dir agrag is built for holds (its scale
target is a million chunks), and far inside the 64-bit integers Kùzu and SQLite take (a larger one, 10**20, failed
inside Kùzu's parameter cast with a 500)."""

MAX_PAGE_DOCUMENTS = 1000
"""The most documents one page of the document listing holds."""


def check_page(offset: int, limit: int, max_limit: int) -> None:
    """Refuse an ``offset`` outside 0 to ``MAX_OFFSET`` or a ``limit`` outside 1 to ``max_limit``.

    Raises:
        PageRangeError: naming the field, its value and its range.
    """
    if not 0 <= offset <= MAX_OFFSET:
        raise PageRangeError("offset", offset, 0, MAX_OFFSET)
    if not 1 <= limit <= max_limit:
        raise PageRangeError("limit", limit, 1, max_limit)
