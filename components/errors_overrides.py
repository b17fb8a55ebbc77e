"""The error of an override a request may not give (``agrag.pipelines.request_overrides`` raises it).

A ``ConfigError``: the HTTP API answers it with 400 and MCP calls it a configuration error.
"""

from __future__ import annotations

from agrag.components.errors import ConfigError

SHOWN_CHARS = 120


def shown(override: str) -> str:
    """An override as a message quotes it: the request's own text, cut to ``SHOWN_CHARS`` characters."""
    text = override if len(override) <= SHOWN_CHARS else override[: SHOWN_CHARS - 1] + "…"
    return repr(text)


class RequestOverrideError(ConfigError):
    """An override from a request (HTTP, MCP, the Prefect form) that agrag refuses to compose.

    Attributes:
        override: The override as the request gave it.
        why: Why it is refused and what to do instead.
    """

    def __init__(self, override: str, why: str, where: str = "") -> None:
        """Refuse ``override`` because of ``why``; ``where`` names the field it came in (``the form's field ...``)."""
        self.override = override
        self.why = why
        place = f" ({where})" if where else ""
        super().__init__(f"The override {shown(override)}{place} is refused: {why}")
