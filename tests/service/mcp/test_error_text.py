"""What a client is told when a call fails: kind, what happened, next step; never a secret or a traceback."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from agrag.components.errors import EvidenceError, LLMError, StoreError
from agrag.service.api.secret_mask import SecretMask
from agrag.service.mcp.error_text import error_text
from agrag.service.tools.errors import ReadOnlyToolError
from agrag.service.tools.evidence_tools import ExploreInput

TOKEN = "team-token-0123456789abcdef0"


def test_secrets_and_what_looks_like_one_are_masked() -> None:
    mask = SecretMask([TOKEN, ""])
    text = mask(
        f"got {TOKEN}; header Authorization: Bearer abc.def-123 and key sk-proj-ABCDEFGH12345678 api_key=hunter2hunter2"
    )
    for secret in (TOKEN, "abc.def-123", "sk-proj-ABCDEFGH12345678", "hunter2hunter2"):
        assert secret not in text
    assert text.count("***") == 4 and "Bearer ***" in text and "api_key=***" in text


@pytest.mark.parametrize(
    ("error", "start"),
    [
        (LLMError(f"The endpoint refused the key {TOKEN}."), "Model provider error: The endpoint refused the key ***."),
        (StoreError("The graph store is locked."), "Database error:"),
        (EvidenceError("'x' is not an evidence id."), "Evidence error:"),
        (ReadOnlyToolError("ingest"), "Read-only server: 'ingest' writes to the data dir"),
        (TimeoutError(), "Timeout:"),
        (RuntimeError(f"boom at /secret/path {TOKEN}"), "Internal error (RuntimeError): the detail is in the server"),
    ],
)
def test_each_failure_names_its_kind_and_a_next_step(error: Exception, start: str) -> None:
    text = error_text(error, SecretMask([TOKEN]))
    assert text.startswith(start) and TOKEN not in text and "/secret/path" not in text


def test_invalid_arguments_name_the_field_and_the_fix() -> None:
    with pytest.raises(ValidationError) as caught:
        ExploreInput.model_validate({"entity": "Orion Planner", "depth": 9, "hops": 1})
    text = error_text(caught.value, SecretMask())
    assert text.startswith("Invalid arguments: depth:") and "hops: Extra inputs" in text and "Fix them" in text
