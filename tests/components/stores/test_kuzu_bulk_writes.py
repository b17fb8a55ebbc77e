"""The Kùzu store's one bulk path: community membership, copied into the table it has just emptied."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from agrag.components.data_models.community import Community
from agrag.components.stores.kuzu_graph_store import KuzuGraphStore
from tests.components.stores.graph_contract import ID, write_corpus


@pytest.fixture
def graph(tmp_path: Path) -> Any:
    store = KuzuGraphStore(tmp_path / "graph.kuzu")
    write_corpus(store)
    yield store
    store.close()


def test_memberships_are_copied_and_each_replacement_holds_exactly_its_own(
    graph: KuzuGraphStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    sent: list[str] = []
    write = graph._write

    def recording(query: str, params: Any = None) -> Any:
        sent.append(query)
        return write(query, params)

    monkeypatch.setattr(graph, "_write", recording)
    ids = sorted(ID.values())
    for round_ in range(3):  # the second and third copies go into a table emptied by the delete before them
        hierarchy = [Community(f"k{round_}-{i}", 0, tuple(ids[i::2])) for i in range(2)]
        graph.replace_communities(hierarchy)
        stored = {k.id: set(k.entity_ids) for k in graph.communities()}
        assert stored == {k.id: set(k.entity_ids) for k in hierarchy}
        assert graph.counts()["IN_COMMUNITY"] == len(ids)
    assert sum(q.startswith("COPY IN_COMMUNITY") for q in sent) == 3
