import json
from pathlib import Path

import pytest

from agrag.components.data_models.chunk import Chunk
from agrag.components.data_models.entity import entity_id_for
from agrag.components.errors import IngestError
from agrag.components.extractors.triples_file_extractor import TriplesFileExtractor
from agrag.components.extractors.verb_phrases import Predicate, written_predicate


def chunk(cid: str, title: str, text: str) -> Chunk:
    return Chunk(cid, "d" + cid, "v", text, (title,), 0, 0, len(text), None, title)


@pytest.fixture
def openie(tmp_path: Path) -> Path:
    docs = [
        {
            "passage": "Journal of Physics\nThe Journal of Physics is published by the American Institute.",
            "extracted_entities": ["Journal of Physics", "American Institute", "1963"],
            "extracted_triples": [["Journal of Physics", "published by", "American Institute"], ["broken", "pair"]],
        }
    ]
    path = tmp_path / "openie.json"
    path.write_text(json.dumps({"docs": docs}))
    return path


def test_passages_are_matched_to_chunks_and_give_mentions_relations_and_topics(openie: Path) -> None:
    matched = chunk(
        "1", "Journal of Physics", "Journal of Physics\nThe Journal of  Physics is published by the American Institute."
    )
    stray = chunk("2", "Elsewhere", "Text the file does not know.")
    out = TriplesFileExtractor(str(openie)).run(chunks=[matched, stray])
    extraction = out["extraction"]
    assert out["unmatched_chunks"] == 1
    assert {m.entity_id for m in extraction.mentions} == {
        entity_id_for(n) for n in ("Journal of Physics", "American Institute", "1963")
    }
    (relation,) = extraction.relations  # the malformed triple is skipped
    # "published by" is the fact the rules write: the publisher published the journal
    assert (relation.type, relation.chunk_ids) == ("published", ("1",))
    assert (relation.source_id, relation.target_id) == (
        entity_id_for("American Institute"),
        entity_id_for("Journal of Physics"),
    )
    assert relation.description == "Journal of Physics published by American Institute"
    assert {(m.chunk_id, m.entity_id) for m in extraction.about} == {
        ("1", entity_id_for("Journal of Physics")),
        ("2", entity_id_for("Elsewhere")),
    }


def test_predicates_take_the_form_the_rules_write() -> None:
    assert written_predicate("has Impact Factor of") == Predicate("has impact factor of", subject_first=True)
    assert written_predicate("worksFor") == Predicate("works for", subject_first=True)
    assert written_predicate("WORKS_AT") == Predicate("works at", subject_first=True)
    assert written_predicate("was born in") == Predicate("born in", subject_first=True)
    assert written_predicate("?!") == Predicate("RELATED_TO", subject_first=True)
    assert written_predicate("RELATED_TO") == Predicate("RELATED_TO", subject_first=True)


def test_an_unreadable_file_is_an_ingest_error_that_shows_the_format(tmp_path: Path) -> None:
    (tmp_path / "bad.json").write_text('{"docs": [{"no_passage": 1}]}')
    with pytest.raises(IngestError, match="extracted_triples"):
        TriplesFileExtractor(str(tmp_path / "bad.json")).run(chunks=[chunk("1", "T", "x")])
