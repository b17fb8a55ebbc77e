"""``CrossEncoderReranker``: re-orders passages and entities by a local cross-encoder, keeping slots for reports."""

from __future__ import annotations

import threading
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

from haystack import component

from agrag.components import defaults
from agrag.components.component_errors import ComponentConfigError
from agrag.components.data_models.chunk import Chunk
from agrag.components.data_models.community import Community
from agrag.components.data_models.cypher_row import CypherRow
from agrag.components.data_models.entity import Entity
from agrag.components.data_models.fact import Fact
from agrag.components.data_models.method_output import RerankOutput
from agrag.components.data_models.method_status import MethodStatus
from agrag.components.data_models.relation import Relation
from agrag.components.data_models.retrieval_method import SearchStep
from agrag.components.data_models.search_result import SearchItem, SearchResult
from agrag.components.embedders.embedding_texts import fact_keyword_text
from agrag.components.errors import ConfigError

MODEL_SETTING = "RETRIEVAL_CROSS_ENCODER_MODEL"

_MODELS: dict[tuple[str, str], Any] = {}
_MODELS_LOCK = threading.Lock()


def rerank_text(item: SearchItem) -> str:
    """The text of an item that a cross-encoder reads next to the query.

    An entity is ``name (label): description``; a chunk its heading path joined with `` > ``, a newline, then its
    text; a relation its description, else ``source TYPE target`` (entity ids: a relation carries no names); a
    fact its statement and sentence (``fact_keyword_text``); a text2cypher row ``column=value, ...``; a community
    ``title: summary`` of its report (``""`` without one).
    """
    if isinstance(item, Entity):
        head = f"{item.name} ({item.label})" if item.label else item.name
        return f"{head}: {item.description}" if item.description else head
    if isinstance(item, Chunk):
        return f"{item.heading}\n{item.text}" if item.heading_path else item.text
    if isinstance(item, Relation):
        return item.description or f"{item.source_id} {item.type} {item.target_id}"
    if isinstance(item, Fact):
        return fact_keyword_text(item)
    if isinstance(item, CypherRow):
        return ", ".join(f"{column}={value}" for column, value in zip(item.columns, item.values, strict=False))
    return f"{item.report.title}: {item.report.summary}" if item.report else ""


def _bad_model(path: str, reason: str) -> ConfigError:
    return ConfigError(
        f"The cross-encoder model {path!r} {reason}. Set {MODEL_SETTING} to the path of a local "
        "sentence-transformers cross-encoder folder (the one with its config.json, weights and tokenizer); "
        "models are never downloaded."
    )


def _load(model_dir: str, device: str) -> Any:
    # A model takes seconds to load: every pipeline of the process shares one copy per folder and device.
    path = Path(model_dir).expanduser()
    if not path.is_dir():
        raise _bad_model(model_dir, "is not a folder on this machine")
    key = (str(path.resolve()), device)
    with _MODELS_LOCK:
        if key not in _MODELS:
            from sentence_transformers import CrossEncoder  # noqa: PLC0415 - torch loads only when needed

            try:
                _MODELS[key] = CrossEncoder(str(path), device=device, local_files_only=True)
            except (OSError, ValueError, RuntimeError, KeyError) as exc:
                raise _bad_model(model_dir, f"could not be loaded ({exc})") from exc
        return _MODELS[key]


STEP = SearchStep.RERANK


@component
class CrossEncoderReranker:
    """Re-orders passages, entities, relations and rows by a cross-encoder's score against the query.

    Community reports are not scored: a cross-encoder trained on passages rates a topic summary poorly against a
    specific question, so it would push every report out of the results. Instead up to ``community_slots``
    reports (the first ones, in incoming order) are placed right after the top ``limit - reserved`` re-ranked
    items, so a following cut to ``limit`` keeps them. The output is: the top ``limit - reserved`` re-ranked
    items, the reserved reports, the other re-ranked items, the other reports.

    A re-ranked result's ``score`` becomes the cross-encoder's score (``method`` and ``methods`` are kept); a
    report keeps its incoming score. Ties keep the incoming order. With ``min_score``, scored items below it are
    dropped (reports never are). The model is read from a local folder only (``RETRIEVAL_CROSS_ENCODER_MODEL``).

    Usage:
        ```python
        reranker = CrossEncoderReranker("/models/ms-marco-MiniLM-L-6-v2", limit=10, community_slots=3)
        reranker.warm_up()
        out = reranker.run(query="Who wrote the Orion Planner?", results=fused)
        top = out["results"][:10]  # out["scored"]: how many items the model scored
        ```
    """

    def __init__(
        self,
        model_dir: str,
        limit: int,
        *,
        community_slots: int = defaults.RECIPE_COMMUNITY_TOP_K,
        min_score: float | None = None,
        batch_size: int = 32,
        device: str = "cpu",
    ) -> None:
        if limit < 1:
            raise ComponentConfigError(
                "CrossEncoderReranker", f"limit must be at least 1, got {limit}", "Set the recipe's limit to 1 or more."
            )
        if community_slots < 0:
            raise ComponentConfigError(
                "CrossEncoderReranker",
                f"community_top_k (report slots after a re-rank) must be 0 or more, got {community_slots}",
                "Set the recipe's community_top_k to 0 or more.",
            )
        if batch_size < 1:
            raise ComponentConfigError(
                "CrossEncoderReranker", f"batch_size must be at least 1, got {batch_size}", "Pass 1 or more."
            )
        self.model_dir = model_dir
        self.limit = limit
        self.community_slots = community_slots
        self.min_score = min_score
        self.batch_size = batch_size
        self.device = device
        self._model: Any = None

    def warm_up(self) -> None:
        """Load the model (once per process and folder).

        Raises:
            ConfigError: the folder does not exist or holds no loadable cross-encoder.
        """
        if self._model is None:
            self._model = _load(self.model_dir, self.device)

    @component.output_types(results=list[SearchResult], scored=int, status=MethodStatus)
    def run(self, query: str, results: list[SearchResult]) -> RerankOutput:
        """Re-rank ``results`` against ``query``.

        Returns:
            ``results``: the new order, reports in their reserved slots; ``scored``: how many items the model scored;
            ``status``: the step's count and time, for the trace.
        """
        started = time.perf_counter()
        communities = [r for r in results if isinstance(r.item, Community)]
        others = [r for r in results if not isinstance(r.item, Community)]
        reranked = self._rerank(query, others)
        reserved = min(self.community_slots, self.limit, len(communities))
        head = self.limit - reserved
        ordered = [*reranked[:head], *communities[:reserved], *reranked[head:], *communities[reserved:]]
        elapsed = (time.perf_counter() - started) * 1000
        status = MethodStatus(STEP, ok=True, count=len(ordered), elapsed_ms=elapsed)
        return {"results": ordered, "scored": len(others), "status": status}

    def _rerank(self, query: str, results: list[SearchResult]) -> list[SearchResult]:
        if not results:
            return []
        self.warm_up()
        pairs = [(query, rerank_text(r.item)) for r in results]
        scores = [float(s) for s in self._model.predict(pairs, batch_size=self.batch_size, show_progress_bar=False)]
        order = sorted(range(len(results)), key=lambda i: -scores[i])  # a stable sort: ties keep the incoming order
        return [
            replace(results[i], score=scores[i]) for i in order if self.min_score is None or scores[i] >= self.min_score
        ]
