"""Document ids in requests are text: a lone surrogate is refused where the request is read, not by the store."""

import pytest
from pydantic import ValidationError

from agrag.service.api.ask_routes import AskRequest
from agrag.service.api.sessions import SessionRequest
from agrag.service.tools.search_tool import FiltersInput

LONE = "d5c1\udcff"  # what the JSON escape "\udcff" decodes to: no character, and no UTF-8 either


@pytest.mark.parametrize(
    "build",
    [
        lambda ids: SessionRequest(documents=ids),
        lambda ids: AskRequest(question="Who wrote it?", documents=ids),
        lambda ids: FiltersInput(document_ids=ids),
    ],
    ids=["POST /v1/sessions", "POST /v1/ask", "search filters"],
)
def test_a_document_id_with_a_lone_surrogate_is_refused_with_the_field_named(build: object) -> None:
    # Found by the fuzz suite (tests/adversarial/test_r3_fuzz.py, issue 43): such an id reached Kùzu, which could not
    # bind it ("Unable to cast Python instance of type <class 'str'>"), and the request failed with 500 StoreError.
    with pytest.raises(ValidationError, match=r"(?s)document.*lone surrogate"):
        build(("d0d4b8a1c2e3f4a5", LONE))  # type: ignore[operator]
    assert build(("d0d4b8a1c2e3f4a5",)) is not None  # type: ignore[operator]
