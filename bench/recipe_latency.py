"""Per-recipe query latency for ``bench_ingest_search.py``: every shipped recipe end to end, next to its floor.

A recipe's floor is the work it cannot avoid, done with the bare libraries and the inputs precomputed:

* one query embedding (bare MiniLM ``embed_batch`` of the query), for every recipe whose methods use it. TEXT2CYPHER
  embeds nothing it needs (our pipeline still embeds the query, which the floor leaves out);
* each method's store queries, sent straight to the Qdrant Edge shard with the dense and BM25 query vectors
  precomputed: the same request our store builds (dense and keyword prefetch, in-store RRF, the same filter and
  limit). ``entity`` queries the entity shard, ``chunk`` the chunk shard, ``community`` the community shard;
  ``ppr`` sends its 100-candidate chunk query, the similarity query over the same candidates and the retrieve of
  the 10 it keeps (the candidates are worked out before the clock starts: the PageRank walk is agrag's own work);
  ``text2cypher`` one bare Kùzu query of the scripted Cypher plus one bare HTTP round trip to the same local stub;
* each step's graph reads, on the raw Kùzu connection with no more Python than the loop needs: the graph walk
  (``bfs``) runs the same per-hop Kùzu statements from the same seeds (the first 5 entity hits) and reads the
  entities reached; ``community_expand`` reads the communities; the cross-encoder re-rank is a bare ``predict`` of
  the same (tiny) model on the same pairs.

The parts are timed once per query and summed per recipe, so a floor is sequential: HYBRID's two store queries run
at the same time inside the pipeline. Recipes and floors run interleaved (query by query, in a rotating order), so
a load that comes and goes on the machine spreads over all rows alike.
"""

from __future__ import annotations

import http.client
import json
import statistics
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import qdrant_edge as qe

from agrag.components.data_models.chunk import Chunk
from agrag.components.data_models.entity import Entity
from agrag.components.graph.passage_graph import PassageGraph
from agrag.components.rerankers.cross_encoder_reranker import rerank_text
from agrag.components.retrievers.page_rank_chunk_retriever import SEARCH_CANDIDATES, WALK_CANDIDATES
from agrag.components.retrievers.query_names import query_entity_ids
from agrag.components.stores import kuzu_cypher as cy
from agrag.components.stores.knowledge_store import KnowledgeStore
from agrag.components.stores.qdrant_common import (
    DENSE_VECTOR,
    ITEM_ID_FIELD,
    KEYWORD_VECTOR,
    TIE_MARGIN,
    bm25_encoder,
    point_uuid,
    prefetch_limit,
)
from agrag.components.stores.vector_payloads import chunk_from_payload, entity_from_payload
from agrag.components.stores.vector_store import CURRENT, MERGED_STATUS, STATUS_FIELD, VectorHit
from agrag.pipelines.config_models import RecipeConfig, Reranker, RetrievalMethod
from agrag.pipelines.recipes import load_recipe
from agrag.pipelines.search_engine import SearchEngine
from agrag.pipelines.settings import RetrievalSettings

RECIPES = ("entity", "chunk", "hybrid", "hybrid_reranked", "graph_expand", "thematic", "text2cypher", "multi_hop")
NOTES = {
    "hybrid_reranked": "tiny generated cross-encoder, measures the pipeline overhead, not a real model's cost",
    "text2cypher": "scripted local LLM: measures our overhead plus one Kùzu query, not a model",
}
SCRIPTED_CYPHER = "MATCH (e:Entity) RETURN count(e) AS entities"
SCRIPTED_ANSWER = json.dumps({"cypher": SCRIPTED_CYPHER})
Hits = tuple[RetrievalMethod, int]  # a store query's method and limit
WALK_SEEDS = 5  # GraphBfsExpander's default: the first 5 entity hits start the walk


def pct(samples: list[float]) -> dict[str, float]:
    """p50 and p95 in milliseconds of samples in seconds."""
    ms = sorted(s * 1000 for s in samples)
    p95 = statistics.quantiles(ms, n=100, method="inclusive")[94] if len(ms) > 1 else ms[0]
    return {"p50_ms": statistics.median(ms), "p95_ms": p95}


def _timed(call: Callable[[], Any]) -> tuple[float, Any]:
    started = time.perf_counter()
    out = call()
    return time.perf_counter() - started, out


def _match(key: str, value: str) -> qe.FieldCondition:
    return qe.FieldCondition(key=key, match=qe.MatchValue(value=value))


# The filters our retrievers send: current chunks only, entities not merged into another, communities unfiltered.
CURRENT_CHUNKS = qe.Filter(must=[_match(STATUS_FIELD, CURRENT)], must_not=[])
RESOLVED_ENTITIES = qe.Filter(must=[], must_not=[_match(STATUS_FIELD, MERGED_STATUS)])


@dataclass
class BareFloor:
    """The bare calls a floor is made of, on the shards and the Kùzu connection of an open knowledge store."""

    store: KnowledgeStore
    embedder: Any
    settings: RetrievalSettings
    llm_url: str
    cross_encoder: Any  # a sentence_transformers.CrossEncoder, or None
    bm25: Any = field(default_factory=bm25_encoder)
    _passages: PassageGraph | None = None

    def __post_init__(self) -> None:
        # Private handles on purpose: the floor talks to the engines, not through our store classes.
        self.shards = {
            RetrievalMethod.ENTITY: self.store.entities._shard,  # type: ignore[attr-defined]
            RetrievalMethod.CHUNK: self.store.chunks._shard,  # type: ignore[attr-defined]
            RetrievalMethod.COMMUNITY: self.store.communities._shard,  # type: ignore[attr-defined]
        }
        self.filters = {RetrievalMethod.ENTITY: RESOLVED_ENTITIES, RetrievalMethod.CHUNK: CURRENT_CHUNKS}
        self.kuzu = self.store.graph._conn  # type: ignore[attr-defined]
        url = urlparse(self.llm_url)
        self._http = (url.hostname or "127.0.0.1", url.port or 80, f"{url.path}/chat/completions")

    def passages(self) -> PassageGraph:
        """The passage-entity graph of the ppr method (built once, untimed)."""
        if self._passages is None:
            self._passages = PassageGraph(self.store.graph.passage_edges())
        return self._passages

    def kuzu_rows(self, query: str, params: dict[str, Any] | None = None) -> list[list[Any]]:
        """One bare Kùzu statement, all rows read."""
        return [list(row) for row in self.kuzu.execute(query, params or {}).get_all()]

    def hybrid_query(self, method: RetrievalMethod, dense: list[float], sparse: Any, limit: int) -> list[Any]:
        """The request ``QdrantEdgeVectorStore.query`` sends: dense and BM25 prefetch fused by RRF in the shard."""
        candidates, where = prefetch_limit(limit), self.filters.get(method)
        prefetches = [qe.Prefetch(limit=candidates, query=qe.Query.Nearest(dense, using=DENSE_VECTOR), filter=where)]
        if sparse.indices:
            prefetches.append(
                qe.Prefetch(limit=candidates, query=qe.Query.Nearest(sparse, using=KEYWORD_VECTOR), filter=where)
            )
        fusion: Any = qe.Fusion.Rrf(k=self.settings.rrf_k)
        request = qe.QueryRequest(limit=limit + TIE_MARGIN, prefetches=prefetches, query=fusion, with_payload=True)
        return list(self.shards[method].query(request))

    def dense_query(self, dense: list[float], limit: int = 10) -> None:
        """The floor of the earlier benches: a dense-only query on the chunk shard, no filter, no keyword leg."""
        request = qe.QueryRequest(limit=limit, query=qe.Query.Nearest(dense, using=DENSE_VECTOR), with_payload=True)
        self.shards[RetrievalMethod.CHUNK].query(request)

    def similarities(self, dense: list[float], ids: list[str]) -> list[Any]:
        """The cosine query of ``similarities``: the given points that are current, scored against the query."""
        where = qe.Filter(
            must=[qe.HasIdCondition({point_uuid(i) for i in ids}), _match(STATUS_FIELD, CURRENT)], must_not=[]
        )
        request = qe.QueryRequest(
            limit=len(ids),
            query=qe.Query.Nearest(dense, using=DENSE_VECTOR),
            filter=where,
            with_payload=[ITEM_ID_FIELD],
        )
        return list(self.shards[RetrievalMethod.CHUNK].query(request))

    def walk(self, seeds: list[str], depth: int, per_hop: int, limit: int) -> None:
        """The Kùzu statements of ``GraphStore.traverse`` and the entity read of the BFS expander, bare."""
        resolved = dict(self.kuzu_rows(cy.CANONICAL_IDS, {"ids": seeds}))
        frontier = list(dict.fromkeys(resolved[s] for s in seeds if s in resolved))
        visited, walked = set(frontier), 0
        seen: list[str] = []
        reached_all: list[str] = []
        for _ in range(depth):
            cap = min(per_hop, limit - walked)
            if not frontier or cap <= 0:
                break
            params = {"ids": frontier, "seen": seen, "any_type": True, "types": [], "cap": cap}
            reached = []
            for row in self.kuzu_rows(cy.TRAVERSE_HOP["both"], params):
                seen.append(row[0])
                walked += 1
                for end in (row[4], row[5]):
                    if end not in visited:
                        visited.add(end)
                        reached.append(end)
            reached_all += reached
            frontier = reached
        self.kuzu_rows(cy.GET_ENTITIES, {"ids": reached_all})

    def chat(self) -> None:
        """One bare HTTP round trip to the chat endpoint (a short request, its answer read and parsed)."""
        host, port, path = self._http
        body = json.dumps({"model": "scripted", "messages": [{"role": "user", "content": "count the entities"}]})
        connection = http.client.HTTPConnection(host, port, timeout=30)
        try:
            connection.request("POST", path, body, {"Content-Type": "application/json"})
            json.loads(connection.getresponse().read())
        finally:
            connection.close()

    def measure(self, query: str, recipes: list[RecipeConfig]) -> dict[str, float]:
        """Time every floor part the recipes need for one query; seconds by part name."""
        parts: dict[str, float] = {}
        seconds, vectors = _timed(lambda: self.embedder.embed_batch([query]))
        parts["embed"] = seconds
        dense, sparse = list(vectors[0]), self.bm25.embed_query(query)
        parts["dense_only_chunk_query"] = _timed(lambda: self.dense_query(dense))[0]
        hits: dict[Hits, list[Any]] = {}
        for recipe in recipes:
            for method in recipe.methods:
                if method in self.shards and (method, recipe.limit) not in hits:
                    seconds, points = _timed(partial(self.hybrid_query, method, dense, sparse, recipe.limit))
                    parts[f"{method.value}_query_{recipe.limit}"] = seconds
                    hits[(method, recipe.limit)] = points
        for recipe in recipes:
            self._steps(query, recipe, hits, parts)
        if any(RetrievalMethod.PPR in r.methods for r in recipes):
            self._ppr(query, dense, sparse, parts)
        if any(RetrievalMethod.TEXT2CYPHER in r.methods for r in recipes):
            parts["kuzu_scripted_cypher"] = _timed(lambda: self.kuzu_rows(SCRIPTED_CYPHER))[0]
            parts["llm_round_trip"] = _timed(self.chat)[0]
        if any(r.community_expand for r in recipes):
            parts["kuzu_communities"] = _timed(lambda: self.kuzu_rows(cy.GET_COMMUNITIES))[0]
        self._diagnostics(query, recipes, parts)
        return parts

    def _diagnostics(self, query: str, recipes: list[RecipeConfig], parts: dict[str, float]) -> None:
        """Not floors: what explains a gap. ``search_sync`` runs each query's components on new threads."""
        parts["diag_embed_new_thread"] = _timed(lambda: _on_new_thread(lambda: self.embedder.embed_batch([query])))[0]
        if any(RetrievalMethod.TEXT2CYPHER in r.methods for r in recipes):
            parts["diag_schema_text"] = _timed(self.store.graph.schema_text)[0]

    def _steps(self, query: str, recipe: RecipeConfig, hits: dict[Hits, list[Any]], parts: dict[str, float]) -> None:
        if recipe.bfs and f"walk_{recipe.name}" not in parts:
            entity_hits = _settled(hits.get((RetrievalMethod.ENTITY, recipe.limit), []), recipe.limit)
            seeds = [h.id for h in entity_hits][:WALK_SEEDS]
            depth = recipe.bfs_depth or self.settings.traversal_depth
            walk = lambda: self.walk(seeds, depth, self.settings.traversal_per_hop, recipe.limit)  # noqa: E731
            parts[f"walk_{recipe.name}"] = _timed(walk)[0]
        if recipe.reranker is Reranker.CROSS_ENCODER and f"rerank_{recipe.name}" not in parts:
            entity_hits = _settled(hits.get((RetrievalMethod.ENTITY, recipe.limit), []))
            chunk_hits = _settled(hits.get((RetrievalMethod.CHUNK, recipe.limit), []))
            items: list[Entity | Chunk] = [entity_from_payload(h) for h in entity_hits]
            items += [chunk_from_payload(h) for h in chunk_hits]
            pairs = [(query, rerank_text(item)) for item in items[: recipe.limit * 2]]
            predict = lambda: self.cross_encoder.predict(pairs, batch_size=32, show_progress_bar=False)  # noqa: E731
            parts[f"rerank_{recipe.name}"] = _timed(predict)[0]

    def _ppr(self, query: str, dense: list[float], sparse: Any, parts: dict[str, float]) -> None:
        graph = self.passages()
        mass = graph.personalized_pagerank(query_entity_ids(query, graph.entities_named), self.settings.ppr_damping)
        walked = sorted(mass, key=lambda chunk_id: (-mass[chunk_id], chunk_id))[:WALK_CANDIDATES]
        seconds, points = _timed(lambda: self.hybrid_query(RetrievalMethod.CHUNK, dense, sparse, SEARCH_CANDIDATES))
        parts["ppr_chunk_query"] = seconds
        candidates = list(dict.fromkeys([*walked, *(h.id for h in _settled(points, SEARCH_CANDIDATES))]))
        seconds, scored = _timed(lambda: self.similarities(dense, candidates))
        parts["ppr_similarities"] = seconds
        best = [point_uuid(p.payload[ITEM_ID_FIELD]) for p in scored[:10]]
        retrieve = lambda: self.shards[RetrievalMethod.CHUNK].retrieve(best, True, False)  # noqa: E731
        parts["ppr_retrieve"] = _timed(retrieve)[0]


def _on_new_thread(call: Callable[[], Any]) -> None:
    thread = threading.Thread(target=call)
    thread.start()
    thread.join()


def _settled(points: list[Any], limit: int | None = None) -> list[VectorHit]:
    """Edge points as our store returns them: by score, then by id."""
    hits = [VectorHit(p.payload[ITEM_ID_FIELD], p.score, p.payload) for p in points if p.payload]
    return sorted(hits, key=lambda h: (-h.score, h.id))[:limit]


def floor_parts(recipe: RecipeConfig) -> list[str]:
    """The names of the parts (see ``BareFloor.measure``) that make up the floor of ``recipe``."""
    parts = [] if set(recipe.methods) == {RetrievalMethod.TEXT2CYPHER} else ["embed"]
    for method in recipe.methods:
        if method in (RetrievalMethod.ENTITY, RetrievalMethod.CHUNK, RetrievalMethod.COMMUNITY):
            parts.append(f"{method.value}_query_{recipe.limit}")
        elif method is RetrievalMethod.PPR:
            parts += ["ppr_chunk_query", "ppr_similarities", "ppr_retrieve"]
        else:
            parts += ["kuzu_scripted_cypher", "llm_round_trip"]
    if recipe.bfs:
        parts.append(f"walk_{recipe.name}")
    if recipe.community_expand:
        parts.append("kuzu_communities")
    if recipe.reranker is Reranker.CROSS_ENCODER:
        parts.append(f"rerank_{recipe.name}")
    elif recipe.reranker is not None:
        raise ValueError(f"No floor for the {recipe.reranker.value} re-ranker of recipe {recipe.name!r}.")
    return parts


@dataclass
class RecipeRun:
    """Timings of one recipe over the timed queries."""

    recipe: RecipeConfig
    floor: list[str]
    seconds: list[float] = field(default_factory=list)
    floor_seconds: list[float] = field(default_factory=list)
    trace_ms: dict[str, list[float]] = field(default_factory=dict)
    first_query_ms: float = 0.0
    results: int = 0
    failed: int = 0

    def record(self, response: Any, seconds: float, parts: dict[str, float]) -> None:
        self.seconds.append(seconds)
        self.floor_seconds.append(sum(parts[p] for p in self.floor))
        self.results += len(response.results)
        self.failed += sum(not m.ok for m in response.trace.methods)
        for status in (*response.trace.methods, *response.trace.steps):
            if not status.ok and not status.elapsed_ms:
                continue  # a step that reports no status (the re-rank): the trace says "did not run"
            self.trace_ms.setdefault(status.method, []).append(status.elapsed_ms)

    def summary(self, parts: dict[str, list[float]]) -> dict[str, Any]:
        timed, floor = pct(self.seconds), pct(self.floor_seconds)
        name = self.recipe.name
        return {
            "methods": [m.value for m in self.recipe.methods],
            "note": NOTES.get(name, ""),
            "p50_ms": timed["p50_ms"],
            "p95_ms": timed["p95_ms"],
            "floor_p50_ms": floor["p50_ms"],
            "floor_p95_ms": floor["p95_ms"],
            "ratio_p50": timed["p50_ms"] / floor["p50_ms"],
            "floor_parts_p50_ms": {p: pct(parts[p])["p50_ms"] for p in self.floor},
            "trace_p50_ms": {step: statistics.median(ms) for step, ms in self.trace_ms.items()},
            "first_query_ms": self.first_query_ms,
            "mean_results": self.results / len(self.seconds),
            "failed_methods": self.failed,
        }


def bench_recipes(
    store: KnowledgeStore,
    embedder: Any,
    *,
    settings: RetrievalSettings,
    llm: Any,
    llm_url: str,
    cross_encoder_dir: Path,
    warm_up: list[str],
    queries: list[str],
) -> dict[str, Any]:
    """Run every recipe of ``RECIPES`` and its floor on ``queries``, interleaved; return the summary rows."""
    from sentence_transformers import CrossEncoder  # torch loads only here

    engine = SearchEngine(store, embedder, settings, llm=llm)
    recipes = [load_recipe(name) for name in RECIPES]
    floor = BareFloor(store, embedder, settings, llm_url, CrossEncoder(str(cross_encoder_dir), device="cpu"))
    runs = {r.name: RecipeRun(r, floor_parts(r)) for r in recipes}
    for run in runs.values():  # the first query builds the pipeline, loads models, reads the ppr graph snapshot
        started = time.perf_counter()
        engine.search_sync(warm_up[0], run.recipe)
        run.first_query_ms = (time.perf_counter() - started) * 1000
    for query in warm_up:
        floor.measure(query, recipes)
        for run in runs.values():
            engine.search_sync(query, run.recipe)
    parts: dict[str, list[float]] = {}
    order: list[str | None] = [None, *RECIPES]  # None: the floor parts
    for i, query in enumerate(queries):
        shift = i % len(order)
        measured: dict[str, float] = {}
        timed: dict[str, tuple[Any, float]] = {}
        for name in order[shift:] + order[:shift]:
            if name is None:
                measured = floor.measure(query, recipes)
                continue
            started = time.perf_counter()
            response = engine.search_sync(query, runs[name].recipe)
            timed[name] = (response, time.perf_counter() - started)
        for part, seconds in measured.items():
            parts.setdefault(part, []).append(seconds)
        for name, (response, seconds) in timed.items():
            runs[name].record(response, seconds, measured)
    out = {name: run.summary(parts) for name, run in runs.items()}
    return {"recipes": out, "floor_parts": {p: pct(s) for p, s in parts.items()}}
