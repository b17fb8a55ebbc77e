"""The write tools that rework what is stored: ``reextract`` (documents again, in place) and ``finalize``.

Like ``ingest`` they run as runs of the data dir's one ingestion queue (the runs ``POST /v1/reextractions`` and
``POST /v1/finalize`` queue) and wait for the run to end, so the next call sees what they wrote. They are offered
only by a ``WriteHost``, to callers that may read every document, and over MCP only with ``--allow-write``.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, model_validator

from agrag.components.data_models.ingestion_run import IngestionRun, RunSource, RunState
from agrag.pipelines.document_ids import check_documents_known
from agrag.service.tools.tool import Tool, ToolContext, ToolInput
from agrag.service.tools.write_tools import writer

MAX_DOCUMENTS = 1000


class ReextractInput(ToolInput):
    """The arguments of ``reextract``: the documents, or ``other_settings``."""

    document_ids: list[Annotated[str, Field(min_length=1, max_length=200)]] = Field(
        [],
        max_length=MAX_DOCUMENTS,
        description="The documents to re-extract, by id (as list_documents gives them, or as an ingestion's pruned "
        f"report names them after set_ontology); at most {MAX_DOCUMENTS}. Leave empty with other_settings.",
    )
    other_settings: bool = Field(
        False,
        description="Instead of ids: every document ingested under other settings than the current ones (another "
        "extractor, plan or ontology).",
    )
    force: bool = Field(
        False,
        description="Re-extract the named documents even when they were extracted under the current settings "
        "already (otherwise they are reported unchanged).",
    )

    @model_validator(mode="after")
    def _one_way(self) -> ReextractInput:
        if self.document_ids and self.other_settings:
            raise ValueError("give either `document_ids` or `other_settings: true`, not both")
        if not self.document_ids and not self.other_settings:
            raise ValueError("name the documents in `document_ids`, or set `other_settings: true`")
        return self


class FinalizeInput(ToolInput):
    """``finalize`` takes no arguments."""


class ReextractedDocument(BaseModel):
    """One document of a re-extraction and how it ended."""

    model_config = ConfigDict(frozen=True)

    document_id: str = Field(..., description="The document.")
    status: str = Field(..., description="reextracted, unchanged (already under the current settings) or failed.")
    reason: str = Field("", description="Why it failed or was left unchanged (or a note).")


class ReextractResult(BaseModel):
    """The finished re-extraction run and each document's outcome."""

    model_config = ConfigDict(frozen=True)

    run_id: str = Field(..., description="The run that did it.")
    state: RunState = Field(..., description="completed, completed_with_failures, failed, cancelled or interrupted.")
    message: str = Field("", description="What the run said: the counts per status, or why it failed.")
    error: str = Field("", description="The kind of error that ended it, if it failed.")
    documents: tuple[ReextractedDocument, ...] = Field((), description="Each document and its outcome.")


class FinalizeResult(BaseModel):
    """The finished finalize run."""

    model_config = ConfigDict(frozen=True)

    run_id: str = Field(..., description="The run that did it.")
    state: RunState = Field(..., description="completed, failed, cancelled or interrupted.")
    message: str = Field("", description="What was rebuilt (communities per level), or why nothing needed to be.")
    error: str = Field("", description="The kind of error that ended it, if it failed.")


def _reextract(context: ToolContext, arguments: ReextractInput) -> ReextractResult:
    # a client of the API imports the tool definitions: they load without Prefect and the flows (a second)
    from agrag.flows.reextract_flow import check_request  # noqa: PLC0415
    from agrag.pipelines.ingest_components import check_llm_needs  # noqa: PLC0415 - imports Haystack and torch

    host = writer(context, "reextract")
    ids = check_request(arguments.document_ids, arguments.other_settings)
    check_llm_needs(host.runtime.config.ingest, host.runtime.llm)
    with host.runtime.store.reading():  # only for the check: the run itself waits for the write lock
        check_documents_known(host.runtime.store.graph, ids)
    queued = host.queue.submit_reextract(
        ids or (), (), RunSource.CLI, other_settings=arguments.other_settings, force=arguments.force
    )
    run = host.wait(queued)
    return ReextractResult(
        run_id=run.id,
        state=run.state,
        message=run.message,
        error=run.error,
        documents=tuple(_documents(run)),
    )


def _documents(run: IngestionRun) -> list[ReextractedDocument]:
    """Each document's outcome from the run's report (none if it ended before re-extracting any)."""
    found = (run.report or {}).get("documents", [])
    outcomes: list[dict[str, Any]] = [d for d in found if isinstance(d, dict)] if isinstance(found, list) else []
    return [
        ReextractedDocument(
            document_id=str(d.get("document_id", "")), status=str(d.get("status", "")), reason=str(d.get("reason", ""))
        )
        for d in outcomes
    ]


def _finalize(context: ToolContext, arguments: FinalizeInput) -> FinalizeResult:
    from agrag.pipelines.ingest_components import reports_use_llm  # noqa: PLC0415 - as in _reextract

    host = writer(context, "finalize")
    communities = host.runtime.config.ingest.communities
    if communities.enabled:
        reports_use_llm(communities, host.runtime.llm)  # reports=llm without an LLM is refused before queueing
    run = host.wait(host.queue.submit_finalize((), RunSource.CLI))
    return FinalizeResult(run_id=run.id, state=run.state, message=run.message, error=run.error)


REEXTRACT: Tool[ReextractInput, ReextractResult] = Tool(
    name="reextract",
    title="Re-extract documents in place",
    description=(
        "Extract entities and relations again from documents already in the graph, under the ontology and "
        "settings now in force: their passages (and every evidence id) stay, their entities, mentions and "
        "relations are replaced, merges that still apply stay, and the communities around them get new reports. "
        "Use it after set_ontology, with the document ids the ingestion's pruned report names, so the labels and "
        "relations the old ontology dropped are kept; or with other_settings to redo every document ingested "
        "under other settings. Ask the user before calling it: it writes to the data dir. Returns the run's state "
        "and each document's status (reextracted, unchanged, failed) with the reason. Cost: about as much as "
        "ingesting those documents again (seconds each offline, one or more LLM calls per passage with an LLM "
        "extractor); it waits for the runs before it."
    ),
    input_model=ReextractInput,
    output_type=ReextractResult,
    handler=_reextract,
    writes=True,
)
FINALIZE: Tool[FinalizeInput, FinalizeResult] = Tool(
    name="finalize",
    title="Rebuild communities and reports",
    description=(
        "Rebuild the graph's communities and their reports once, after ingestions that deferred it (the server "
        "ingests with ingest.finalize=manual, so a corpus fed in pieces pays for community detection once; an "
        "ingestion's result then says the communities were deferred). Call it after the last of those ingestions, "
        "before questions about themes or communities. Does nothing, and says so, when they are up to date. Ask "
        "the user before calling it: it writes to the data dir. Returns the run's state and message (communities "
        "per level). Cost: seconds offline; one LLM call per changed community when reports come from an LLM; "
        "it waits for the runs before it."
    ),
    input_model=FinalizeInput,
    output_type=FinalizeResult,
    handler=_finalize,
    writes=True,
)
