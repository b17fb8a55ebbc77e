"""Per-recipe query latency for ``bench_ingest_search.py``: every shipped recipe end to end, next to its floor.

A recipe's floor is the work it cannot avoid, done with the bare libraries and the inputs precomputed:

* one query embedding (bare MiniLM ``embed_batch`` of the query), for every recipe whose methods use it. TEXT2CYPHER
  embeds nothing it needs (our pipeline still embeds the query, which the floor leaves out);
* each method's store queries, sent straight to the Qdrant Edge shard with the dense and BM25 query vectors
  precomputed: the same request our store builds (dense and keyword prefetch, in-store RRF, the same filter and
  limit). ``entity`` queries the entity shard and, when the query names entities of the graph, queries it again
  restricted to them (as many as it names, up to the limit; a query that names none sends no second request);
  ``chunk`` queries the chunk shard, ``community`` the community shard; ``ppr`` sends its 100-candidate chunk
  query, the similarity query over the same candidates and the retrieve of the 10 it keeps. The named entities and
  the ppr candidates are worked out before the clock starts, on a passage graph the floor builds once: the name
  matching and the PageRank walk are agrag's own work. ``text2cypher`` sends one bare Kùzu query of the scripted
  Cypher plus one bare HTTP round trip to the same local stub;
* each step's graph reads, on the raw Kùzu connection with no more Python than the loop needs: the graph walk
  (``bfs``) runs the same per-hop Kùzu statements from the same seeds (the first 5 entity hits, named ones first)
  and reads the entities reached. With ``bfs_passages`` (GRAPH_EXPAND) it walks as many relations as the expander
  does for its passages (100), then sends what those passages need: the two supporting-chunk statements of the
  seeds, the similarity query over their chunks and the walked relations' chunks, the retrieve of the best
  ``limit`` and the read of their parents. ``community_expand`` reads the communities; the cross-encoder re-rank
  is a bare ``predict`` of the same (tiny) model on the same pairs.

The parts are timed once per query and summed per recipe, so a floor is sequential: HYBRID's two store queries run
at the same time inside the pipeline. Recipes and floors run interleaved (query by query, in a rotating order), so
a load that comes and goes on the machine spreads over all rows alike.
"""

from __future__ import annotations

import http.client
import json
import math
import statistics
import threading
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import qdrant_edge as qe

from agrag.components.data_models.chunk import Chunk
from agrag.components.data_models.entity import Entity
from agrag.components.data_models.query_analysis import QueryAnalyzerKind
from agrag.components.expanders.graph_bfs_expander import LINK_BONUS, MENTIONS_PER_SEED
from agrag.components.expanders.graph_bfs_expander import WALK_CANDIDATES as WALK_RELATIONS
from agrag.components.graph.bridge_hop import BridgeHop
from agrag.components.graph.passage_graph import PassageGraph
from agrag.components.rerankers.cross_encoder_reranker import rerank_text
from agrag.components.retrievers.page_rank_chunk_retriever import SEARCH_CANDIDATES, WALK_CANDIDATES
from agrag.components.retrievers.query_names import query_entity_ids
from agrag.components.stores import kuzu_cypher as cy
from agrag.components.stores.knowledge_store import KnowledgeStore
from agrag.components.stores.kuzu.connection import scope_params
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
from agrag.pipelines.recipes import PRESETS, load_recipe
from agrag.pipelines.search_engine import SearchEngine
from agrag.pipelines.settings import RetrievalSettings

RECIPES = tuple(name.lower() for name in PRESETS)  # every shipped recipe, in the presets' order
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
    _members: dict[str, list[str]] | None = None

    def __post_init__(self) -> None:
        # Private handles on purpose: the floor talks to the engines, not through our store classes.
        self.shards = {
            RetrievalMethod.ENTITY: self.store.entities._shard,  # type: ignore[attr-defined]
            RetrievalMethod.CHUNK: self.store.chunks._shard,  # type: ignore[attr-defined]
            RetrievalMethod.COMMUNITY: self.store.communities._shard,  # type: ignore[attr-defined]
            RetrievalMethod.FACT: self.store.facts._shard,  # type: ignore[attr-defined]
        }
        self.filters = {
            RetrievalMethod.ENTITY: RESOLVED_ENTITIES,
            RetrievalMethod.CHUNK: CURRENT_CHUNKS,
            RetrievalMethod.FACT: CURRENT_CHUNKS,  # facts carry the same status field
        }
        self.kuzu = self.store.graph._conn  # type: ignore[attr-defined]
        url = urlparse(self.llm_url)
        self._http = (url.hostname or "127.0.0.1", url.port or 80, f"{url.path}/chat/completions")

    def passages(self) -> PassageGraph:
        """The passage-entity graph of the ppr method (built once, untimed)."""
        if self._passages is None:
            self._passages = PassageGraph.from_columns(self.store.graph.passage_columns())
        return self._passages

    def merged_members(self) -> dict[str, list[str]]:
        """The records merged into each resolved entity (read once, untimed: the store keeps them in memory too)."""
        if self._members is None:
            self._members = {}
            for resolved, member in self.kuzu_rows(cy.MERGED_INTO):
                self._members.setdefault(resolved, []).append(member)
        return self._members

    def kuzu_rows(self, query: str, params: dict[str, Any] | None = None) -> list[list[Any]]:
        """One bare Kùzu statement, all rows read."""
        return [list(row) for row in self.kuzu.execute(query, params or {}).get_all()]

    def hybrid_query(
        self, method: RetrievalMethod, dense: list[float], sparse: Any, limit: int, ids: Sequence[str] | None = None
    ) -> list[Any]:
        """The request ``QdrantEdgeVectorStore.query`` sends: dense and BM25 prefetch fused by RRF in the shard.

        ``ids`` narrows the method's filter to those items, as ``PayloadFilter.only_ids`` does.
        """
        candidates, where = prefetch_limit(limit), self.filters.get(method)
        if ids is not None:
            where = _only_ids(where, ids)
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

    def named_entities(self, query: str, limit: int) -> list[str]:
        """The entities the query names, rarest first, as the entity retriever picks them (agrag's work, untimed)."""
        graph = self.passages()
        in_query = query_entity_ids(query, graph.entities_named)
        return sorted(in_query, key=lambda e: (graph.chunk_count(e), in_query.index(e)))[:limit]

    def walk(self, seeds: list[str], depth: int, per_hop: int, limit: int) -> list[list[str]]:
        """The Kùzu statements of ``GraphStore.traverse`` and the entity read of the BFS expander, bare.

        Returns the chunk ids of each relation walked.
        """
        if not seeds:
            return []
        resolved = dict(self.kuzu_rows(cy.CANONICAL_IDS, {"ids": seeds}))
        frontier = list(dict.fromkeys(resolved[s] for s in seeds if s in resolved))
        visited, walked = set(frontier), 0
        seen: list[str] = []
        reached_all: list[str] = []
        relation_chunks: list[list[str]] = []
        for _ in range(depth):
            cap = min(per_hop, limit - walked)
            if not frontier or cap <= 0:
                break
            starts = sorted(set(frontier) | {m for f in frontier for m in self.merged_members().get(f, ())})
            params = {"ids": starts, "seen": seen, "any_type": True, "types": [], "cap": cap}
            found = {r[0]: r for q in cy.TRAVERSE_HOP["both"] for r in self.kuzu_rows(q, params)}
            reached = []
            for row in sorted(found.values(), key=lambda r: (-len(r[3]), r[0]))[:cap]:
                seen.append(row[0])
                relation_chunks.append(row[3])
                walked += 1
                for end in (row[4], row[5]):
                    if end not in visited:
                        visited.add(end)
                        reached.append(end)
            reached_all += reached
            frontier = reached
        self.kuzu_rows(cy.GET_ENTITIES, {"ids": reached_all})
        return relation_chunks

    def walk_passages(self, seeds: list[str], relation_chunks: list[list[str]], dense: list[float], limit: int) -> None:
        """The Kùzu statements and shard requests of the BFS expander's passages, bare.

        The seeds' supporting chunks and the walked relations' chunks are scored by one similarity query; the best
        ``limit`` are retrieved, then their parents read.
        """
        if not seeds:
            return
        links = self.supporting_chunks(seeds)
        for chunk_ids in relation_chunks:
            links.update(chunk_ids)
        if not links:
            return
        scores = {
            p.payload[ITEM_ID_FIELD]: p.score + LINK_BONUS * math.log1p(links[p.payload[ITEM_ID_FIELD]])
            for p in self.similarities(dense, sorted(links))
            if p.payload
        }
        best = sorted(scores, key=lambda chunk_id: (-scores[chunk_id], chunk_id))[:limit]
        records = self.shards[RetrievalMethod.CHUNK].retrieve([point_uuid(c) for c in best], True, False)
        parents = sorted({r.payload["parent_id"] for r in records if r.payload and r.payload.get("parent_id")})
        if parents:
            self.kuzu_rows(cy.GET_CHUNKS, {"ids": parents})

    def supporting_chunks(self, seeds: list[str]) -> Counter[str]:
        """The two Kùzu statements of ``GraphStore.supporting_chunk_ids``, bare; the passage candidates they give.

        Each chunk counts once for every seed among whose first ``MENTIONS_PER_SEED`` chunks it is (chunks about the
        seed first, then most mentions, then by id), as the expander counts its links.
        """
        params = {"ids": seeds}
        order = {(entity_id, chunk_id): (0, 0) for entity_id, chunk_id in self.kuzu_rows(cy.ABOUT_CHUNKS, params)}
        for entity_id, chunk_id, count in self.kuzu_rows(cy.SUPPORTING_CHUNKS, params):
            order.setdefault((entity_id, chunk_id), (1, -int(count)))
        kept: Counter[str] = Counter()
        links: Counter[str] = Counter()
        for entity_id, chunk_id in sorted(order, key=lambda pair: (order[pair], pair[1])):
            if kept[entity_id] < MENTIONS_PER_SEED:
                kept[entity_id] += 1
                links[chunk_id] += 1
        return links

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
        hits = self._queries(query, dense, sparse, recipes, parts)
        for recipe in recipes:
            self._steps(query, dense, recipe, hits, parts)
        if any(RetrievalMethod.PPR in r.methods for r in recipes):
            best = self._ppr(query, dense, sparse, parts)
            if any(r.bridge for r in recipes):
                self._bridge(query, dense, sparse, best, parts)
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

    def _queries(
        self, query: str, dense: list[float], sparse: Any, recipes: list[RecipeConfig], parts: dict[str, float]
    ) -> dict[Hits, list[VectorHit]]:
        """Time each store query of the recipes' methods once; the hits of each, as its retriever returns them."""
        hits: dict[Hits, list[VectorHit]] = {}
        for recipe in recipes:
            for method in recipe.methods:
                key = (method, recipe.limit)
                if method is RetrievalMethod.ENTITY and key not in hits:
                    hits[key] = self._entities(query, dense, sparse, recipe.limit, parts)
                elif method in self.shards and key not in hits:
                    seconds, points = _timed(partial(self.hybrid_query, method, dense, sparse, recipe.limit))
                    parts[f"{method.value}_query_{recipe.limit}"] = seconds
                    hits[key] = _settled(points, recipe.limit)
                    if method is RetrievalMethod.FACT:
                        self._fact_passages(dense, hits[key], parts)
        return hits

    def _entities(
        self, query: str, dense: list[float], sparse: Any, limit: int, parts: dict[str, float]
    ) -> list[VectorHit]:
        """The entity method's query and, for the entities the query names, its second one; named hits first."""
        seconds, points = _timed(partial(self.hybrid_query, RetrievalMethod.ENTITY, dense, sparse, limit))
        parts[f"entity_query_{limit}"] = seconds
        named = self.named_entities(query, limit)
        named_points: list[Any] = []
        parts[f"entity_named_{limit}"] = 0.0  # a query that names nothing sends no second request
        if named:
            query_named = partial(self.hybrid_query, RetrievalMethod.ENTITY, dense, sparse, len(named), named)
            parts[f"entity_named_{limit}"], named_points = _timed(query_named)
        order = {entity_id: position for position, entity_id in enumerate(named)}
        first = sorted(_settled(named_points, len(named)), key=lambda h: order[h.id])
        firsts = {h.id for h in first}
        return [*first, *(h for h in _settled(points, limit) if h.id not in firsts)][:limit]

    def _steps(
        self,
        query: str,
        dense: list[float],
        recipe: RecipeConfig,
        hits: dict[Hits, list[VectorHit]],
        parts: dict[str, float],
    ) -> None:
        if recipe.bfs and f"walk_{recipe.name}" not in parts:
            self._walk(dense, recipe, hits, parts)
        if recipe.reranker is Reranker.CROSS_ENCODER and f"rerank_{recipe.name}" not in parts:
            # The re-ranker scores every fused result but the reports: the entity and chunk hits.
            entity_hits = hits.get((RetrievalMethod.ENTITY, recipe.limit), [])
            chunk_hits = hits.get((RetrievalMethod.CHUNK, recipe.limit), [])
            items: list[Entity | Chunk] = [entity_from_payload(h) for h in entity_hits]
            items += [chunk_from_payload(h) for h in chunk_hits]
            pairs = [(query, rerank_text(item)) for item in items]
            predict = lambda: self.cross_encoder.predict(pairs, batch_size=32, show_progress_bar=False)  # noqa: E731
            parts[f"rerank_{recipe.name}"] = _timed(predict)[0]

    def _walk(
        self, dense: list[float], recipe: RecipeConfig, hits: dict[Hits, list[VectorHit]], parts: dict[str, float]
    ) -> None:
        """Time the graph walk of ``recipe`` and, with ``bfs_passages``, the passages that state it."""
        seeds = [h.id for h in hits.get((RetrievalMethod.ENTITY, recipe.limit), [])][:WALK_SEEDS]
        depth = recipe.bfs_depth or self.settings.traversal_depth
        walked = max(recipe.limit, WALK_RELATIONS) if recipe.bfs_passages else recipe.limit
        seconds, relation_chunks = _timed(partial(self.walk, seeds, depth, self.settings.traversal_per_hop, walked))
        parts[f"walk_{recipe.name}"] = seconds
        if recipe.bfs_passages:
            passages = partial(self.walk_passages, seeds, relation_chunks, dense, recipe.limit)
            parts[f"walk_passages_{recipe.name}"] = _timed(passages)[0]

    def _fact_passages(self, dense: list[float], hits: list[VectorHit], parts: dict[str, float]) -> None:
        """The fact method's passages: the Kùzu read of the chunks that state the facts, their cosine to the query."""
        stating = list(dict.fromkeys(str(c) for h in hits for c in h.payload.get("chunk_ids", ())))
        read = partial(self.kuzu_rows, cy.GET_CHUNKS_IN_SCOPE, {"ids": stating, **scope_params(None)})
        parts["fact_chunks_read"] = _timed(read)[0]
        parts["fact_similarities"] = _timed(lambda: self.similarities(dense, stating))[0] if stating else 0.0

    def _bridge(self, query: str, dense: list[float], sparse: Any, best: list[str], parts: dict[str, float]) -> None:
        """The bridge round's store calls: its entities' vectors, one cosine query per bridge, one keyword query."""
        graph = self.passages()
        hop = BridgeHop()
        bridges = hop.bridges(graph, best[: hop.settings.first], query_entity_ids(query, graph.entities_named))
        ids = [point_uuid(b.entity_id) for b in bridges]
        seconds, points = _timed(lambda: self.shards[RetrievalMethod.ENTITY].retrieve(ids, True, True))
        parts["bridge_entity_vectors"] = seconds
        vectors = {p.payload[ITEM_ID_FIELD]: p.vector for p in points if p.payload}
        total, reached = 0.0, []
        for bridge in bridges:
            stored = vectors.get(bridge.entity_id)
            entity = list(stored.get(DENSE_VECTOR, [])) if isinstance(stored, dict) else []
            if not entity:
                continue
            joined = [q + hop.settings.entity_weight * e for q, e in zip(dense, entity, strict=True)]
            norm = math.sqrt(sum(v * v for v in joined)) or 1.0
            asked = partial(self.similarities, [v / norm for v in joined], list(bridge.chunk_ids))
            total += _timed(asked)[0]
            reached += bridge.chunk_ids
        parts["bridge_similarities"] = total
        parts["bridge_keyword"] = _timed(lambda: self.keyword_query(sparse, reached))[0] if reached else 0.0

    def keyword_query(self, sparse: Any, ids: Sequence[str]) -> list[Any]:
        """The keyword leg alone over the given chunks (``query_leg`` KEYWORD narrowed by ``only_ids``)."""
        if not sparse.indices:
            return []
        where = _only_ids(CURRENT_CHUNKS, list(dict.fromkeys(ids)))
        request = qe.QueryRequest(
            limit=len(ids), query=qe.Query.Nearest(sparse, using=KEYWORD_VECTOR), filter=where, with_payload=True
        )
        return list(self.shards[RetrievalMethod.CHUNK].query(request))

    def _ppr(self, query: str, dense: list[float], sparse: Any, parts: dict[str, float]) -> list[str]:
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
        return [str(p.payload[ITEM_ID_FIELD]) for p in scored[:10]]


def _on_new_thread(call: Callable[[], Any]) -> None:
    thread = threading.Thread(target=call)
    thread.start()
    thread.join()


def _only_ids(where: qe.Filter | None, ids: Sequence[str]) -> qe.Filter:
    """``where`` narrowed to the points of ``ids``: the id condition after the others, as our store adds it."""
    has_id = qe.HasIdCondition({point_uuid(i) for i in ids})
    if where is None:
        return qe.Filter(must=[has_id], must_not=[])
    return qe.Filter(must=[*(where.must or []), has_id], must_not=where.must_not or [])


def _settled(points: list[Any], limit: int) -> list[VectorHit]:
    """Edge points as our store returns them: by score, then by id."""
    hits = [VectorHit(p.payload[ITEM_ID_FIELD], p.score, p.payload) for p in points if p.payload]
    return sorted(hits, key=lambda h: (-h.score, h.id))[:limit]


def _method_parts(recipe: RecipeConfig, method: RetrievalMethod) -> list[str]:
    """The floor parts of one method of ``recipe``."""
    if method in (RetrievalMethod.ENTITY, RetrievalMethod.CHUNK, RetrievalMethod.COMMUNITY, RetrievalMethod.FACT):
        parts = [f"{method.value}_query_{recipe.limit}"]
        if method is RetrievalMethod.ENTITY:
            parts.append(f"entity_named_{recipe.limit}")
        if method is RetrievalMethod.FACT:
            parts += ["fact_chunks_read", "fact_similarities"]
        return parts
    if method is RetrievalMethod.PPR:
        parts = ["ppr_chunk_query", "ppr_similarities", "ppr_retrieve"]
        if recipe.bridge:
            parts += ["bridge_entity_vectors", "bridge_similarities", "bridge_keyword"]
        return parts
    return ["kuzu_scripted_cypher", "llm_round_trip"]


def floor_parts(recipe: RecipeConfig) -> list[str]:
    """The names of the parts (see ``BareFloor.measure``) that make up the floor of ``recipe``."""
    parts = [] if set(recipe.methods) == {RetrievalMethod.TEXT2CYPHER} else ["embed"]
    for method in recipe.methods:
        parts += _method_parts(recipe, method)
    if recipe.bfs:
        parts.append(f"walk_{recipe.name}")
        if recipe.bfs_passages:
            parts.append(f"walk_passages_{recipe.name}")
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
        if parts:  # no floor measured for this query (``floor_queries``)
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
            "floor_queries": len(self.floor_seconds),
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
    floor_queries: int | None = None,
) -> dict[str, Any]:
    """Run every recipe of ``RECIPES`` and its floor on ``queries``, interleaved; return the summary rows.

    ``floor_queries`` measures the floors on the first that many timed queries only (and on the first warm-up
    query): at 1,000,000 chunks one GRAPH_EXPAND floor, every hub relation read per hop, takes about a minute.
    """
    from sentence_transformers import CrossEncoder  # torch loads only here

    # The scripted LLM answers text2cypher only: queries are analysed by the rules, as an offline user's are.
    offline_analysis = settings.model_copy(update={"query_analyzer": QueryAnalyzerKind.RULES})
    engine = SearchEngine(store, embedder, offline_analysis, llm=llm)
    recipes = [load_recipe(name) for name in RECIPES]
    floor = BareFloor(store, embedder, settings, llm_url, CrossEncoder(str(cross_encoder_dir), device="cpu"))
    runs = {r.name: RecipeRun(r, floor_parts(r)) for r in recipes}
    for run in runs.values():  # the first query builds the pipeline, loads models, reads the ppr graph snapshot
        started = time.perf_counter()
        engine.search_sync(warm_up[0], run.recipe)
        run.first_query_ms = (time.perf_counter() - started) * 1000
    for index, query in enumerate(warm_up):
        if floor_queries is None or index == 0:
            floor.measure(query, recipes)
        for run in runs.values():
            engine.search_sync(query, run.recipe)
    parts: dict[str, list[float]] = {}
    order: list[str | None] = [None, *RECIPES]  # None: the floor parts
    for i, query in enumerate(queries):
        shift = i % len(order)
        with_floor = floor_queries is None or i < floor_queries
        measured, timed = _round(query, order[shift:] + order[:shift], engine, runs, floor if with_floor else None)
        for part, seconds in measured.items():
            parts.setdefault(part, []).append(seconds)
        for name, (response, seconds) in timed.items():
            runs[name].record(response, seconds, measured)
    out = {name: run.summary(parts) for name, run in runs.items()}
    return {"recipes": out, "floor_parts": {p: pct(s) for p, s in parts.items()}}


def _round(
    query: str, order: list[str | None], engine: SearchEngine, runs: dict[str, RecipeRun], floor: BareFloor | None
) -> tuple[dict[str, float], dict[str, tuple[Any, float]]]:
    """One timed query: every recipe in ``order`` and, at None, the floor parts (unless ``floor`` is None)."""
    measured: dict[str, float] = {}
    timed: dict[str, tuple[Any, float]] = {}
    recipes = [run.recipe for run in runs.values()]
    for name in order:
        if name is None:
            measured = floor.measure(query, recipes) if floor is not None else {}
            continue
        started = time.perf_counter()
        response = engine.search_sync(query, runs[name].recipe)
        timed[name] = (response, time.perf_counter() - started)
    return measured, timed
