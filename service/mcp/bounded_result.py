"""Bound a tool result to a number of characters of JSON, keeping it valid JSON and saying what was cut.

Lists are shortened first, the longest (in characters) first at any depth, one item at a time from its end; then,
if that is not enough, the longest strings. Every cut is named by its path (``items: 12 of 40 kept``). The ids of
evidence items (objects with an ``id`` and a ``text``) removed or shortened are returned, so the caller can drop
them from the client's ledger: evidence a client never received whole cannot be cited.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

DEFAULT_MAX_RESULT_CHARS = 40_000
COMPACT = (",", ":")  # the JSON separators of a reply's text, which ``size`` counts
MIN_STRING_CHARS = 200
CUT_MARK = " …[cut]"


@dataclass(frozen=True)
class BoundedResult:
    """A result within the limit.

    Attributes:
        data: The JSON data, shortened if it had to be.
        cuts: What was cut, one line per list or string (empty: nothing was).
        dropped_evidence: Ids of evidence items removed from the result or shortened in it.
    """

    data: Any
    cuts: tuple[str, ...]
    dropped_evidence: tuple[str, ...]

    @property
    def truncated(self) -> bool:
        """True when anything was cut."""
        return bool(self.cuts)


def size(data: Any) -> int:
    """The characters of ``data`` as compact JSON."""
    return len(json.dumps(data, ensure_ascii=False, separators=COMPACT))


def bound(data: Any, max_chars: int = DEFAULT_MAX_RESULT_CHARS) -> BoundedResult:
    """``data`` shortened until its compact JSON has at most ``max_chars`` characters (room is left for the notes).

    Usage:
        ```python
        result = bound(tool.dump(output), 40_000)
        session.forget(result.dropped_evidence)
        ```
    """
    if size(data) <= max_chars:
        return BoundedResult(data, (), ())
    budget = max(max_chars - 1000, max_chars // 2)  # the truncation notes need room too
    work = json.loads(json.dumps(data))  # a private copy to cut
    originals: dict[str, int] = {}
    dropped: list[str] = []
    while size(work) > budget:
        found = _longest_list(work, "")
        if found is None:
            break
        path, items = found
        originals.setdefault(path, len(items))
        dropped += evidence_ids(items.pop())
    shortened: list[str] = []
    while size(work) > budget:
        found_text = _longest_string(work, "", None)
        if found_text is None:
            break
        path, parent, key, text = found_text
        excess = size(work) - budget
        keep = max(MIN_STRING_CHARS, len(text) - excess - len(CUT_MARK))
        if keep >= len(text):
            break
        parent[key] = text[:keep] + CUT_MARK
        shortened.append(f"{path}: {keep} of {len(text)} characters kept")
        if isinstance(parent, dict):
            dropped += evidence_ids(parent)
    lists = _lengths(work, originals)
    cuts = tuple([f"{p}: {lists[p]} of {n} items kept" for p, n in originals.items()] + shortened)
    return BoundedResult(work, cuts, tuple(dict.fromkeys(dropped)))


def _longest_list(data: Any, path: str) -> tuple[str, list[Any]] | None:
    """The non-empty list with the most characters of JSON anywhere in ``data``, and its path."""
    best: tuple[int, str, list[Any]] | None = None
    for child_path, child in _children(data, path):
        if isinstance(child, list) and child:
            weight = size(child)
            if best is None or weight > best[0]:
                best = (weight, child_path, child)
        inner = _longest_list(child, child_path) if isinstance(child, dict | list) else None
        if inner is not None and (best is None or size(inner[1]) > best[0]):
            best = (size(inner[1]), *inner)
    return None if best is None else (best[1], best[2])


def _longest_string(data: Any, path: str, parent: Any) -> tuple[str, Any, Any, str] | None:
    """The longest string anywhere in ``data``: its path, its container, its key there, and the string."""
    best: tuple[str, Any, Any, str] | None = None
    items = data.items() if isinstance(data, dict) else enumerate(data) if isinstance(data, list) else ()
    for key, value in items:
        child_path = _join(path, key)
        if isinstance(value, str):
            candidate: tuple[str, Any, Any, str] | None = (child_path, data, key, value)
        elif isinstance(value, dict | list):
            candidate = _longest_string(value, child_path, data)
        else:
            candidate = None
        if candidate is not None and (best is None or len(candidate[3]) > len(best[3])):
            best = candidate
    return best


def _children(data: Any, path: str) -> list[tuple[str, Any]]:
    if isinstance(data, dict):
        return [(_join(path, k), v) for k, v in data.items()]
    if isinstance(data, list):
        return [(f"{path}[]", v) for v in data]
    return []


def _join(path: str, key: Any) -> str:
    if isinstance(key, int):
        return f"{path}[]"
    return f"{path}.{key}" if path else str(key)


def _lengths(data: Any, paths: dict[str, int]) -> dict[str, int]:
    """How many items each cut list kept (lists inside lists share a path: the sum is reported)."""
    kept = dict.fromkeys(paths, 0)
    for path, child in _walk(data, ""):
        if path in kept and isinstance(child, list):
            kept[path] += len(child)
    return kept


def _walk(data: Any, path: str) -> list[tuple[str, Any]]:
    found = []
    for child_path, child in _children(data, path):
        found.append((child_path, child))
        found += _walk(child, child_path)
    return found


def evidence_ids(item: Any) -> list[str]:
    """The ids of the evidence items (objects with ``id`` and ``text``) in ``item``, at any depth."""
    if isinstance(item, dict):
        own = [item["id"]] if isinstance(item.get("id"), str) and "text" in item else []
        return own + [i for v in item.values() for i in evidence_ids(v)]
    if isinstance(item, list):
        return [i for v in item for i in evidence_ids(v)]
    return []
