"""``AppliedPlan``: the plan one document was ingested with, as stored with it."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from typing import Any

from agrag.components.data_models.immutable import Immutable


@dataclass(frozen=True, slots=True)
class AppliedPlan(Immutable):
    """Which rule of ``ingest.plan.rules`` a document got, the strategies it was cut and read with, and why.

    Attributes:
        rule: The rule's position in ``ingest.plan.rules``, counting from 1; None when no rule matched (the
            run's defaults).
        match: That rule's glob ('' without a rule).
        chunker: The chunker's option name (``conf/ingest/chunker``).
        chunker_options: Every setting of the chunker as used.
        extractor: The extractor's option name (``conf/ingest/extractor``).
        extractor_options: Every setting of the extractor as used.
        resolution: The rule's overrides of ``ingest.resolution`` that were applied ({} for none).
        reasons: Why a choice of the rule was replaced or a setting not applied; empty when the rule got all it
            asked for.
    """

    rule: int | None
    match: str
    chunker: str
    chunker_options: dict[str, Any] = field(default_factory=dict)
    extractor: str = "lexical"
    extractor_options: dict[str, Any] = field(default_factory=dict)
    resolution: dict[str, Any] = field(default_factory=dict)
    reasons: tuple[str, ...] = ()

    def summary(self) -> str:
        """One line for people: ``rule 2 (*.csv): fixed chunker, lexical extractor``."""
        source = f"rule {self.rule} ({self.match})" if self.rule is not None else "defaults"
        extra = ", resolution overrides" if self.resolution else ""
        return f"{source}: {self.chunker} chunker, {self.extractor} extractor{extra}"

    def to_json(self) -> str:
        """The plan as the JSON text stored on the document."""
        return json.dumps(asdict(self), sort_keys=True, separators=(",", ":"))

    @classmethod
    def from_json(cls, text: str) -> AppliedPlan | None:
        """The plan stored as ``text`` by ``to_json``; None for '' (a document stored before plans were recorded)."""
        if not text:
            return None
        data = json.loads(text)
        data["reasons"] = tuple(data.get("reasons", ()))
        return cls(**data)
