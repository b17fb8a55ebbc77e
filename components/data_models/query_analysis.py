"""``QueryAnalysis``: what a question asks for (answer type), which names it gives and which relations it uses."""

from __future__ import annotations

from dataclasses import dataclass

from agrag.components.data_models.closed_set import ClosedSet
from agrag.components.data_models.immutable import Immutable


class AnswerType(ClosedSet, what="answer type"):
    """The kind of thing a question's answer is: the entity types of the ontology, plus quantities and unknown."""

    PERSON = "Person"
    ORGANIZATION = "Organization"
    PLACE = "Place"
    PRODUCT = "Product"
    EVENT = "Event"
    DATE = "Date"
    QUANTITY = "Quantity"
    UNKNOWN = "Unknown"


class QueryAnalyzerKind(ClosedSet, what="query analyzer"):
    """How a query is analysed: ``rules`` never calls an LLM; ``llm`` does; ``auto`` does when one is configured."""

    AUTO = "auto"
    RULES = "rules"
    LLM = "llm"


@dataclass(frozen=True, slots=True)
class QueryAnalysis(Immutable):
    """A question taken apart before retrieval (RAGFlow's query analysis), for the trace and for ranking.

    Attributes:
        answer_type: What the answer is expected to be (``who`` asks for a ``Person``, ``when`` for a ``Date``).
        entity_hints: The names the question mentions, as written (possessives dropped), whether or not the graph
            holds them: capitalised runs, codes (``CT-60``), quoted titles, titled names (``Dr. Okafor``).
        relation_keywords: The predicates the question uses, normalised (``owned by`` -> ``owns``, ``studied at``).
        analyzer: What produced the fields: ``rules`` or ``llm``.
        error: ``Type: message`` of the LLM's failure when the rules answered instead; empty otherwise.
        elapsed_ms: Wall time of the analysis.
    """

    answer_type: AnswerType
    entity_hints: tuple[str, ...]
    relation_keywords: tuple[str, ...]
    analyzer: QueryAnalyzerKind
    error: str = ""
    elapsed_ms: float = 0.0

    def summary(self) -> str:
        """One readable line: ``answer Person; names: BLOOMCAST; relations: uses, counts (rules)``."""
        names = ", ".join(self.entity_hints) or "none"
        relations = ", ".join(self.relation_keywords) or "none"
        fell_back = f"; the LLM failed: {self.error}" if self.error else ""
        return (
            f"answer {self.answer_type.value}; names: {names}; relations: {relations} "
            f"({self.analyzer.value}{fell_back})"
        )
