"""The error of a page asked for out of range: an offset or a limit agrag does not take."""

from __future__ import annotations

from agrag.components.errors import ConfigError


class PageRangeError(ConfigError, ValueError):
    """An offset or limit of a page (documents, files, runs) is outside the range agrag takes.

    A ``ValueError`` too, so a pydantic model that checks a page reports it as an invalid field.

    Usage:
        ```python
        raise PageRangeError("offset", 10**20, 0, MAX_OFFSET)
        ```
    """

    def __init__(self, field: str, value: int, low: int, high: int) -> None:
        self.field = field
        self.value = value
        self.low = low
        self.high = high
        shown = f"{value:,}" if abs(value) < 10**30 else f"a number of {len(str(abs(value)))} digits"
        super().__init__(
            f"{field} {shown} is out of range: give {low:,} to {high:,}. A page that starts past the last item is "
            "empty, so there is no need to ask beyond the end."
        )
