"""Fixtures of the graph-store contract suites: every backend of ``GRAPH_BACKENDS`` in ``tmp_path``."""

from collections.abc import Iterator
from pathlib import Path

import pytest

from agrag.components.stores.graph_store import GraphStore
from tests.components.stores.graph_contract import GRAPH_BACKENDS, Corpus, GraphOpener, write_corpus


@pytest.fixture(params=sorted(GRAPH_BACKENDS))
def graph_opener(request: pytest.FixtureRequest) -> GraphOpener:
    """Opens one graph-store backend in a folder."""
    return GRAPH_BACKENDS[request.param]


@pytest.fixture
def empty_graph(graph_opener: GraphOpener, tmp_path: Path) -> Iterator[GraphStore]:
    """An empty graph store of one backend, closed after the test."""
    store = graph_opener(tmp_path)
    yield store
    store.close()


@pytest.fixture
def graph_corpus(empty_graph: GraphStore) -> tuple[GraphStore, Corpus]:
    """A graph store holding the contract's example graph (``write_corpus``)."""
    return empty_graph, write_corpus(empty_graph)
