"""The Qdrant server backend creates its collections with the layout of ``conf/vector_store/qdrant.yaml``.

No Qdrant server runs here and qdrant-client's local mode ignores collection layouts, so the store talks to a
loopback HTTP server that answers the REST calls of opening a collection (the answers are the ones local mode
gives, serialized by qdrant-client's own models) and records the body of the create call, which is what a server
would apply.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from qdrant_client import QdrantClient, models

from agrag.components.data_models.qdrant_collection_settings import QdrantCollectionSettings, VectorQuantization
from agrag.components.errors import ConfigError
from agrag.components.stores.qdrant_server_vector_store import QdrantServerVectorStore
from agrag.components.stores.vector_store import VectorCollection
from agrag.pipelines.config_loader import load_config
from agrag.pipelines.config_models import QdrantVectorStoreConfig


class _Recorder(ThreadingHTTPServer):
    created: list[dict[str, Any]]
    info: str


class _Handler(BaseHTTPRequestHandler):
    server: _Recorder

    def _answer(self, result: object, *, wrapped: bool = True) -> None:
        body = json.dumps({"result": result, "status": "ok", "time": 0.0} if wrapped else result).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _body(self) -> dict[str, Any]:
        return dict(json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}"))

    def do_GET(self) -> None:
        if self.path.split("?")[0] == "/":  # the client's version check
            self._answer({"title": "qdrant - vector search engine", "version": "1.20.0"}, wrapped=False)
        elif self.path.split("?")[0].endswith("/exists"):
            self._answer({"exists": False})
        else:
            self._answer(json.loads(self.server.info))

    def do_PUT(self) -> None:
        body = self._body()
        if "/index" in self.path:
            self._answer({"operation_id": 0, "status": "completed"})
        else:
            self.server.created.append(body)
            self._answer(True)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def server(tmp_path: Path) -> Iterator[_Recorder]:
    local = QdrantClient(path=str(tmp_path / "local"))
    local.create_collection("x", vectors_config={"dense": models.VectorParams(size=8, distance=models.Distance.COSINE)})
    recorder = _Recorder(("127.0.0.1", 0), _Handler)
    recorder.created, recorder.info = [], local.get_collection("x").model_dump_json()
    local.close()
    thread = threading.Thread(target=recorder.serve_forever, daemon=True)
    thread.start()
    yield recorder
    recorder.shutdown()


def _open(server: _Recorder, config: QdrantVectorStoreConfig) -> dict[str, Any]:
    url = f"http://127.0.0.1:{server.server_address[1]}"
    QdrantServerVectorStore(
        VectorCollection.CHUNKS, 8, url=url, keyword_fields=("document_id",), layout=config.layout()
    )
    assert len(server.created) == 1
    return server.created[0]


def _qdrant(overrides: list[str]) -> QdrantVectorStoreConfig:
    config = load_config(["vector_store=qdrant", *overrides]).vector_store
    assert isinstance(config, QdrantVectorStoreConfig)
    return config


def test_the_shipped_layout_is_what_a_new_collection_gets(server: _Recorder) -> None:
    created = _open(server, _qdrant([]))
    assert created["on_disk_payload"] is True
    assert (created["hnsw_config"]["m"], created["hnsw_config"]["ef_construct"]) == (16, 100)
    assert created.get("quantization_config") is None
    assert created["vectors"]["dense"] == {"size": 8, "distance": "Cosine"}
    assert created["sparse_vectors"]["bm25"]["modifier"] == "idf"


def test_overrides_change_the_layout_of_a_new_collection(server: _Recorder) -> None:
    config = _qdrant(["vector_store.on_disk_payload=false", "vector_store.hnsw_m=32", "vector_store.quantization=int8"])
    assert config.layout() == QdrantCollectionSettings(False, 32, 100, VectorQuantization.INT8)
    created = _open(server, config)
    assert created["on_disk_payload"] is False and created["hnsw_config"]["m"] == 32
    assert created["quantization_config"] == {"scalar": {"type": "int8", "always_ram": True}}


@pytest.mark.parametrize(
    ("override", "named"), [("vector_store.hnsw_m=2", "hnsw_m"), ("vector_store.quantization=int4", "quantization")]
)
def test_a_bad_layout_is_refused_before_anything_is_created(override: str, named: str) -> None:
    with pytest.raises(ConfigError) as raised:
        load_config(["vector_store=qdrant", override])
    assert named in str(raised.value)
