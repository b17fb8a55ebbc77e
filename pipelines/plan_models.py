"""The validated shape of ``ingest.plan`` and ``ingest.finalize``: per-file rules, their limits, the finalize policy.

A rule picks a chunker and an extractor (option names of ``conf/ingest/chunker`` and ``conf/ingest/extractor``)
for the files its glob matches; the limits say which choices a rule may make and how much one file may cost.
``agrag.pipelines.ingest_plans.plan_for`` turns them into one file's plan.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from agrag.components import defaults

CHUNKER_KINDS = ("fixed", "sentence", "structural")
EXTRACTOR_KINDS = ("lexical", "llm", "triples")


class FinalizePolicy(StrEnum):
    """When communities and their reports are rebuilt after an ingestion changed the graph.

    ``on_write``: at the end of every ingestion (the default). ``manual``: never by an ingestion; ``agrag finalize``
    rebuilds them once after a corpus was fed in pieces.
    """

    ON_WRITE = "on_write"
    MANUAL = "manual"

    @classmethod
    def from_str(cls, value: str) -> FinalizePolicy:
        """Parse a policy name; an unknown one raises ``ValueError`` listing the valid ones."""
        try:
            return cls(value)
        except ValueError:
            raise ValueError(f"unknown finalize policy {value!r} (valid: {', '.join(p.value for p in cls)})") from None


class _PlanModel(BaseModel):
    """Unknown keys are errors and values cannot change after loading (as ``config_models.StrictModel``)."""

    model_config = ConfigDict(extra="forbid", frozen=True)


class PlanRule(_PlanModel):
    """One rule of ``ingest.plan.rules``: for the files ``match`` matches, which chunker and extractor to use.

    Every key but ``match`` may be left out: it then means the run's default (``ingest/chunker``,
    ``ingest/extractor``, ``ingest.resolution``). ``chunker_options`` without ``chunker`` change the default
    chunker's settings for these files (the same for the extractor).
    """

    match: str = Field(
        ...,
        min_length=1,
        description="A glob on the file's path relative to the ingested folder (POSIX): '*.csv' matches a file name "
        "anywhere, 'reports/**/*.md' a path; the first rule that matches a file decides its plan.",
    )
    chunker: str | None = Field(
        None, description="An option of conf/ingest/chunker (structural, sentence, fixed, or your own)."
    )
    chunker_options: dict[str, Any] = Field(
        default_factory=dict, description="Settings of that chunker changed for these files, e.g. {size: 400}."
    )
    extractor: str | None = Field(None, description="An option of conf/ingest/extractor (lexical, llm, triples...).")
    extractor_options: dict[str, Any] = Field(
        default_factory=dict, description="Settings of that extractor changed for these files."
    )
    resolution: dict[str, Any] = Field(
        default_factory=dict,
        description="Overrides of ingest.resolution for these files, e.g. {fuzzy: {enabled: false}}. Resolution is "
        "one pass over a run's files: they apply when every changed file of the run asks for the same settings.",
    )

    @field_validator("match")
    @classmethod
    def _relative_glob(cls, value: str) -> str:
        if value.startswith("/") or "\\" in value:
            raise ValueError(
                f"match {value!r} must be a POSIX glob relative to the ingested folder, e.g. '*.csv' or "
                "'reports/**/*.md'"
            )
        return value

    @field_validator("chunker_options", "extractor_options")
    @classmethod
    def _no_kind(cls, value: dict[str, Any]) -> dict[str, Any]:
        if "kind" in value:
            raise ValueError("choose the strategy with chunker: NAME or extractor: NAME, not with a 'kind' option")
        return value


class PlanLimits(_PlanModel):
    """What a rule may choose, and what one file may cost.

    A rule choosing a chunker or extractor not allowed here gets the run's default instead, with the reason in the
    file's status; a run whose default is not allowed is refused when it loads.
    """

    chunkers: tuple[str, ...] = Field(
        (), description="Chunkers a rule may choose (option names or kinds); empty allows every chunker."
    )
    extractors: tuple[str, ...] = Field(
        (), description="Extractors a rule may choose (option names or kinds); empty allows every extractor."
    )
    max_llm_calls_per_file: int | None = Field(
        None,
        ge=0,
        strict=True,  # true/false is not a number of calls
        description="A file whose LLM extraction estimate is over this is extracted by the run's default extractor "
        "instead (the lexical one when the default uses the LLM too); null: no limit per file.",
    )
    max_chunks_per_file: int | None = Field(
        defaults.MAX_CHUNKS_PER_FILE,
        ge=1,
        strict=True,
        description="A file cut into more chunks than this (1,000 by default, the FalkorDB toolkit's limit) is "
        "refused before extraction: one failed row with its count and the override that takes it "
        "(ingest.plan.limits.max_chunks_per_file=N); the other files are ingested and its stored version stays. "
        "Raise it for a run meant to ingest such a file, or give the file a coarser chunker; null: no limit.",
    )


class PlanConfig(_PlanModel):
    """Per-file plans: the rules, in order, and the limits every plan stays within."""

    rules: tuple[PlanRule, ...] = Field((), description="The first rule whose match fits a file decides its plan.")
    limits: PlanLimits = PlanLimits()
    options: dict[str, dict[str, dict[str, Any]]] = Field(
        default_factory=dict,
        description="Filled in by agrag when it loads the configuration: the settings of each chunker and extractor "
        "option the rules name, read from conf/ingest/chunker and conf/ingest/extractor. Not written by hand.",
    )

    @model_validator(mode="before")
    @classmethod
    def _null_rules(cls, data: Any) -> Any:
        if isinstance(data, dict) and data.get("rules") is None and "rules" in data:
            return {**data, "rules": ()}
        return data
