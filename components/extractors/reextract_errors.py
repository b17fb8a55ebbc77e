"""Errors of re-extraction in place: a request that names no documents, or names them twice over."""

from __future__ import annotations

from agrag.components.errors import IngestError


class ReextractRequestError(IngestError):
    """A re-extraction was asked for without saying which documents (or with two ways of saying it).

    Attributes:
        problem: What was wrong with the request.
    """

    def __init__(self, problem: str) -> None:
        self.problem = problem
        super().__init__(
            f"Cannot re-extract: {problem}. Name the documents (`agrag reextract guide.md notes/q3.md`, the ids "
            "`agrag documents` lists), or re-extract every document ingested under other settings with "
            "`agrag reextract --other-settings`."
        )
