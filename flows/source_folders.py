"""Which stored document each loaded file is, so that no ingestion silently supersedes another folder's document.

Document ids come from the file's path relative to ``AGRAG_FILES_ROOT`` (else its absolute path), so the same
relative path in two folders gives two documents. Data dirs made before that hold ids from the relative path alone
and no folder (``source_folder`` ''). A loaded file meets such a document under the same relative path:

- with the same text, it is that document: it keeps the stored id and the folder is recorded;
- with other text, it may be an edit of it or another folder's file: the ingestion is refused, naming the files,
  unless ``ingest.supersede_other_folders=true`` says the new files replace them (they then keep the stored ids).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from agrag.components.data_models.document import document_id_for
from agrag.components.data_models.loaded_document import LoadedDocument
from agrag.components.errors import DocumentsOfOtherFolderError
from agrag.components.stores.graph_store import GraphStore


@dataclass(frozen=True, slots=True)
class Claimed:
    """The loaded documents with the ids they are stored under, and the old documents whose folder is now known.

    Attributes:
        documents: The loaded documents, an adopted one carrying its stored id.
        adopted: Stored id → the folder to record, for the documents made before folders were recorded.
    """

    documents: list[LoadedDocument]
    adopted: dict[str, str]


def claim_documents(folder: str, documents: list[LoadedDocument], graph: GraphStore, *, supersede: bool) -> Claimed:
    """Match each loaded document to the stored document it is, adopting those stored without a folder.

    Args:
        folder: The ingested folder, as the messages name it.
        documents: What the loader read.
        graph: The data dir's graph.
        supersede: ``ingest.supersede_other_folders``: replace documents that may be another folder's.

    Raises:
        DocumentsOfOtherFolderError: Some files would supersede documents that may be another folder's, and
            ``supersede`` is off. Nothing has been written.
    """
    legacy = {d.document.id: document_id_for(d.document.source_path) for d in documents}
    stored = graph.stored_documents(sorted({*legacy, *legacy.values()}))
    claimed: list[LoadedDocument] = []
    adopted: dict[str, str] = {}
    conflicts: list[tuple[str, str]] = []
    for loaded in documents:
        doc = loaded.document
        own = stored.get(doc.id)
        if own is not None and own.source_folder:
            if _full_path(own.source_folder, own.source_path) != _full_path(doc.source_folder, doc.source_path):
                conflicts.append((doc.source_path, f"stored from {own.source_folder}/{own.source_path}"))
            claimed.append(loaded)
            continue
        old = own if own is not None else stored.get(legacy[doc.id])
        if old is None or old.source_folder:  # nothing stored under the old id, or another folder's new-style id
            claimed.append(loaded)
            continue
        if old.version != doc.version and not supersede:
            conflicts.append((doc.source_path, "stored before agrag recorded folders, with other text"))
        adopted[old.id] = doc.source_folder
        claimed.append(replace(loaded, document=replace(doc, id=old.id)))
    if conflicts and not supersede:
        raise DocumentsOfOtherFolderError(folder, conflicts)
    return Claimed(claimed, adopted)


def _full_path(source_folder: str, source_path: str) -> str:
    return source_path if source_folder == "." else f"{source_folder.rstrip('/')}/{source_path}"
