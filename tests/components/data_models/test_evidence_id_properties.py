"""Property tests: evidence ids print and parse back exactly, and any other text is refused with an EvidenceError."""

from __future__ import annotations

import string

from hypothesis import given, settings
from hypothesis import strategies as st

from agrag.components.data_models.evidence_id import EvidenceId
from agrag.components.errors import EvidenceError

DOCUMENT = st.text(alphabet=string.ascii_letters + string.digits + "-_", min_size=1, max_size=24)
VERSION = st.text(alphabet="0123456789abcdef", min_size=6, max_size=64)
ORDER = st.integers(0, 10**6)


@st.composite
def evidence_ids(draw: st.DrawFn) -> EvidenceId:
    document, version = draw(DOCUMENT), draw(VERSION)
    if draw(st.booleans()):
        return EvidenceId(document, version, order=draw(ORDER))
    start = draw(st.integers(0, 10**7))
    return EvidenceId(document, version, span=(start, start + draw(st.integers(1, 10**6))))


@settings(max_examples=300)
@given(evidence_id=evidence_ids())
def test_an_id_prints_as_url_safe_text_and_parses_back_exactly(evidence_id: EvidenceId) -> None:
    text = str(evidence_id)
    assert set(text) <= set(string.ascii_letters + string.digits + "-_.")
    assert EvidenceId.parse(text) == evidence_id
    assert str(EvidenceId.parse(text)) == text


@settings(max_examples=500)
@given(
    text=st.text(max_size=80) | st.from_regex(r"[A-Za-z0-9_-]{1,8}\.[0-9a-f]{4,8}\.[cs][0-9\-]{0,12}", fullmatch=True)
)
def test_any_text_is_an_id_that_prints_back_or_an_evidence_error(text: str) -> None:
    try:
        parsed = EvidenceId.parse(text)
    except EvidenceError as exc:
        assert "evidence id" in str(exc)
        return
    assert EvidenceId.parse(str(parsed)) == parsed, "a parsed id prints in a form that parses back to it"
    assert set(str(parsed)) <= set(string.ascii_letters + string.digits + "-_.")
