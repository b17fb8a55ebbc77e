"""``LLMText2CypherRetriever``: the ``text2cypher`` method, values that a model-written graph query computes."""

from __future__ import annotations

from typing import Any

from haystack import component
from haystack.core.serialization import default_from_dict, default_to_dict

from agrag.components.data_models.cypher_row import CypherRow
from agrag.components.data_models.embedding import Embedding
from agrag.components.data_models.method_output import MethodOutput
from agrag.components.data_models.method_status import MethodStatus
from agrag.components.data_models.retrieval_method import RetrievalMethod
from agrag.components.data_models.search_result import SearchResult
from agrag.components.errors import LLMError, LLMNotConfiguredError, StoreError, Text2CypherError
from agrag.components.llm.openai_chat_client import ChatMessage, OpenAIChatClient, parse_json_object
from agrag.components.llm.openai_chat_client_spec import OpenAIChatClientSpec
from agrag.components.retrievers.guarded_run import guarded_run
from agrag.components.stores.graph_store import GraphStore
from agrag.components.stores.store_ref import StoreRef, graph_part
from agrag.components.stores.store_spec import StoreSpec

SYSTEM_PROMPT = (
    "You translate a question into ONE read-only Cypher query for the Kùzu graph database described below. "
    "Use only the tables and properties it lists. Never write to the graph (no CREATE, MERGE, SET, DELETE, DROP, "
    "ALTER, COPY, LOAD) and send a single statement without a semicolon. Give each returned column a short name "
    'with AS. Answer with one JSON object and nothing else: {"cypher": "<the query>"}.'
)

QUESTION_PROMPT = "Graph schema:\n{schema}\n\nQuestion: {question}\n\nReturn at most {top_k} rows."

REPAIR_PROMPT = (
    "That query failed: {error}\n\nWrite a corrected query for the same question, using only the schema above. "
    'Answer with one JSON object and nothing else: {{"cypher": "<the query>"}}.'
)


class _QueryFailedError(Exception):
    """A query from the model that could not run: what the repair prompt tells the model."""

    def __init__(self, query: str, reason: str) -> None:
        super().__init__(reason)
        self.query = query
        self.reason = reason


@component
class LLMText2CypherRetriever:
    """Asks an LLM for one read-only Cypher query that answers the question, runs it, and returns its rows.

    The model sees the graph's schema (``GraphStore.schema_text``). A query that fails (not JSON, no query, a write,
    a syntax error, a timeout) is sent back once with the error for a repair; if the repair fails too, the method
    fails: a failed query or model call is never an empty result. The failure is reported in ``status`` (``run``
    never raises), so the other methods of a recipe still return. An empty result means the query ran and found no
    rows. Each row becomes a ``CypherRow``, ranked in the order the query returned them.

    It serializes the graph as its ``StoreSpec`` and the LLM client as its settings (``OpenAIChatClientSpec``, the
    key as the name of its environment variable); both open again in ``warm_up``.

    Usage:
        ```python
        retriever = LLMText2CypherRetriever(store.graph, OpenAIChatClient(base_url, model="llama3.1"))
        out = retriever.run(query="How many entities are people?")
        rows = [r.item for r in out["results"]]
        ```
    """

    def __init__(
        self,
        graph: GraphStore | StoreSpec,
        llm: OpenAIChatClient | OpenAIChatClientSpec | None,
        top_k: int = 10,
        method: RetrievalMethod | str = RetrievalMethod.TEXT2CYPHER,
    ) -> None:
        """Query ``graph`` with queries ``llm`` writes; either may be given as its spec (opened in ``warm_up``)."""
        self._graph = StoreRef(graph, graph_part)
        self._llm_spec = llm if isinstance(llm, OpenAIChatClientSpec) else None
        self._llm = llm if isinstance(llm, OpenAIChatClient) else None
        self.top_k = top_k
        self.method = RetrievalMethod.from_str(method)

    @property
    def graph(self) -> GraphStore:
        """The graph store queried (opened from its spec on first use)."""
        return self._graph.get()

    @property
    def llm(self) -> OpenAIChatClient | None:
        """The client of the model that writes the queries (made from its spec on first use), if any."""
        if self._llm is None and self._llm_spec is not None:
            self._llm = self._llm_spec.open()
        return self._llm

    def warm_up(self) -> None:
        """Open the graph store and the LLM client named by spec."""
        self._graph.get()
        _ = self.llm

    def to_dict(self) -> dict[str, Any]:
        """Serialize with the graph's store spec and the LLM client's settings (never its key)."""
        llm = self._llm_spec or (OpenAIChatClientSpec.of(self._llm) if self._llm is not None else None)
        return default_to_dict(
            self, graph=self._graph.spec(type(self).__name__), llm=llm, top_k=self.top_k, method=self.method.value
        )

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> LLMText2CypherRetriever:
        """Deserialize a retriever written by ``to_dict``; its graph store and client open in ``warm_up``."""
        return default_from_dict(cls, data)

    @component.output_types(results=list[SearchResult], status=MethodStatus)
    def run(self, query: str, query_embedding: Embedding | None = None, top_k: int | None = None) -> MethodOutput:
        """Answer ``query`` with the rows of a model-written graph query.

        Args:
            query: The question.
            query_embedding: Not used; accepted so the method is wired like the others.
            top_k: The most rows returned (None: the retriever's ``top_k``).

        Returns:
            ``results``: the rows in the query's order, each with this method's name; ``status``: how the method
            went (with the error when it failed).
        """
        return guarded_run(self.method, lambda: self._search(query, top_k or self.top_k))

    def _search(self, question: str, top_k: int) -> list[SearchResult]:
        """Write, run and if need be repair the query once.

        Raises:
            LLMNotConfiguredError: there is no LLM.
            LLMError: the model call itself failed.
            Text2CypherError: the query failed, and so did its repair.
        """
        if self.llm is None:
            raise LLMNotConfiguredError("The text2cypher search method")
        if top_k <= 0:
            return []
        prompt = QUESTION_PROMPT.format(schema=self.graph.schema_text(), question=question, top_k=top_k)
        messages = [ChatMessage("system", SYSTEM_PROMPT), ChatMessage("user", prompt)]
        answer = self.llm.complete(messages, json_output=True)
        try:
            return self._rows(answer, top_k)
        except _QueryFailedError as failed:
            repair = [
                *messages,
                ChatMessage("assistant", answer),
                ChatMessage("user", REPAIR_PROMPT.format(error=failed)),
            ]
            try:
                return self._rows(self.llm.complete(repair, json_output=True), top_k)
            except _QueryFailedError as again:
                raise Text2CypherError(question, again.query, again.reason) from again

    def _rows(self, answer: str, top_k: int) -> list[SearchResult]:
        """Run the query of a model's answer; raise ``_QueryFailedError`` with a reason the model can act on."""
        try:
            cypher: Any = parse_json_object(answer).get("cypher")
        except LLMError as exc:
            raise _QueryFailedError(answer, str(exc)) from exc
        if not isinstance(cypher, str) or not cypher.strip():
            raise _QueryFailedError(answer, 'the answer has no query in its "cypher" field')
        cypher = cypher.strip()
        try:
            columns, rows = self.graph.run_read_only(cypher, max_rows=top_k)
        except StoreError as exc:
            raise _QueryFailedError(cypher, str(exc)) from exc
        return [
            SearchResult(
                CypherRow.of(cypher, tuple(columns), tuple(row)), 1.0 / (1 + rank), self.method, (self.method,)
            )
            for rank, row in enumerate(rows)
        ]
