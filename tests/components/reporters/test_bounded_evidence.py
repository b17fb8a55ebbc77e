"""``bounded_evidence`` keeps only the sentences an extractive report reads: the reports equal ``gather_evidence``'s."""

from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as st

from agrag.components.data_models.chunk import TABLE_CHUNK, TEXT_CHUNK, Chunk
from agrag.components.data_models.community import Community, community_id_for
from agrag.components.data_models.entity import Entity, entity_id_for
from agrag.components.data_models.relation import Relation, relation_id_for
from agrag.components.reporters.bounded_evidence import bounded_evidence
from agrag.components.reporters.extractive_community_reporter import ExtractiveCommunityReporter
from agrag.components.reporters.source_sentences import SourceIndex, gather_evidence
from tests.components.reporters.corpus import TEAM, build_corpus

# Names that contain one another ("Orion" in "Orion Planner"), so the longest-name rule and ties are exercised.
NAMES = ["Orion", "Orion Planner", "Vega", "Vega Perception", "Maria Chen", "Atlas", "Kestrel Boards", "Tomas"]
FILLER = ["works with", "depends on", "was built by", "reports to", "and also", "replaced"]


def _corpus(seed: int) -> tuple[list[Community], list[Entity], list[Relation], list[Chunk], list[tuple[str, str]]]:
    """A random corpus where sentences repeat across chunks (in other case and spacing) and hubs name many."""
    rng = random.Random(seed)
    entities = [Entity(entity_id_for(n, "Thing"), n, "Thing", f"About {n}.") for n in NAMES]
    pool = [f"{rng.choice(NAMES)} {rng.choice(FILLER)} {rng.choice(NAMES)} today." for _ in range(12)]
    chunks = []
    for number in range(rng.randint(1, 14)):
        picked = [rng.choice(pool) for _ in range(rng.randint(1, 6))]
        picked = [
            s.upper() if rng.random() < 0.1 else s.replace(" ", "  ", 1) if rng.random() < 0.1 else s for s in picked
        ]
        kind = TABLE_CHUNK if rng.random() < 0.2 else TEXT_CHUNK
        text = "\n".join(f"| {s} |" for s in picked) if kind == TABLE_CHUNK else " ".join(picked)
        chunks.append(Chunk(f"c{number}", "doc", "v1", text, ("doc",), number, 0, len(text), kind=kind))
    rng.shuffle(chunks)  # chunk position, not order, breaks ties
    mentions = [(c.id, e.id) for c in chunks for e in entities if rng.random() < 0.4]
    relations = []
    for _ in range(rng.randint(0, 16)):
        a, b = rng.sample(entities, 2)
        support = tuple(rng.sample([c.id for c in chunks], rng.randint(0, min(3, len(chunks)))))
        relations.append(Relation(relation_id_for(a.id, b.id, "R"), a.id, b.id, "R", support, "related"))
    communities = []
    for level in range(rng.randint(1, 6)):
        members = rng.sample([e.id for e in entities] + ["unknown-entity"], rng.randint(1, len(entities)))
        communities.append(Community(community_id_for(level, tuple(sorted(members))), level, tuple(sorted(members))))
    return communities, entities, relations, chunks, mentions


@settings(max_examples=300, deadline=None)
@given(seed=st.integers(0, 10**9), summary=st.integers(1, 4), findings=st.integers(0, 5))
def test_reports_from_bounded_evidence_equal_those_from_every_sentence(seed: int, summary: int, findings: int) -> None:
    communities, entities, relations, chunks, mentions = _corpus(seed)
    reporter = ExtractiveCommunityReporter(sentences=summary, findings=findings)
    full = gather_evidence(communities, entities, relations, chunks, mentions)
    index = SourceIndex(entities, relations, chunks, mentions)
    bounded = bounded_evidence(communities, index, summary=summary, findings=findings)
    assert [reporter.report(e, 5.0) for e in bounded] == [reporter.report(e, 5.0) for e in full]
    assert [(e.weight, e.members, e.relations) for e in bounded] == [(e.weight, e.members, e.relations) for e in full]
    for small, every in zip(bounded, full, strict=True):  # a part of the full ranking, in its order
        assert list(small.sentences) == [s for s in every.sentences if s in set(small.sentences)]
        assert len(small.sentences) <= summary + findings * findings


def test_the_reporter_keeps_a_bounded_number_of_sentences_and_writes_the_same_report() -> None:
    corpus = build_corpus()
    communities = [corpus.community(*TEAM), corpus.community("Maria Chen", "Orion Planner", level=1)]
    reporter = ExtractiveCommunityReporter(sentences=1, findings=1)
    index = SourceIndex(corpus.entities, corpus.relations, corpus.chunks, corpus.mentions)
    [team, pair] = bounded_evidence(communities, index, summary=1, findings=1)
    [every_team, _] = gather_evidence(communities, **corpus.inputs())
    assert len(every_team.sentences) > 2 and len(team.sentences) <= 2
    assert team.sentences[0] == every_team.sentences[0]
    out = reporter.run(communities, **corpus.inputs())["communities"]
    assert out[0].report == reporter.report(every_team, out[0].report.rating)
    assert pair.sentences and all(pair.sentence_members)
