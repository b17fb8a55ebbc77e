"""Checking the document ids a caller names (a search filter, an evidence scope) before anything runs."""

from __future__ import annotations

from collections.abc import Sequence

from agrag.components.errors import UnknownDocumentIdError
from agrag.components.stores.graph_store import GraphStore


def check_documents_known(graph: GraphStore, document_ids: Sequence[str] | None) -> None:
    """Refuse ids that name no stored document, so a typo is not answered by an empty result.

    Called where a user names the ids (``--document``, ``filters.document_ids``, a session's ``documents``), never
    on a token's configured scope, which may name documents not ingested yet.

    Raises:
        UnknownDocumentIdError: some ids name no stored (committed, not deleted) document; it lists them.
    """
    if not document_ids:
        return
    asked = list(dict.fromkeys(document_ids))
    stored = graph.stored_documents(asked)
    if unknown := [i for i in asked if i not in stored]:
        raise UnknownDocumentIdError(unknown)
