"""Overrides that come from a request (issue 43, defects 1, 8 and the masking item of 9).

A request's overrides (HTTP, MCP, the Prefect form, the CLI forwarded to a server) are plain values of allow-listed
settings: no interpolation or resolver is ever evaluated (``${oc.env:...}`` read the admin token back), every path
stays inside the files root (a triples file outside it was read), settings outside the allow-list are refused, and
error texts mask secrets without masking the document ids a caller named. Everything goes through a real uvicorn
server on loopback and the MCP SDK's client, with a distinctive variable in the server process's environment.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, get_args

import httpx
import pytest
from pydantic import BaseModel

from agrag.components.data_models.document import document_id_for
from agrag.components.data_models.ingestion_run import RunSource
from agrag.components.embedders.sentence_transformers_text_embedder import SentenceTransformersTextEmbedder
from agrag.components.errors import ConfigError
from agrag.flows.ingest_flow import ingest_into
from agrag.flows.run_inputs import check_overrides
from agrag.pipelines.config_loader import available_options, packaged_conf_dir
from agrag.pipelines.config_models import AgragConfig
from agrag.pipelines.request_overrides import ALLOWED_GROUPS, ALLOWED_KEYS
from agrag.pipelines.runtime import open_runtime, serving
from agrag.pipelines.settings import AgragSettings, RetrievalSettings, Settings
from agrag.service.api.access import AccessPolicy, load_tokens
from agrag.service.api.app import create_app
from agrag.service.server.ingestion_queue import IngestionQueue
from tests.service.mcp.conftest import client as mcp_client
from tests.service.mcp.conftest import refused
from tests.support.served_api import uvicorn_in_thread

ADMIN = "admin-token-r3-0123456789abcdef"
TEAM = "team-token-r3-0123456789abcdef0"
LLM_KEY = "sk-r3llmkey0123456789abcdef"
CANARY_VARIABLE = "R3_OVERRIDE_CANARY"
CANARY = "canary-3f9c1e7a2b5d4c60"
NOTES = {
    "pump.md": "# Pump Station\n\nThe Kestrel Pump Station was commissioned by Ilse Varga in 2021.\n",
    "ferry.md": "# Ferry Line\n\nThe Osprey ferry line links the two harbours; Tomasz Wren runs its timetable.\n",
}
PUMP = document_id_for("pump.md", "notes")
NOT_YET = document_id_for("later.md", "notes")  # in the team token's scope, never ingested
# Every way of asking Hydra or OmegaConf to read the environment; none may be evaluated.
HOSTILE_VALUES = (
    f"${{oc.env:{CANARY_VARIABLE}}}",
    f"'${{oc.env:{CANARY_VARIABLE}}}'",
    f"$\\{{oc.env:{CANARY_VARIABLE}\\}}",
    f"${{oc.decode:'${{oc.env:{CANARY_VARIABLE}}}'}}",
    "${oc.env:HOME}",
)


@dataclass
class Served:
    """The API over a two-note data dir with a files root, an admin and a scoped token, and an ingestion queue."""

    url: str
    root: Path
    outside: Path

    def client(self, token: str = ADMIN) -> httpx.Client:
        return httpx.Client(base_url=self.url, headers={"Authorization": f"Bearer {token}"}, timeout=60)


def settings_for(data_dir: Path, root: Path) -> Settings:
    tokens = [{"name": "admin", "token": ADMIN}, {"name": "team", "token": TEAM, "documents": [PUMP, NOT_YET]}]
    agrag = AgragSettings(  # type: ignore[call-arg]
        data_dir=data_dir, files_root=root, api_tokens=json.dumps(tokens), llm_api_key=LLM_KEY, _env_file=None
    )
    return Settings(agrag, RetrievalSettings(_env_file=None))  # type: ignore[call-arg]


def triples_file(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    passage = {"passage": "Pump Station\nThe Kestrel Pump Station", "extracted_entities": ["Kestrel Pump Station"]}
    path.write_text(json.dumps({"docs": [passage]}))
    return path


@pytest.fixture(scope="module")
def served(
    tmp_path_factory: pytest.TempPathFactory, embedder: SentenceTransformersTextEmbedder, prefect_harness: None
) -> Iterator[Served]:
    base = tmp_path_factory.mktemp("r3-overrides")
    root, folder = base / "files", base / "files" / "notes"
    folder.mkdir(parents=True)
    for name, text in NOTES.items():
        (folder / name).write_text(text)
    outside = triples_file(base / "outside" / "triples.json")
    triples_file(root / "triples" / "triples.json")
    settings = settings_for(base / "data", root)
    with open_runtime([], settings, require_data=False, embedder=embedder) as runtime:
        ingest_into(str(folder), runtime.config, runtime.store, embedder, files_root=root)
        queue = IngestionQueue(runtime, runtime.runs)
        queue.start()
        access = AccessPolicy(load_tokens(settings.agrag))
        app = create_app(runtime, access, queue=queue, warm_up=False)
        try:
            with serving(runtime), uvicorn_in_thread(app) as url:
                yield Served(url, root, outside)
        finally:
            queue.shutdown(30)


@pytest.fixture
def canary(monkeypatch: pytest.MonkeyPatch) -> str:
    """A distinctive value in the server process's environment (the server runs in this process)."""
    monkeypatch.setenv(CANARY_VARIABLE, CANARY)
    return CANARY


def assert_refused(response: httpx.Response, key: str) -> dict[str, Any]:
    """A typed 400 naming the override's key, with no value of the environment in it."""
    body: dict[str, Any] = response.json()
    assert response.status_code == 400, body
    assert body["error"] == "RequestOverrideError", body
    assert key in body["message"], body
    assert CANARY not in response.text
    return body


def test_r3_defect_1_search_overrides_never_evaluate_a_resolver(served: Served, canary: str) -> None:
    with served.client(TEAM) as team, served.client() as admin:
        for value in HOSTILE_VALUES:
            for key in ("recipe.limit", "recipe.description"):
                for http in (team, admin):
                    found = http.post("/v1/search", json={"query": "pump", "overrides": [f"{key}={value}"]})
                    body = assert_refused(found, key)
                    assert "${" in body["message"] or "interpolation" in body["message"]
        nested = [f"recipe.methods=[chunk,'${{oc.env:{CANARY_VARIABLE}}}']"]
        assert_refused(admin.post("/v1/search", json={"query": "pump", "overrides": nested}), "recipe.methods")
        plain = admin.post("/v1/search", json={"query": "pump", "overrides": ["recipe=chunk", "recipe.limit=1"]})
        assert plain.status_code == 200 and len(plain.json()["hits"]) == 1


def test_r3_defect_1_config_ingestion_and_run_overrides_never_evaluate_a_resolver(served: Served, canary: str) -> None:
    hostile = [f"ingest.chunker.max_chars=${{oc.env:{CANARY_VARIABLE}}}"]
    with served.client() as admin:
        runs = len(admin.get("/v1/ingestions", params={"limit": 500}).json())
        config = admin.get("/v1/config", params={"overrides": [f"recipe.description=${{oc.env:{CANARY_VARIABLE}}}"]})
        assert_refused(config, "recipe.description")
        home = admin.get("/v1/config", params={"overrides": ["recipe.description=${oc.env:HOME}"]})
        assert_refused(home, "recipe.description")
        answers = [
            admin.post("/v1/ingestions", json={"folder": "notes", "overrides": hostile}),
            admin.post("/v1/texts", json={"text": "A note.", "document_id": "note", "overrides": hostile}),
            admin.post("/v1/reextractions", json={"document_ids": [PUMP], "overrides": hostile}),
            admin.post("/v1/finalize", json={"overrides": hostile}),
            admin.post(f"/v1/documents/{PUMP}/delete", json={"overrides": hostile}),
            admin.get("/v1/ontology", params={"overrides": hostile}),
            admin.post("/v1/ontology", json={"labels": [{"label": "Station"}], "overrides": hostile}),
        ]
        for answer in answers:
            assert_refused(answer, "ingest.chunker.max_chars")
        assert len(admin.get("/v1/ingestions", params={"limit": 500}).json()) == runs, "nothing was queued"


async def test_r3_defect_1_mcp_overrides_never_evaluate_a_resolver(served: Served, canary: str) -> None:
    for token in (TEAM, ADMIN):
        async with mcp_client(f"{served.url}/mcp", token) as session:
            for value in HOSTILE_VALUES:
                for key in ("recipe.limit", "recipe.description"):
                    text = await refused(session, "search", {"query": "pump", "overrides": [f"{key}={value}"]})
                    assert key in text and canary not in text, text
            hostile = {"overrides": [f"ingest/ontology=${{oc.env:{CANARY_VARIABLE}}}"]}
            text = await refused(session, "get_ontology", hostile)
            assert "ingest/ontology" in text and canary not in text, text


def test_r3_defect_1_prefect_form_overrides_never_evaluate_a_resolver(served: Served, canary: str) -> None:
    settings = settings_for(served.root.parent / "form-data", served.root)
    for source in (RunSource.PREFECT, RunSource.HTTP):
        with pytest.raises(ConfigError) as refusal:
            check_overrides([f"recipe.description=${{oc.env:{CANARY_VARIABLE}}}"], settings, source)
        assert "recipe.description" in str(refusal.value) and canary not in str(refusal.value)
        with pytest.raises(ConfigError, match=r"ingest\.parallel\.workers"):
            check_overrides(["ingest.parallel.workers=4"], settings, source)
    check_overrides(["ingest.parallel.workers=4"], settings, RunSource.CLI)  # the local user keeps full Hydra


def test_r3_defect_8_a_path_override_outside_the_files_root_is_refused(served: Served) -> None:
    outside = ["ingest/extractor=triples", f"ingest.extractor.path={served.outside}"]
    escaping = ["ingest/extractor=triples", f"ingest.extractor.path={served.root}/../outside/triples.json"]
    rule = f'ingest.plan.rules=[{{match: "*.md", extractor: triples, extractor_options: {{path: {served.outside}}}}}]'
    with served.client() as admin:
        runs = len(admin.get("/v1/ingestions", params={"limit": 500}).json())
        for overrides in (outside, escaping):
            assert_refused(admin.post("/v1/ingestions", json={"folder": "notes", "overrides": overrides}), "path")
            assert_refused(
                admin.post("/v1/reextractions", json={"document_ids": [PUMP], "overrides": overrides}), "path"
            )
        assert_refused(admin.post("/v1/ingestions", json={"folder": "notes", "overrides": [rule]}), "path")
        assert len(admin.get("/v1/ingestions", params={"limit": 500}).json()) == runs, "nothing was queued"
        inside = ["ingest/extractor=triples", f"ingest.extractor.path={served.root}/triples/triples.json"]
        config = admin.get("/v1/config", params={"overrides": inside})
        assert config.status_code == 200, config.text
        assert config.json()["ingest"]["extractor"]["path"] == f"{served.root}/triples/triples.json"


def test_r3_defect_8_a_request_may_override_only_the_allowed_settings(served: Served) -> None:
    disallowed = {
        "vector_store.quantization=none": "vector_store.quantization",
        "embedder.batch_size=1": "embedder.batch_size",
        "evaluation.max_questions=3": "evaluation.max_questions",
        "ingest.parallel.workers=4": "ingest.parallel.workers",
        "ingest.loader.max_file_bytes=1": "ingest.loader.max_file_bytes",
        "ingest.plan.limits.max_chunks_per_file=100000": "ingest.plan.limits.max_chunks_per_file",
        "ingest.plan.limits.extractors=[lexical,llm]": "ingest.plan.limits.extractors",
        "hydra.run.dir=/tmp/elsewhere": "hydra.run.dir",
        "hydra/job_logging=disabled": "hydra/job_logging",
        "+recipe.extra=1": "+recipe.extra",
        "++recipe.limit=3": "++recipe.limit",
        "~recipe.limit": "~recipe.limit",
        "recipe.limit=choice(1,2)": "recipe.limit",
        "recipe.limit=range(1,3)": "recipe.limit",
        "recipe.limit=1,2": "recipe.limit",
        "recipe@elsewhere=chunk": "recipe@elsewhere",
        "recipe.bfs_depth=glob(*)": "recipe.bfs_depth",
    }
    with served.client() as admin:
        for override, named in disallowed.items():
            body = assert_refused(admin.get("/v1/config", params={"overrides": [override]}), named)
            assert "recipe.KEY" in body["message"] and "ingest/chunker" in body["message"], body
        allowed = ["recipe=chunk", "recipe.limit=3", "ingest/chunker=sentence", "ingest.chunker.max_chars=900"]
        assert admin.get("/v1/config", params={"overrides": allowed}).status_code == 200
        # what `agrag COMMAND vector_store=...` sends to check it matches the server: a value it already has
        assert admin.get("/v1/config", params={"overrides": ["vector_store=edge"]}).status_code == 200


def models_of(annotation: Any) -> list[type[BaseModel]]:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [annotation]
    return [model for arg in get_args(annotation) for model in models_of(arg)]


def test_r3_defect_8_the_allow_list_names_only_settings_that_exist() -> None:
    for key in ALLOWED_KEYS:
        models: list[type[BaseModel]] = [AgragConfig]
        for part in key.split("."):
            fields = [model.model_fields[part] for model in models if part in model.model_fields]
            assert fields, f"{key}: there is no setting {part!r} there"
            models = [sub for field in fields for sub in models_of(field.annotation)]
    for group in ALLOWED_GROUPS:
        assert available_options(group, [packaged_conf_dir()]), group


async def test_r3_defect_9_error_texts_mask_secrets_but_not_document_ids(served: Served) -> None:
    filters = {"document_ids": [NOT_YET]}
    async with mcp_client(f"{served.url}/mcp", TEAM) as session:
        text = await refused(session, "search", {"query": "pump", "filters": filters})
        assert NOT_YET in text, text
        text = await refused(session, "search", {"query": "pump", "overrides": [f"recipe.limit={LLM_KEY}"]})
        assert LLM_KEY not in text and "***" in text, text
    with served.client(TEAM) as team:
        unknown = team.post("/v1/search", json={"query": "pump", "filters": filters})
        assert unknown.status_code == 404 and NOT_YET in unknown.json()["message"], unknown.text
        for secret in (LLM_KEY, ADMIN):
            leaked = team.post("/v1/search", json={"query": "pump", "overrides": [f"recipe.limit={secret}"]})
            assert leaked.status_code == 400 and secret not in leaked.text and "***" in leaked.text, leaked.text
