import pytest

from agrag.components.data_models.chunk import Chunk
from agrag.components.data_models.evidence_id import EvidenceId
from agrag.components.errors import EvidenceError

DOC, VERSION = "d1f3a9c2b4e5d6f", "3b9f0c1d2e4a"


def test_chunk_and_span_ids_round_trip_exactly() -> None:
    chunk = EvidenceId(DOC, VERSION, order=2)
    span = EvidenceId(DOC, VERSION, span=(120, 480))
    assert str(chunk) == f"{DOC}.{VERSION}.c2" and str(span) == f"{DOC}.{VERSION}.s120-480"
    for evidence_id in (chunk, span):
        assert EvidenceId.parse(str(evidence_id)) == evidence_id
    assert chunk.chunk_id == f"{DOC}.{VERSION}.2" and span.chunk_id is None


def test_the_id_of_a_stored_chunk_names_its_version() -> None:
    stored = Chunk(f"{DOC}.{VERSION}.7", DOC, VERSION, "text", ("Title",), 7, 10, 14)
    assert EvidenceId.of_chunk(stored) == EvidenceId(DOC, VERSION, order=7)
    assert EvidenceId.of_chunk(stored).chunk_id == stored.id


def test_ids_are_url_safe() -> None:
    allowed = set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.")
    assert set(str(EvidenceId(DOC, VERSION, span=(0, 9)))) <= allowed


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("", "1 dot-separated parts, not 3"),
        (f"{DOC}.{VERSION}", "2 dot-separated parts"),
        (f"{DOC}/x.{VERSION}.c1", "document part"),
        (f"{DOC}.XYZ.c1", "version part"),
        (f"{DOC}.{VERSION}.p1", "location 'p1' must be c<chunk number> or s<start>-<end>"),
        (f"{DOC}.{VERSION}.s9-3", "ends at 3, not after its start 9"),
        (f"{DOC}.{VERSION}.s5-5", "ends at 5, not after its start 5"),
    ],
)
def test_a_malformed_id_says_what_is_wrong(text: str, says: str) -> None:
    with pytest.raises(EvidenceError, match="is not an evidence id") as raised:
        EvidenceId.parse(text)
    assert says in str(raised.value)


def test_an_id_names_a_chunk_or_a_span_never_both() -> None:
    with pytest.raises(EvidenceError, match="either a chunk"):
        EvidenceId(DOC, VERSION)
    with pytest.raises(EvidenceError, match="either a chunk"):
        EvidenceId(DOC, VERSION, order=1, span=(0, 2))
    with pytest.raises(EvidenceError, match="0 <= start < end"):
        EvidenceId(DOC, VERSION, span=(4, 2))
