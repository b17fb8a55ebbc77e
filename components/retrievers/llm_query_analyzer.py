"""``LLMQueryAnalyzer``: a question's answer type, names and relations from an LLM, the rules when it fails."""

from __future__ import annotations

import time
from dataclasses import replace
from typing import Any

from haystack import component
from haystack.core.serialization import default_from_dict, default_to_dict

from agrag.components import defaults
from agrag.components.data_models.query_analysis import AnswerType, QueryAnalysis, QueryAnalyzerKind
from agrag.components.errors import LLMError, LLMNotConfiguredError
from agrag.components.llm.openai_chat_client import ChatMessage, OpenAIChatClient
from agrag.components.llm.openai_chat_client_spec import OpenAIChatClientSpec
from agrag.components.query_analysis_errors import QueryAnalysisError
from agrag.components.retrievers.query_predicates import normal_predicate
from agrag.components.retrievers.rule_query_analyzer import RuleQueryAnalyzer

# After RAGFlow's query analysis (rag/graphrag/query_analyze_prompt.py: answer-type keywords chosen from a pool of
# types, and the entities of the query), with our types and the relations of the query added.
ANSWER_TYPE_POOL = {
    AnswerType.PERSON: ["Maria Chen", "the project lead"],
    AnswerType.ORGANIZATION: ["Acme Robotics", "Northfield University"],
    AnswerType.PLACE: ["Lisbon", "the North Sea"],
    AnswerType.PRODUCT: ["Orion Planner", "the X-200 sensor"],
    AnswerType.EVENT: ["the 2023 field trial", "Storm Ciara"],
    AnswerType.DATE: ["31 October 2024", "last spring"],
    AnswerType.QUANTITY: ["€4,850", "45 m", "24 students"],
}
PROMPT = """---Role---
You take apart a question that will be answered from a knowledge graph of someone's documents.

---Goal---
Given the query, give the type of its answer, the entities it names and the relations it asks about.

---Instructions---
- Answer with one JSON object and nothing else. It has three keys:
  - "answer_type_keywords": the types the answer may have, most likely first, at most 3, chosen from the answer
    type pool. The pool maps each type to examples of answers of that type.
  - "entities_from_query": the names and specific things the query mentions, written as in the query (people,
    organisations, places, products, codes, titles). Only what the query contains.
  - "relation_keywords": the relations the query asks about, as short predicates in the third person ("owns",
    "supplies", "manages", "studied at", "replaced ... as").
######################
-Examples-
######################
Query: "Who supplies the sensors for the Orion Planner?"
Output: {{"answer_type_keywords": ["Organization", "Person"], "entities_from_query": ["Orion Planner"],
"relation_keywords": ["supplies"]}}
Query: "Where did Dr. Okafor study before she joined Acme Robotics?"
Output: {{"answer_type_keywords": ["Organization", "Place"], "entities_from_query": ["Dr. Okafor", "Acme Robotics"],
"relation_keywords": ["studied at", "joined"]}}
Query: "How many days did the X-200 spend at the workshop in 2024?"
Output: {{"answer_type_keywords": ["Quantity"], "entities_from_query": ["X-200"], "relation_keywords": ["spends at"]}}
######################
-Real Data-
######################
Answer type pool: {pool}
Query: {query}
Output:"""
# Names models use for our types (RAGFlow's own pool says GEO, LOCATION, DATE AND TIME).
_SYNONYMS = {
    "location": AnswerType.PLACE, "geo": AnswerType.PLACE, "place": AnswerType.PLACE, "city": AnswerType.PLACE,
    "country": AnswerType.PLACE, "organisation": AnswerType.ORGANIZATION, "company": AnswerType.ORGANIZATION,
    "date and time": AnswerType.DATE, "time": AnswerType.DATE, "year": AnswerType.DATE,
    "number": AnswerType.QUANTITY, "amount": AnswerType.QUANTITY, "people": AnswerType.PERSON,
}  # fmt: skip


def prompt_for(query: str) -> str:
    """The analysis prompt of ``query``."""
    pool = {kind.value: examples for kind, examples in ANSWER_TYPE_POOL.items()}
    return PROMPT.format(pool=pool, query=query)


def _strings(data: dict[str, Any], field: str) -> list[str]:
    value = data.get(field)
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise QueryAnalysisError(field, "list of strings", value)
    return [v.strip() for v in value if v.strip()]


def _answer_type(keywords: list[str]) -> AnswerType:
    for keyword in keywords:
        folded = keyword.casefold()
        for kind in AnswerType:
            if folded == kind.value.casefold():
                return kind
        if folded in _SYNONYMS:
            return _SYNONYMS[folded]
    return AnswerType.UNKNOWN


def analysis_of(data: dict[str, Any]) -> QueryAnalysis:
    """The analysis an LLM answered (``answer_type_keywords``, ``entities_from_query``, ``relation_keywords``).

    Raises:
        QueryAnalysisError: a field is missing or not a list of strings.
    """
    hints: list[str] = []
    for hint in _strings(data, "entities_from_query"):
        if hint.casefold() not in {h.casefold() for h in hints}:
            hints.append(hint)
    relations: list[str] = []
    for phrase in _strings(data, "relation_keywords"):
        if (normal := normal_predicate(phrase)) and normal not in relations:
            relations.append(normal)
    return QueryAnalysis(
        answer_type=_answer_type(_strings(data, "answer_type_keywords")),
        entity_hints=tuple(hints),
        relation_keywords=tuple(relations),
        analyzer=QueryAnalyzerKind.LLM,
    )


@component
class LLMQueryAnalyzer:
    """Asks an LLM for a question's answer type, names and relations (RAGFlow's query analysis), as JSON.

    Any failure (no LLM, an endpoint error, a timeout, an answer that is not the JSON asked for) falls back to
    ``RuleQueryAnalyzer``, with the error recorded as ``QueryAnalysis.error``; ``analyze`` never raises. The LLM
    gets ``timeout_seconds`` and no retries, since a search waits for it; its answers are cached with the
    client's cache. Relation keywords are put in the rules' predicate form (``supplied by`` -> ``supplies``).

    Usage:
        ```python
        analyzer = LLMQueryAnalyzer(OpenAIChatClient(base_url, model="llama3.1"))
        analysis = analyzer.analyze("Who supplies the CT-60?")  # analyzer "llm", or "rules" with an error
        ```
    """

    def __init__(
        self,
        llm: OpenAIChatClient | OpenAIChatClientSpec | None,
        timeout_seconds: float = defaults.QUERY_ANALYSIS_TIMEOUT_SECONDS,
    ) -> None:
        """Analyse with ``llm`` (its spec is opened in ``warm_up``); None leaves the rules, with a typed error."""
        self._llm_spec = llm if isinstance(llm, OpenAIChatClientSpec) else None
        self._given = llm if isinstance(llm, OpenAIChatClient) else None
        self._llm: OpenAIChatClient | None = None
        self.timeout_seconds = timeout_seconds
        self.rules = RuleQueryAnalyzer()

    @property
    def llm(self) -> OpenAIChatClient | None:
        """The client the analysis calls: the one given (or opened from its spec), limited to the timeout."""
        if self._llm is None:
            given = self._given or (self._llm_spec.open() if self._llm_spec is not None else None)
            self._llm = given.limited(self.timeout_seconds) if given is not None else None
        return self._llm

    def warm_up(self) -> None:
        """Make the LLM client named by spec."""
        _ = self.llm

    def to_dict(self) -> dict[str, Any]:
        """Serialize with the LLM client's settings (never its key)."""
        llm = self._llm_spec or (OpenAIChatClientSpec.of(self._given) if self._given is not None else None)
        return default_to_dict(self, llm=llm, timeout_seconds=self.timeout_seconds)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> LLMQueryAnalyzer:
        """Deserialize an analyser written by ``to_dict``; its client is made in ``warm_up``."""
        return default_from_dict(cls, data)

    def analyze(self, query: str) -> QueryAnalysis:
        """The LLM's analysis of ``query``, or the rules' with the LLM's error."""
        started = time.perf_counter()
        try:
            if self.llm is None:
                raise LLMNotConfiguredError("Query analysis with RETRIEVAL_QUERY_ANALYZER=llm")
            analysis = analysis_of(self.llm.complete_json([ChatMessage("user", prompt_for(query))]))
        except LLMError as exc:
            analysis = replace(self.rules.analyze(query), error=f"{type(exc).__name__}: {exc}")
        return replace(analysis, elapsed_ms=(time.perf_counter() - started) * 1000)

    @component.output_types(analysis=QueryAnalysis)
    def run(self, query: str) -> dict[str, QueryAnalysis]:
        """Analyse ``query`` (the pipeline form of ``analyze``)."""
        return {"analysis": self.analyze(query)}
