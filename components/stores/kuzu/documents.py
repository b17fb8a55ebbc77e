"""``KuzuDocuments``: the documents role of the Kùzu store (versions, origins, settings hashes, listing, deletes)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from agrag.components.data_models.paging import MAX_PAGE_DOCUMENTS, check_page
from agrag.components.data_models.stored_document import StoredDocument
from agrag.components.errors import DocumentNotFoundError
from agrag.components.stores.kuzu import documents_cypher as cy
from agrag.components.stores.kuzu.connection import KuzuConnection, scope_params
from agrag.components.stores.kuzu.rows import DocumentRow


class KuzuDocuments(KuzuConnection):
    """What the store knows of each document: its version, origin, settings hash and plan; listing and deleting."""

    def document_versions(self, document_ids: Sequence[str]) -> dict[str, str]:
        """Return the current version of each known document."""
        rows = self._run(cy.DOCUMENT_VERSIONS, {"ids": list(document_ids)})
        return {doc_id: version for doc_id, version in rows}

    def stored_documents(self, document_ids: Sequence[str]) -> dict[str, StoredDocument]:
        """Return the committed, not deleted documents among ``document_ids``, with the folder each came from."""
        found = [DocumentRow.read(row) for row in self._run(cy.DOCUMENT_ORIGINS, {"ids": list(document_ids)})]
        return {document.id: document for document in found}

    def record_source_folders(self, folders: Mapping[str, str]) -> None:
        """Record the folder each document (id → folder) came from, for documents stored before agrag did."""
        self._write_batched(cy.SET_SOURCE_FOLDERS, "rows", [{"id": i, "source_folder": f} for i, f in folders.items()])

    def document_config_hashes(self, document_ids: Sequence[str]) -> dict[str, str]:
        """Return the hash of the settings each known document was ingested with ('' if not recorded)."""
        return {doc_id: h or "" for doc_id, h in self._run(cy.DOCUMENT_CONFIG_HASHES, {"ids": list(document_ids)})}

    def set_config_hashes(self, hashes: Mapping[str, str]) -> None:
        """Record the hash of the settings each document (id → hash) was last extracted with."""
        self._write_batched(cy.SET_CONFIG_HASHES, "rows", [{"id": i, "config_hash": h} for i, h in hashes.items()])

    def set_document_plans(self, plans: Mapping[str, str]) -> None:
        """Record the plan (``AppliedPlan`` JSON) each document (id → plan) was last ingested or re-extracted with."""
        self._write_batched(cy.SET_DOCUMENT_PLANS, "rows", [{"id": i, "plan": p} for i, p in plans.items()])

    def document_chunk_ids(self, document_id: str, version: str | None = None) -> list[str]:
        """The ids of a document's chunks, of every version or of one, in document order."""
        rows = self._run(cy.CHUNK_IDS_OF_DOCUMENT, {"id": document_id})
        return [chunk_id for chunk_id, chunk_version, _ in rows if version is None or chunk_version == version]

    def delete_document(self, document_id: str) -> list[str]:
        """Commit the delete of a document: it loses its version and its chunks their currency; return its chunk ids.

        One statement (a kill keeps all of it or none). Its chunks stay readable by id (as superseded text). Retire
        them first (``retire_chunks`` with every chunk id of the document), while they are still current: deleting
        again repeats that retirement, which is idempotent, so a delete that was killed half-way completes. Raises
        ``DocumentNotFoundError`` for an unknown id.
        """
        if not self._run(cy.DOCUMENT_KNOWN, {"id": document_id}):
            raise DocumentNotFoundError(document_id)
        chunk_ids = self.document_chunk_ids(document_id)
        self._write(cy.DELETE_DOCUMENT, {"id": document_id})
        return chunk_ids

    def documents(self, scope: Sequence[str] | None = None, offset: int = 0, limit: int = 100) -> list[StoredDocument]:
        """The committed documents (within ``scope``: document ids; None: all), by source path, one page.

        A page past the last document is empty.

        Raises:
            PageRangeError: ``offset`` is outside 0 to ``MAX_OFFSET`` or ``limit`` outside 1 to ``MAX_PAGE_DOCUMENTS``.
        """
        check_page(offset, limit, MAX_PAGE_DOCUMENTS)
        params = {**scope_params(scope), "skip": offset, "limit": limit}
        return [DocumentRow.read(row) for row in self._run_page(cy.LIST_DOCUMENTS, cy.COUNT_DOCUMENTS, params)]
