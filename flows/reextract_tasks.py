"""Re-extraction as Prefect tasks: choose the documents, then re-extract each one in place (journaled per document).

A document's chunks are read back from the graph (their ids, and so every evidence id, stay valid); extraction,
pruning and resolution run again under the current settings, and the document's links are replaced in one write
(``reextract_write``). Each document's extraction and resolution are journaled before its write, and its outcome
after it, so a run killed at any point and started again with the same command finishes exactly as an
uninterrupted run would have.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

from prefect import task
from prefect.cache_policies import NO_CACHE

from agrag.components.data_models.chunk import Chunk
from agrag.components.data_models.extraction import ChunkFailure, Extraction
from agrag.components.data_models.phase_key import PhaseKey, document_subject
from agrag.components.data_models.resolution import Resolution
from agrag.components.data_models.stored_document import StoredDocument
from agrag.components.embedders.sentence_transformers_text_embedder import SentenceTransformersTextEmbedder
from agrag.components.errors import LLMBudgetError, LLMError, StoreError
from agrag.components.extractors.lexical_entity_extractor import LexicalEntityExtractor
from agrag.components.extractors.llm_entity_extractor import LLMEntityExtractor
from agrag.components.extractors.ontology_pruner import OntologyPruner
from agrag.components.extractors.triples_file_extractor import TriplesFileExtractor
from agrag.components.llm.openai_chat_client import OpenAIChatClient
from agrag.components.stores.graph_store import GraphStore
from agrag.components.stores.knowledge_store import KnowledgeStore
from agrag.components.stores.sqlite_phase_journal import SqlitePhaseJournal
from agrag.flows.progress import progress_bar
from agrag.flows.reextract_report import DocumentOutcome, ReextractStatus
from agrag.flows.reextract_write import replace_links
from agrag.pipelines.config_models import IngestConfig, LLMExtractorConfig, TriplesExtractorConfig
from agrag.pipelines.document_ids import check_documents_known
from agrag.pipelines.ingest_components import PhaseHashes, entity_resolver, ontology_from_config

# Journal phases of re-extraction, per document version (the hash of the settings they ran under is the key's).
EXTRACTED = "reextract-extract"
RESOLVED = "reextract-resolve"
DONE = "reextract-done"
PHASES = (EXTRACTED, RESOLVED, DONE, "reextract-before", "reextract-run-id")
_PAGE = 1000


@dataclass(frozen=True, slots=True)
class Target:
    """A document to re-extract: its current version and chunks as stored, and the settings it gets now.

    Attributes:
        document_id: The document.
        version: Its current version (unchanged by re-extraction).
        chunks: Its current chunks, read from the graph.
        config: The ingestion settings in force for it (its per-file plan, when plans exist).
        hashes: Their phase hashes; ``hashes.resolve`` is what the document records once re-extracted.
    """

    document_id: str
    version: str
    chunks: tuple[Chunk, ...]
    config: IngestConfig
    hashes: PhaseHashes

    @property
    def subject(self) -> str:
        """The phase journal's subject for this document version."""
        return document_subject(self.document_id, self.version)


@dataclass(frozen=True, slots=True)
class Selection:
    """The documents to re-extract, those left as they are (unchanged), and the journal subjects of all of them."""

    targets: list[Target]
    unchanged: list[DocumentOutcome]
    subjects: list[str]


SettingsOf = Callable[[StoredDocument], tuple[IngestConfig, PhaseHashes]]


@task(name="select-documents", cache_policy=NO_CACHE, persist_result=False)
def select_documents(
    store: KnowledgeStore, document_ids: list[str] | None, settings_of: SettingsOf, *, force: bool
) -> Selection:
    """Named documents (unknown ids refused before any work), or every document ingested under other settings.

    ``settings_of`` gives each document the settings in force for it. A document extracted under them already is
    unchanged unless ``force``; one an interrupted run finished is a target again (its journaled outcome is
    reported, and nothing is redone).

    Raises:
        UnknownDocumentIdError: some named ids are not stored documents.
    """
    graph = store.graph
    if document_ids is not None:
        check_documents_known(graph, document_ids)
        ids = list(dict.fromkeys(document_ids))
    else:
        ids = _all_document_ids(graph)
    stored = graph.stored_documents(ids)
    recorded = graph.document_config_hashes(ids)
    settings = {i: settings_of(stored[i]) for i in ids}
    keys = [PhaseKey(document_subject(i, stored[i].version), DONE, settings[i][1].resolve) for i in ids]
    done = {key.subject for key in _journal(store).load_many(keys)}
    targets: list[Target] = []
    unchanged: list[DocumentOutcome] = []
    for document_id in ids:
        version = stored[document_id].version
        config, hashes = settings[document_id]
        fresh = recorded.get(document_id) == hashes.resolve and document_subject(document_id, version) not in done
        if fresh and not force:
            if document_ids is not None:
                reason = "extracted under the current settings already; --force re-extracts it anyway"
                unchanged.append(DocumentOutcome(document_id, ReextractStatus.UNCHANGED, reason))
            continue
        chunks = tuple(graph.get_chunks(graph.document_chunk_ids(document_id, version)))
        targets.append(Target(document_id, version, chunks, config, hashes))
    return Selection(targets, unchanged, [document_subject(i, stored[i].version) for i in ids])


def _all_document_ids(graph: GraphStore) -> list[str]:
    ids: list[str] = []
    while page := graph.documents(None, offset=len(ids), limit=_PAGE):
        ids += [d.id for d in page]
        if len(page) < _PAGE:
            break
    return ids


def _journal(store: KnowledgeStore) -> SqlitePhaseJournal:
    if store.journal is None:
        raise StoreError("Re-extraction needs the store's phase journal; open the store with open_knowledge_store.")
    return store.journal


def check_budget(targets: list[Target], llm: OpenAIChatClient | None, journal: SqlitePhaseJournal) -> None:
    """Refuse, before any call, an LLM re-extraction estimated over ``ingest.max_llm_calls``.

    Documents whose extraction an interrupted run journaled already cost nothing.
    """
    extracted = journal.load_many([PhaseKey(t.subject, EXTRACTED, t.hashes.extract) for t in targets])
    left = [t for t in targets if PhaseKey(t.subject, EXTRACTED, t.hashes.extract) not in extracted]
    by_llm = [t for t in left if isinstance(t.config.extractor, LLMExtractorConfig)]
    if llm is None or not by_llm:
        return
    config = by_llm[0].config
    estimate = _llm_extractor(config, llm).estimate([c for t in by_llm for c in t.chunks if c.searchable])
    if estimate.calls > config.max_llm_calls:
        raise LLMBudgetError("LLM re-extraction", estimate, config.max_llm_calls)


def _llm_extractor(config: IngestConfig, llm: OpenAIChatClient, progress: object = None) -> LLMEntityExtractor:
    settings = config.extractor
    assert isinstance(settings, LLMExtractorConfig)
    return LLMEntityExtractor(
        llm,
        ontology_from_config(config.ontology),
        prompt=settings.prompt,
        gleaning_rounds=settings.gleaning_rounds,
        concurrency=settings.concurrency,
        progress=progress,  # type: ignore[arg-type]
    )


def extract_chunks(
    chunks: tuple[Chunk, ...], config: IngestConfig, llm: OpenAIChatClient | None, *, progress: bool = False
) -> tuple[Extraction, list[ChunkFailure]]:
    """Entities and relations of the searchable chunks, with the configured extractor (``ingest/extractor``)."""
    searchable = [c for c in chunks if c.searchable]
    settings = config.extractor
    if isinstance(settings, LLMExtractorConfig):
        assert llm is not None  # checked before the run starts
        with progress_bar(progress, len(searchable), "LLM re-extraction", "chunk") as tick:
            out = _llm_extractor(config, llm, tick).run(chunks=searchable)
        return out["extraction"], list(out["failures"])
    if isinstance(settings, TriplesExtractorConfig):
        return TriplesFileExtractor(settings.path).run(chunks=searchable)["extraction"], []
    lexical = LexicalEntityExtractor(settings.min_name_length, config.ontology.entity_labels)
    return lexical.run(chunks=searchable)["extraction"], []


def resolve(
    extraction: Extraction,
    config: IngestConfig,
    store: KnowledgeStore,
    embedder: SentenceTransformersTextEmbedder,
    llm: OpenAIChatClient | None,
) -> Resolution:
    """Resolve the document's entities against the stored ones, keeping every stored entity's standing.

    An entity stored before keeps its merge (or an undone merge stays undone): decisions about it are dropped, and
    a decision resolving into a merged entity resolves into what that entity is merged into.
    """
    settings = config.resolution
    resolver = entity_resolver(settings, embedder.embed_batch, llm)
    resolution: Resolution = resolver.run(extraction=extraction, known=store.graph.canonical_entities())["resolution"]
    ends = {e for d in resolution.decisions for e in (d.member_id, d.resolved_id)}
    stored = store.graph.resolved_ids(sorted(ends))
    decisions = []
    for decision in resolution.decisions:
        if decision.member_id in stored:
            continue  # decided when it was stored: its merge, or the undo of it, stands
        target = stored.get(decision.resolved_id, decision.resolved_id)
        if target != decision.member_id:
            decisions.append(replace(decision, resolved_id=target))
    return replace(resolution, decisions=tuple(decisions))


@task(name="reextract-document", cache_policy=NO_CACHE, persist_result=False)
def reextract_document(
    target: Target,
    store: KnowledgeStore,
    embedder: SentenceTransformersTextEmbedder,
    llm: OpenAIChatClient | None,
    *,
    progress: bool = False,
) -> DocumentOutcome:
    """Extract, prune and resolve one document's stored chunks again, and replace its links in the graph.

    A document whose extraction left chunks unanswered (or whose LLM failed) is not touched: it ends ``failed``
    with the reason, and running the command again retries it.
    """
    journal = _journal(store)
    config, hashes = target.config, target.hashes
    done_key = PhaseKey(target.subject, DONE, hashes.resolve)
    finished: DocumentOutcome | None = journal.load(done_key)
    if finished is not None:  # written by an interrupted run before it died
        with store.writing():
            store.graph.set_config_hashes({target.document_id: hashes.resolve})
        return replace(finished, resumed=True)
    extract_key = PhaseKey(target.subject, EXTRACTED, hashes.extract)
    extracted: tuple[Extraction, list[ChunkFailure]] | None = journal.load(extract_key)
    if extracted is None:
        try:
            extracted = extract_chunks(target.chunks, config, llm, progress=progress)
        except LLMError as exc:
            return _failed(target, f"the LLM failed ({exc}); its graph is unchanged, run the command again to retry")
        if extracted[1]:
            first = extracted[1][0]
            reason = (
                f"{len(extracted[1])} chunks got no answer from the LLM (chunk {first.chunk_id}: {first.reason}); "
                "its graph is unchanged, run the command again to retry"
            )
            return _failed(target, reason)
        journal.save(extract_key, extracted)
    resolve_key = PhaseKey(target.subject, RESOLVED, hashes.resolve)
    resolved: tuple[Resolution, int] | None = journal.load(resolve_key)
    if resolved is None:  # journaled before the write: a write killed half-way is finished with the same decisions
        pruner = OntologyPruner(ontology_from_config(config.ontology))
        out = pruner.run(extraction=extracted[0])
        resolved = (resolve(out["extraction"], config, store, embedder, llm), out["pruned"].relations_dropped)
        journal.save(resolve_key, resolved)
    resolution, pruned = resolved
    chunk_ids = [c.id for c in target.chunks]
    written = replace_links(
        store,
        document_id=target.document_id,
        subject=target.subject,
        chunk_ids=chunk_ids,
        resolution=resolution,
        embedder=embedder,
        hashes=hashes,
    )
    extraction = resolution.extraction
    outcome = DocumentOutcome(
        target.document_id,
        ReextractStatus.REEXTRACTED,
        chunks=len(target.chunks),
        entities=len({e.id for e in extraction.entities}),
        relations=len({r.id for r in extraction.relations}),
        relations_pruned=pruned,
        entities_new=written.entities_new,
        entities_removed=len(written.removed),
    )
    journal.save(done_key, outcome)
    return outcome


def _failed(target: Target, reason: str) -> DocumentOutcome:
    return DocumentOutcome(target.document_id, ReextractStatus.FAILED, reason, chunks=len(target.chunks))
