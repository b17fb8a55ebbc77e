"""A short excerpt of a passage around the words of a query, for a search hit."""

from __future__ import annotations

import re

SNIPPET_CHARS = 240
_WORD = re.compile(r"\w{3,}")


def snippet(text: str, query: str, width: int = SNIPPET_CHARS) -> str:
    """About ``width`` characters of ``text`` around the first query word it contains (else its start).

    White space is collapsed; an excerpt that does not reach an end of the text is marked with ``…`` there.
    """
    flat = " ".join(text.split())
    if len(flat) <= width:
        return flat
    lowered = flat.casefold()
    hits = [lowered.find(w.casefold()) for w in _WORD.findall(query)]
    first = min((h for h in hits if h >= 0), default=0)
    start = max(0, min(first - width // 4, len(flat) - width))
    end = start + width
    return ("…" if start > 0 else "") + flat[start:end].strip() + ("…" if end < len(flat) else "")
