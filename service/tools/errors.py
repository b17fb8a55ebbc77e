"""Errors of the tools that no store or pipeline raises: what a caller limited to some documents may not do."""

from __future__ import annotations

from collections.abc import Sequence

from agrag.components.errors import AgragError, DocumentNotFoundError, RetrievalError


class ScopedRecipeError(RetrievalError):
    """A caller limited to some documents asked for a recipe with a method or step that reads every document."""

    def __init__(self, recipe: str, refused: Sequence[str], honouring: Sequence[str] = ()) -> None:
        self.recipe = recipe
        self.refused = tuple(refused)
        parts = f" ({', '.join(honouring)})" if honouring else ""
        super().__init__(
            f"Recipe {recipe!r} uses {', '.join(self.refused)}, which cannot be limited to your documents, so a token "
            f"scoped to documents may not run it. Use a recipe whose methods and steps keep to documents{parts}, "
            "such as hybrid, multi_hop or entity with bfs, or an evidence session."
        )


class OverrideNotAllowedError(RetrievalError):
    """A search was given overrides it cannot take (a non-recipe key, or overrides beside an inline recipe)."""


class ReadOnlyToolError(AgragError):
    """A write tool was called on a server that serves reads only."""

    def __init__(self, tool: str) -> None:
        self.tool = tool
        super().__init__(
            f"{tool!r} writes to the data dir, and this server is read-only. Ask its operator to restart it with "
            "--allow-write, or use the read tools (search_evidence, fetch_evidence, ...)."
        )


class UnknownToolError(AgragError, LookupError):
    """A client called a tool this server does not offer."""

    def __init__(self, tool: str, offered: Sequence[str]) -> None:
        self.tool = tool
        super().__init__(f"There is no tool {tool!r}. List the tools again; this server offers {', '.join(offered)}.")


class ConnectionOwnerError(AgragError):
    """A request reached an MCP connection that another token opened."""

    def __init__(self) -> None:
        super().__init__(
            "This MCP session was opened with another token. Open a new session (reconnect) with your own token."
        )


class ScopedWriteError(AgragError):
    """A caller limited to some documents called a write tool: writes may touch any document, so they are refused.

    ``what`` says what the tool does instead, for ``preview_files``, which reads the files root (any document's
    text) and goes with the write tools.
    """

    def __init__(self, tool: str, what: str = "writes to the data dir") -> None:
        self.tool = tool
        super().__init__(
            f"{tool!r} {what}, which a token limited to documents may not do. Use a token that may read every "
            "document, or ask the server's operator to run it."
        )


class ForwardedWriteError(ReadOnlyToolError):
    """A client of `agrag mcp` beside a running `agrag serve` called a write tool: that relay serves reads only."""

    def __init__(self, tool: str, url: str) -> None:
        self.tool = tool
        AgragError.__init__(
            self,
            f"{tool!r} writes to the data dir, and `agrag mcp` beside a running `agrag serve` forwards the read tools "
            f"only. Connect your MCP client to the server's endpoint ({url}/mcp) with a token that may write, or use "
            "the agrag CLI (agrag ingest, agrag delete, agrag ontology add).",
        )


class UnknownDocumentToDeleteError(DocumentNotFoundError):
    """``delete_document`` was given an id no stored document has: refused before any run is queued."""

    def __init__(self, document_id: str) -> None:
        self.document_id = document_id
        AgragError.__init__(
            self,
            f"No stored document has the id {document_id!r}, so nothing was deleted and no run was queued. Call "
            "list_documents for the ids of the stored documents (the document_id of any search result is one too).",
        )
