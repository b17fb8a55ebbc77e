"""``Immutable``: a base for frozen data models whose copies can be the object itself."""

from __future__ import annotations

from typing import Any, Self


class Immutable:
    """Copying a frozen value gives the value itself.

    Haystack deep-copies every input a component receives. For frozen data models that copy buys no safety and,
    for a list of results or a vector, costs more than the search itself.
    """

    __slots__ = ()

    def __copy__(self) -> Self:
        return self

    def __deepcopy__(self, memo: dict[int, Any]) -> Self:
        return self
