"""``agrag.evidence`` as plain functions: a script finds, reads and cites passages of ``AGRAG_DATA_DIR``."""

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from agrag import evidence
from agrag.components.errors import EvidenceError, StoreLockedError, UnknownDocumentIdError
from agrag.components.stores.data_dir_lock import DataDirLock
from agrag.evidence import check_citations, discover, fetch, find_entities, navigate, render_citations
from agrag.service.server.server_file import write_server_file
from tests.service.conftest import copy_corpus


@pytest.fixture
def data_dir(ingested_corpus: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A copy of the example notes as ``AGRAG_DATA_DIR``; the functions' data dir is closed after the test."""
    copied = copy_corpus(ingested_corpus, tmp_path)
    monkeypatch.setenv("AGRAG_DATA_DIR", str(copied))
    yield copied
    evidence.close()


def document_of(evidence_id: str) -> str:
    return evidence_id.split(".", maxsplit=1)[0]


def test_discover_fetch_and_check_citations_as_functions(data_dir: Path) -> None:
    found = discover("Who wrote the Orion Planner?")
    assert found.ok and found.hits
    best = found.hits[0]
    assert "Maria Chen" in fetch(best.id).items[0].text  # one id or several
    answer = f"Maria Chen wrote the Orion Planner [{best.id}]."
    check = check_citations(answer)
    assert check.grounded and check.cited == (best.id,)
    unread = found.hits[1].id
    assert [c.id for c in check_citations(f"It uses maps [{unread}].").invalid] == [unread]  # never fetched
    rendered = render_citations(answer)
    assert rendered.text.startswith("Maria Chen wrote the Orion Planner [1].") and len(rendered.sources) == 1
    assert any(e.name == "Orion Planner" for e in find_entities("Orion Planner"))
    assert navigate(best.id, "next").items
    # The functions share one session per scope, the one ``session()`` gives.
    assert best.id in evidence.session().fetched
    evidence.close()  # released; the next call opens the data dir again, with a new session
    assert best.id not in evidence.session().fetched


def test_a_scope_is_enforced_and_has_its_own_fetched_evidence(data_dir: Path) -> None:
    everywhere = discover("CAN bus", limit=20)
    documents = {document_of(h.id) for h in everywhere.hits}
    assert len(documents) >= 2
    mine = document_of(everywhere.hits[0].id)
    other = next(h.id for h in everywhere.hits if document_of(h.id) != mine)

    scoped = discover("CAN bus", limit=20, documents=[mine])
    assert scoped.hits and {document_of(h.id) for h in scoped.hits} == {mine}
    assert fetch([other], documents=[mine]).not_found == (other,)  # outside the scope: as if it did not exist
    assert fetch([other]).items  # unscoped, it exists
    # In the scope, the passage fetched unscoped was never fetched, and one outside the scope never can be.
    check = check_citations(f"CAN links the controllers [{other}].", documents=[mine])
    assert not check.grounded and [c.id for c in check.invalid] == [other]
    assert check_citations(f"CAN links the controllers [{other}].").grounded

    with pytest.raises(UnknownDocumentIdError):
        discover("CAN bus", documents=["d-no-such-document"])
    with pytest.raises(EvidenceError, match="not both"):
        discover("CAN bus", documents=[mine], scope=evidence.EvidenceScope((mine,)))
    own = evidence.session(documents=[mine])
    assert evidence.session(scope=evidence.EvidenceScope((mine,))) is own
    assert discover("CAN bus", session=own).hits == scoped.hits[:10]
    with pytest.raises(EvidenceError, match="session="):
        discover("CAN bus", session=own, documents=[mine])


def test_opened_takes_overrides_and_closes_the_data_dir(data_dir: Path) -> None:
    with evidence.opened(["recipe=hybrid"]) as session:
        assert session is evidence.session()
        with pytest.raises(EvidenceError, match="close"):
            evidence.opened(["recipe=entity"]).__enter__()
        assert discover("Orion Planner", session=session).hits
    # Closed: another process (here a fresh open of the same data dir) may take it.
    from agrag.pipelines.runtime import open_runtime
    from tests.service.conftest import settings_of

    with open_runtime([], settings_of(data_dir)) as runtime:
        assert runtime.store.graph.counts()


def test_a_data_dir_a_server_holds_gives_an_error_saying_so_and_what_to_do(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # What `agrag serve` leaves while it runs: the data dir's lock held, and the server file naming it.
    data_dir = tmp_path / "served"
    with DataDirLock(data_dir):
        write_server_file(data_dir, "http://127.0.0.1:8765", "local-token")
        monkeypatch.setenv("AGRAG_DATA_DIR", str(data_dir))
        with pytest.raises(StoreLockedError) as caught:
            discover("Orion Planner")
    message = str(caught.value)
    assert f"agrag serve (process {os.getpid()}, http://127.0.0.1:8765) holds the data dir {data_dir}" in message
    assert "/v1/sessions" in message and "stop the server" in message
    evidence.close()  # nothing was opened: closing is a no-op
