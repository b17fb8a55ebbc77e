from pathlib import Path
from typing import Any

import pytest
from haystack import Pipeline
from sentence_transformers import CrossEncoder

from agrag.components.cutters.limit_cutter import LimitCutter
from agrag.components.data_models.chunk import Chunk
from agrag.components.data_models.community import Community, CommunityReport, community_id_for
from agrag.components.data_models.cypher_row import CypherRow
from agrag.components.data_models.entity import Entity, entity_id_for
from agrag.components.data_models.relation import Relation
from agrag.components.data_models.search_result import SearchItem, SearchResult
from agrag.components.errors import ConfigError
from agrag.components.rerankers.cross_encoder_reranker import CrossEncoderReranker, rerank_text
from tests.support.tiny_cross_encoder import REPORT_MARKER, make_tiny_cross_encoder

# Every test here trains or loads the tiny cross-encoder.
pytestmark = pytest.mark.needs_model

QUERY = "who wrote the orion planner?"


@pytest.fixture(scope="session")
def tiny_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A tiny cross-encoder trained to score community reports lowest (see tests/support/tiny_cross_encoder.py)."""
    return make_tiny_cross_encoder(tmp_path_factory.mktemp("tiny-cross-encoder"))


@pytest.fixture(scope="session")
def model(tiny_model: Path) -> Any:
    return CrossEncoder(str(tiny_model), device="cpu", local_files_only=True)


def entity(name: str, label: str, description: str) -> Entity:
    return Entity(entity_id_for(name, label), name, label, description)


def chunk(order: int, text: str, heading: tuple[str, ...] = ("notes", "design")) -> Chunk:
    return Chunk(f"d1.v1.{order}", "d1", "v1", text, heading, order, 0, len(text))


def community(level: int, title: str, summary: str, *members: str) -> Community:
    report = CommunityReport(f"{REPORT_MARKER} {title}", summary, 5.0)
    return Community(community_id_for(level, members), level, members, None, report)


ENTITIES = [
    entity("maria chen", "person", "wrote the orion planner"),
    entity("orion planner", "component", "the planner uses slam maps"),
    entity("atlas controller", "component", "runs the vega robot"),
    entity("acme labs", "organization", "built the rover in berlin"),
    entity("ada lovelace", "person", "studied the analytical engine"),
    entity("kalman filter", "concept", "uses lidar sensor data"),
]
CHUNKS = [
    chunk(0, "maria chen wrote the orion planner for acme labs."),
    chunk(1, "the safety of the design is a topic of the team."),
    chunk(2, "the atlas controller uses a kalman filter and lidar sensor data.", ("overview",)),
    chunk(3, "the version was tested on the new route."),
    chunk(4, "charles babbage designed the analytical engine.", ("notes", "release")),
    chunk(5, "the power and speed of the rover arm and gripper."),
]
COMMUNITIES = [
    community(0, "orion planner", "maria chen wrote the orion planner", ENTITIES[0].id, ENTITIES[1].id),
    community(0, "atlas controller", "the atlas controller runs the vega robot", ENTITIES[2].id),
    community(1, "analytical engine", "ada lovelace studied the analytical engine", ENTITIES[4].id),
    community(1, "acme labs", "acme labs built the rover", ENTITIES[3].id),
]


def fused(*items: SearchItem) -> list[SearchResult]:
    """Results as RRF leaves them: scores 1 / (60 + rank), each with its method."""
    return [
        SearchResult(item, 1.0 / (61 + rank), method, (method, "chunk"))
        for rank, item in enumerate(items)
        for method in ["community" if isinstance(item, Community) else "entity"]
    ]


def predict(model: Any, results: list[SearchResult]) -> list[float]:
    return [float(s) for s in model.predict([(QUERY, rerank_text(r.item)) for r in results], batch_size=32)]


def test_item_texts_follow_the_documented_shapes() -> None:
    relation = Relation("r1", "e1", "e2", "WROTE", ("d1.v1.0",))
    row = CypherRow.of("MATCH (n) RETURN count(n) AS n, 'x' AS y", ("n", "y"), (3, "x"))
    assert rerank_text(ENTITIES[0]) == "maria chen (person): wrote the orion planner"
    assert rerank_text(Entity("e9", "vega", "")) == "vega"
    assert rerank_text(CHUNKS[2]) == "overview\nthe atlas controller uses a kalman filter and lidar sensor data."
    assert rerank_text(chunk(9, "release notes", ("notes", "release"))) == "notes > release\nrelease notes"
    assert rerank_text(relation) == "e1 WROTE e2"
    assert rerank_text(Relation("r2", "e1", "e2", "WROTE", (), "maria chen wrote it")) == "maria chen wrote it"
    assert rerank_text(row) == "n=3, y=x"
    assert rerank_text(COMMUNITIES[0]) == "Community report orion planner: maria chen wrote the orion planner"


def test_entities_and_chunks_are_ordered_by_the_model_scores(tiny_model: Path, model: Any) -> None:
    results = fused(*ENTITIES, *CHUNKS)
    scores = predict(model, results)
    expected = sorted(range(len(results)), key=lambda i: -scores[i])
    assert expected != list(range(len(results))), "the model must disagree with the incoming order"

    out = CrossEncoderReranker(str(tiny_model), limit=10).run(query=QUERY, results=results)

    assert out["scored"] == len(results)
    assert [r.key for r in out["results"]] == [results[i].key for i in expected]
    assert [r.score for r in out["results"]] == pytest.approx([scores[i] for i in expected])
    assert all(r.methods == (r.method, "chunk") for r in out["results"]), "method and methods are kept"
    assert len({round(s, 6) for s in scores}) == len(scores), "scores are spread, not one constant"


def test_min_score_drops_the_items_scored_below_it(tiny_model: Path, model: Any) -> None:
    results = fused(*ENTITIES, *CHUNKS)
    scores = predict(model, results)
    threshold = sorted(scores)[len(scores) // 2]

    out = CrossEncoderReranker(str(tiny_model), limit=10, min_score=threshold).run(query=QUERY, results=results)

    kept = {results[i].key for i, s in enumerate(scores) if s >= threshold}
    assert {r.key for r in out["results"]} == kept
    assert 0 < len(kept) < len(results)
    assert all(r.score >= threshold for r in out["results"])


def test_reserved_slots_keep_reports_that_the_model_scores_lowest(tiny_model: Path, model: Any) -> None:
    a, b, c, d = COMMUNITIES
    items = [*ENTITIES, *CHUNKS]
    # Reports arrive among the fused results, as the "add communities" step leaves them.
    results = fused(*items[:2], a, *items[2:4], b, *items[4:7], c, *items[7:], d)
    others = [r for r in results if not isinstance(r.item, Community)]
    reports = [r for r in results if isinstance(r.item, Community)]
    assert (len(others), len(reports)) == (12, 4)
    assert max(predict(model, reports)) < min(predict(model, others)), "the model would rank every report last"

    pipeline = Pipeline()
    pipeline.add_component("rerank", CrossEncoderReranker(str(tiny_model), limit=10, community_slots=3))
    pipeline.add_component("cut", LimitCutter(limit=10))
    pipeline.connect("rerank.results", "cut.results")
    out = pipeline.run({"rerank": {"query": QUERY, "results": results}})

    top = out["cut"]["results"]
    assert out["rerank"]["scored"] == 12
    assert [r.item for r in top if isinstance(r.item, Community)] == [a, b, c], "three reports, in incoming order"
    assert [isinstance(r.item, Community) for r in top] == [False] * 7 + [True] * 3
    scores = predict(model, others)
    best_seven = sorted(range(12), key=lambda i: -scores[i])[:7]
    assert [r.key for r in top[:7]] == [others[i].key for i in best_seven]
    assert [r.score for r in top[7:]] == [r.score for r in reports[:3]], "reports keep their incoming scores"


def test_without_slots_the_cut_drops_every_report(tiny_model: Path) -> None:
    results = fused(*COMMUNITIES, *ENTITIES, *CHUNKS)
    reranked = CrossEncoderReranker(str(tiny_model), limit=10, community_slots=0).run(query=QUERY, results=results)
    top = LimitCutter(limit=10).run(results=reranked["results"])["results"]
    assert not any(isinstance(r.item, Community) for r in top)
    assert [r.item for r in reranked["results"][-4:]] == COMMUNITIES


def test_few_results_keep_every_report_after_the_reranked_items(tiny_model: Path) -> None:
    results = fused(COMMUNITIES[0], ENTITIES[0], COMMUNITIES[1], CHUNKS[0])
    out = CrossEncoderReranker(str(tiny_model), limit=10, community_slots=1).run(query=QUERY, results=results)
    assert {r.item for r in out["results"][:2]} == {ENTITIES[0], CHUNKS[0]}
    assert [r.item for r in out["results"][2:]] == COMMUNITIES[:2], "the reserved report, then the other one"


def test_nothing_to_score_loads_no_model(tmp_path: Path) -> None:
    reranker = CrossEncoderReranker(str(tmp_path / "absent"), limit=3, community_slots=2)
    empty = reranker.run(query=QUERY, results=[])
    assert (empty["results"], empty["scored"], empty["status"].count) == ([], 0, 0)
    reports = fused(*COMMUNITIES)
    out = reranker.run(query=QUERY, results=reports)
    assert (out["results"], out["scored"], out["status"].ok) == (reports, 0, True)


def test_a_missing_model_folder_names_the_setting_to_fix(tmp_path: Path) -> None:
    missing = tmp_path / "no-such-model"
    reranker = CrossEncoderReranker(str(missing), limit=10)
    with pytest.raises(ConfigError, match="RETRIEVAL_CROSS_ENCODER_MODEL") as error:
        reranker.warm_up()
    assert str(missing) in str(error.value)
    with pytest.raises(ConfigError, match="RETRIEVAL_CROSS_ENCODER_MODEL"):
        reranker.run(query=QUERY, results=fused(ENTITIES[0]))


def test_a_folder_without_a_model_is_a_config_error(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    with pytest.raises(ConfigError, match=r"could not be loaded.*RETRIEVAL_CROSS_ENCODER_MODEL"):
        CrossEncoderReranker(str(tmp_path / "empty"), limit=10).warm_up()


def test_bad_settings_are_config_errors() -> None:
    with pytest.raises(ConfigError, match="limit"):
        CrossEncoderReranker("m", limit=0)
    with pytest.raises(ConfigError, match="community_top_k"):
        CrossEncoderReranker("m", limit=5, community_slots=-1)
