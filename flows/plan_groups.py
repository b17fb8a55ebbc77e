"""Per-file plans in the ingest flow: documents grouped by plan, each group run with its own settings.

Each group is chunked, extracted and embedded with its own ingest settings and phase hashes; here too are the
per-file limits and what each document is committed with.

Grouping keeps the phase journal right: a group's markers carry the hash of its own settings, so a changed rule
redoes the work of the files it decides and no other.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from agrag.components.data_models.chunk import Chunk
from agrag.components.data_models.entity import Entity
from agrag.components.data_models.extraction import concat_extractions
from agrag.components.data_models.fact import Fact
from agrag.components.data_models.llm_estimate import LLMEstimate
from agrag.components.data_models.loaded_document import LoadedDocument
from agrag.components.data_models.phase_key import config_hash
from agrag.components.embedders.sentence_transformers_text_embedder import SentenceTransformersTextEmbedder
from agrag.components.extractors.llm_entity_extractor import LLMEntityExtractor
from agrag.components.llm.openai_chat_client import OpenAIChatClient
from agrag.components.stores.sqlite_phase_journal import SqlitePhaseJournal
from agrag.components.stores.vector_store import VectorStore
from agrag.flows import embed_task
from agrag.flows import ingest_tasks as tasks
from agrag.flows.embed_fanout import slice_embedder
from agrag.flows.embed_task import EmbeddedPoints
from agrag.flows.fact_points import fact_points, stored_vectors
from agrag.flows.ingest_control import IngestControl
from agrag.flows.ingest_tasks import ExtractionOutcome, Phase, PhaseOutput
from agrag.flows.stage_clock import as_is
from agrag.pipelines.config_models import (
    AgragConfig,
    IngestConfig,
    LexicalExtractorConfig,
    LLMExtractorConfig,
    ResolutionConfig,
)
from agrag.pipelines.ingest_components import PhaseHashes, ontology_from_config, phase_hashes
from agrag.pipelines.ingest_plans import FilePlan, plan_for, with_reason
from agrag.pipelines.parallel_config import ParallelConfig


@dataclass(frozen=True, slots=True)
class PlanGroup:
    """Documents with the same plan settings, the ingest settings they run with, and those settings' phase hashes."""

    ingest: IngestConfig
    documents: list[LoadedDocument]
    hashes: PhaseHashes


def plans_of(documents: Sequence[LoadedDocument], ingest: IngestConfig) -> dict[str, FilePlan]:
    """Each document's plan (``plan_for`` its source path), by document id."""
    return {d.document.id: plan_for(d.document.source_path, ingest) for d in documents}


def _hashes(ingest: IngestConfig, config: AgragConfig, llm_model: str | None) -> PhaseHashes:
    return phase_hashes(config.model_copy(update={"ingest": ingest}), llm_model)


def grouped(
    documents: Sequence[LoadedDocument], plans: dict[str, FilePlan], config: AgragConfig, llm_model: str | None
) -> list[PlanGroup]:
    """The documents in groups of equal plan settings, groups in the order of their first document."""
    groups: dict[str, PlanGroup] = {}
    for d in documents:
        plan = plans[d.document.id]
        if plan.key not in groups:
            groups[plan.key] = PlanGroup(plan.ingest, [], _hashes(plan.ingest, config, llm_model))
        groups[plan.key].documents.append(d)
    return list(groups.values())


def expected_hashes(documents: Sequence[LoadedDocument], config: AgragConfig, llm_model: str | None) -> dict[str, str]:
    """The settings hash each document would be committed with under its current plan, by document id."""
    plans = plans_of(documents, config.ingest)
    by_key: dict[str, str] = {}
    for plan in plans.values():
        if plan.key not in by_key:
            by_key[plan.key] = _hashes(plan.ingest, config, llm_model).resolve
    return {doc_id: by_key[plan.key] for doc_id, plan in plans.items()}


def chunk_groups(
    documents: Sequence[LoadedDocument], groups: list[PlanGroup], journal: SqlitePhaseJournal
) -> PhaseOutput[list[Chunk]]:
    """Chunk each group with its chunker under its own chunk hash; the chunks in the order of ``documents``."""
    by_document: dict[str, list[Chunk]] = {}
    reused = 0
    for group in groups:
        out = tasks.chunk_documents(as_is(group.documents), group.ingest, Phase(journal, group.hashes.chunk))
        reused += out.reused
        for chunk in out.value:
            by_document.setdefault(chunk.document_id, []).append(chunk)
    return PhaseOutput([c for d in documents for c in by_document.get(d.document.id, [])], reused)


def over_chunk_limit(chunks: Sequence[Chunk], plans: dict[str, FilePlan], limit: int | None) -> dict[str, str]:
    """The documents cut into more than ``limit`` chunks, each with the reason it is refused."""
    if limit is None:
        return {}
    counts: dict[str, int] = {}
    for chunk in chunks:
        counts[chunk.document_id] = counts.get(chunk.document_id, 0) + 1
    return {
        doc_id: f"{n:,} chunks with the {plans[doc_id].applied.chunker} chunker, over "
        f"ingest.plan.limits.max_chunks_per_file={limit} (the per-file cap), so it was not extracted: to ingest it, "
        f"raise the cap for the run (ingest.plan.limits.max_chunks_per_file={n}) or give the file a coarser chunker "
        "(a rule with larger chunker_options); its stored version, if any, stays"
        for doc_id, n in counts.items()
        if n > limit
    }


def within_llm_budget(
    plans: dict[str, FilePlan],
    chunks: Sequence[Chunk],
    ingest: IngestConfig,
    llm: OpenAIChatClient | None,
) -> dict[str, FilePlan]:
    """``plans`` with LLM extraction replaced for files whose estimate is over ``max_llm_calls_per_file``.

    Such a file is extracted by the run's default extractor, or by the lexical one when the default uses the LLM
    too; the reason goes into its plan. The estimate is the LLM extractor's own (cached answers cost no call).
    """
    limit = ingest.plan.limits.max_llm_calls_per_file
    if limit is None or llm is None:
        return plans
    fallback = LexicalExtractorConfig() if isinstance(ingest.extractor, LLMExtractorConfig) else ingest.extractor
    by_document: dict[str, list[Chunk]] = {}
    for chunk in chunks:
        by_document.setdefault(chunk.document_id, []).append(chunk)
    out = dict(plans)
    for doc_id, plan in plans.items():
        settings = plan.ingest.extractor
        if not isinstance(settings, LLMExtractorConfig):
            continue
        extractor = LLMEntityExtractor(
            llm,
            ontology_from_config(plan.ingest.ontology),
            prompt=settings.prompt,
            gleaning_rounds=settings.gleaning_rounds,
        )
        calls = extractor.estimate(by_document.get(doc_id, [])).calls
        if calls > limit:
            reason = (
                f"LLM extraction estimate of {calls} calls is over ingest.plan.limits.max_llm_calls_per_file={limit}; "
                f"used {fallback.kind}"
            )
            out[doc_id] = with_reason(plan, reason, extractor=fallback)
    return out


def _sum(estimates: list[LLMEstimate]) -> LLMEstimate | None:
    if not estimates:
        return None
    return LLMEstimate(
        items=sum(e.items for e in estimates),
        calls=sum(e.calls for e in estimates),
        prompt_tokens=sum(e.prompt_tokens for e in estimates),
        cached=sum(e.cached for e in estimates),
    )


def extract_groups(
    groups: list[PlanGroup],
    chunks: Sequence[Chunk],
    llm: OpenAIChatClient | None,
    journal: SqlitePhaseJournal,
    *,
    progress: bool,
    control: IngestControl | None,
) -> PhaseOutput[ExtractionOutcome]:
    """Extract each group with its extractor under its own extract hash; one extraction, in group order.

    LLM groups share the run's ``ingest.max_llm_calls``: each may spend what the groups before it left.
    """
    by_document: dict[str, list[Chunk]] = {}
    for chunk in chunks:
        by_document.setdefault(chunk.document_id, []).append(chunk)
    parts, failures, estimates, reused = [], [], [], 0
    calls_before = llm.calls if llm is not None else 0
    for group in groups:
        ingest = group.ingest
        if llm is not None and isinstance(ingest.extractor, LLMExtractorConfig):
            spent = llm.calls - calls_before
            ingest = ingest.model_copy(update={"max_llm_calls": max(0, ingest.max_llm_calls - spent)})
        own = [c for d in group.documents for c in by_document.get(d.document.id, [])]
        out = tasks.extract_entities(
            as_is(group.documents),
            as_is(own),
            ingest,
            as_is(llm),
            phase=Phase(journal, group.hashes.extract),
            progress=progress,
            control=control,
        )
        parts.append(out.value.extraction)
        failures += out.value.failures
        estimates += [out.value.estimate] if out.value.estimate is not None else []
        reused += out.reused
    outcome = ExtractionOutcome(concat_extractions(parts), failures, _sum(estimates))
    return PhaseOutput(outcome, reused)


def embed_groups(
    groups: list[PlanGroup],
    chunks: Sequence[Chunk],
    entities: list[Entity],
    merged: set[str],
    embedder: SentenceTransformersTextEmbedder,
    *,
    facts: list[Fact],
    entity_vectors: VectorStore,
    journal: SqlitePhaseJournal,
    control: IngestControl | None,
    parallel: ParallelConfig,
    dask_address: str | None,
) -> PhaseOutput[EmbeddedPoints]:
    """Embed each group's chunks under its own embed hash (the entities once, with the first group), then ``facts``.

    A fact's vector is made from its passage's and its ends' (``fact_points``): the ends stored before this run are
    read from ``entity_vectors`` (the entities collection).

    A batch of at least ``parallel.min_chunks`` searchable chunks, with ``parallel.workers`` above 0, is embedded
    on Dask workers (a local cluster started for this stage, or the scheduler at ``dask_address``).
    """
    searchable = sum(c.searchable for c in chunks)
    with slice_embedder(parallel, dask_address, embedder, searchable) as slices:
        chunk_points, entity_points, reused = [], [], 0
        for index, group in enumerate(groups or [PlanGroup(IngestConfig(), [], PhaseHashes("", "", "", ""))]):
            ids = {d.document.id for d in group.documents}
            out = embed_task.embed(
                as_is(group.documents),
                as_is([c for c in chunks if c.document_id in ids]),
                as_is(entities if index == 0 else []),
                merged,
                as_is(slices),
                phase=Phase(journal, group.hashes.embed),
                control=control,
            )
            chunk_points += out.value.chunks
            entity_points += out.value.entities
            reused += out.reused
        ends = stored_vectors(entity_vectors, [e for f in facts for e in (f.source_id, f.target_id)], entity_points)
        stated = fact_points(facts, {p.id: p.dense for p in chunk_points}, ends)
        return PhaseOutput(EmbeddedPoints(chunk_points, entity_points, slices.where, stated), reused)


def resolution_of(plans: dict[str, FilePlan], ingest: IngestConfig) -> tuple[ResolutionConfig, dict[str, FilePlan]]:
    """The one resolution pass's settings, and the plans with a reason where a rule's overrides were not applied.

    When every changed file asks for the same resolution settings, the pass uses them; otherwise it uses the run's
    ``ingest.resolution``, and each file whose rule overrides it says so.
    """
    wanted = {p.ingest.resolution.model_dump_json(): p.ingest.resolution for p in plans.values()}
    if len(wanted) <= 1:
        return next(iter(wanted.values()), ingest.resolution), plans
    out = dict(plans)
    for doc_id, plan in plans.items():
        if plan.ingest.resolution != ingest.resolution:
            reason = (
                f"the resolution overrides of rule {plan.applied.rule} were not applied: the files of this run ask for "
                "different resolution settings and resolution is one pass (ingest these files in a run of their own)"
            )
            changed = with_reason(plan, reason, resolution=ingest.resolution)
            out[doc_id] = replace(changed, applied=replace(changed.applied, resolution={}))
    return ingest.resolution, out


def resolve_hash(groups: list[PlanGroup], resolution: ResolutionConfig, config: AgragConfig, model: str | None) -> str:
    """The hash the batch's resolution is journaled under: its groups' extract hashes and the pass's settings.

    One group resolved with its own settings keeps that group's hash (a run without rules hashes as before).
    """
    if len(groups) == 1 and groups[0].ingest.resolution == resolution:
        return groups[0].hashes.resolve
    settings = _hashes(config.ingest.model_copy(update={"resolution": resolution}), config, model).resolve
    return config_hash(*sorted(g.hashes.extract for g in groups), settings)


def committed_hashes(plans: dict[str, FilePlan], config: AgragConfig, llm_model: str | None) -> dict[str, str]:
    """The settings hash each document is committed with: its plan's settings, as resolved (by document id)."""
    by_key: dict[str, str] = {}
    out = {}
    for doc_id, plan in plans.items():
        if plan.key not in by_key:
            by_key[plan.key] = _hashes(plan.ingest, config, llm_model).resolve
        out[doc_id] = by_key[plan.key]
    return out
