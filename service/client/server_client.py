"""``ServerClient``: the HTTP API of a running ``agrag serve``, returning the objects the in-process code returns.

Each method sends one request and reads the answer back into agrag's own types: search results through
``SearchOutput.results()``, evidence results through each tool's output adapter, runs, status and the merge log
through the adapters of their dataclasses. An error answer raises the ``AgragError`` the server raised, with its
message; a server that does not answer raises ``ServerUnavailableError``.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from pathlib import Path
from types import TracebackType
from typing import Any, TypeVar
from urllib.parse import quote

import httpx
from pydantic import TypeAdapter

from agrag.components.data_models.ingestion_run import IngestionRun, RunSource
from agrag.components.data_models.ontology_additions import OntologyChange
from agrag.components.data_models.resolution import MergeLogEntry, ResolutionCandidate
from agrag.components.data_models.search_filters import SearchFilters
from agrag.components.data_models.store_status import StoreStatus
from agrag.components.data_models.stored_document import StoredDocument
from agrag.service.client.errors import ServerUnavailableError, error_from
from agrag.service.server.server_file import ServerInfo
from agrag.service.tools.registry import TOOLS
from agrag.service.tools.search_tool import SearchOutput

T = TypeVar("T")

CONNECT_SECONDS = 5.0
# A search with a cross-encoder or text2cypher, or a check of a long answer, may take a while; an ingestion is
# followed by polling, so no request waits for a whole run.
READ_SECONDS = 600.0

_RUN = TypeAdapter(IngestionRun)
_RUNS = TypeAdapter(list[IngestionRun])
_STATUS = TypeAdapter(StoreStatus)
_MERGE_LOG = TypeAdapter(list[MergeLogEntry])
_CANDIDATES = TypeAdapter(list[ResolutionCandidate])
_DOCUMENTS = TypeAdapter(list[StoredDocument])


def recipe_overrides(overrides: Sequence[str]) -> list[str]:
    """The overrides of recipe keys (``recipe=...``, ``recipe.limit=5``): those a search sends with its request."""
    keys = [override.partition("=")[0].lstrip("+~") for override in overrides]
    return [o for o, key in zip(overrides, keys, strict=True) if key == "recipe" or key.startswith("recipe.")]


def _path(value: str) -> str:
    """``value`` as one path segment (ids are plain, but a user may type anything)."""
    return quote(value, safe="")


class ServerClient:
    """A client of the ``agrag serve`` that holds a data dir, found through its server file.

    Usage:
        ```python
        info = find_server(settings.data_dir)
        with ServerClient(info, info.token, settings.data_dir) as server:
            output = server.search("Who wrote the Orion Planner?", ["recipe.limit=5"], None, trace=True)
            print(output.results()[0].item)
        ```
    """

    def __init__(self, info: ServerInfo, token: str, data_dir: Path, *, read_seconds: float = READ_SECONDS) -> None:
        """Talk to the server ``info`` describes, presenting ``token``; ``data_dir`` is named in errors."""
        self.info = info
        self.data_dir = data_dir
        self._http = httpx.Client(
            base_url=info.url,
            headers={"Authorization": f"Bearer {token}"},
            timeout=httpx.Timeout(read_seconds, connect=CONNECT_SECONDS),
        )

    @property
    def url(self) -> str:
        """The server's base URL."""
        return self.info.url

    def close(self) -> None:
        """Close the connection pool."""
        self._http.close()

    def __enter__(self) -> ServerClient:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def request(self, method: str, path: str, *, body: Any = None, params: Any = None) -> Any:
        """Send one request; the answer's JSON (None for an empty answer).

        Raises:
            AgragError: the error the server answered with (the same class, with the server's message).
            ServerUnavailableError: the server did not answer (refused, timed out, cut off).
        """
        # ASCII JSON: a lone surrogate (argv bytes that were not UTF-8) travels as \udcff and the server names it,
        # where httpx's UTF-8 JSON would fail here with a UnicodeEncodeError.
        content = None if body is None else json.dumps(body, ensure_ascii=True).encode("ascii")
        headers = None if body is None else {"Content-Type": "application/json"}
        try:
            response = self._http.request(method, path, content=content, headers=headers, params=params)
        except httpx.TimeoutException as exc:
            raise self._unavailable(f"no answer within {_seconds(exc, self._http.timeout)}") from exc
        except httpx.TransportError as exc:
            raise self._unavailable(_reason(exc)) from exc
        if response.is_success:
            return response.json() if response.content else None
        try:
            data = response.json()
        except ValueError:
            data = None
        raise error_from(response.status_code, data)

    def _unavailable(self, reason: str) -> ServerUnavailableError:
        return ServerUnavailableError(self.info.url, self.info.pid, self.data_dir, reason)

    # configuration

    def check_overrides(self, overrides: Sequence[str]) -> None:
        """Have the server check ``overrides`` against the stores it opened.

        Raises:
            ConfigError: a bad override, or one that changes the vector store or the embedder.
        """
        if overrides:
            self.request("GET", "/v1/config", params={"overrides": list(overrides)})

    # search and status

    def search(
        self, query: str, overrides: Sequence[str], filters: SearchFilters | None, *, trace: bool = False
    ) -> SearchOutput:
        """Search with the server's recipe and ``overrides`` (recipe keys only); see ``SearchOutput.results()``."""
        body: dict[str, Any] = {"query": query, "overrides": list(overrides), "trace": trace}
        if filters is not None:
            body["filters"] = {
                "labels": list(filters.labels),
                "relation_types": list(filters.relation_types),
                "document_ids": list(filters.document_ids),
                "properties": dict(filters.properties),
            }
        output: SearchOutput = TOOLS["search"].load(self.request("POST", "/v1/search", body=body))
        return output

    def status(self) -> StoreStatus:
        """What the data dir holds, and the last ingestion."""
        return _STATUS.validate_python(self.request("GET", "/v1/status"))

    # evidence sessions

    def open_session(self, documents: Sequence[str] | None, fetched: Sequence[str] = ()) -> tuple[str, list[str]]:
        """Start an evidence session within ``documents`` (None: every document), reading ``fetched`` again.

        Returns:
            The session id, and the ids of ``fetched`` the server did not find within the scope.
        """
        body: dict[str, Any] = {"fetched": list(fetched)}
        if documents is not None:
            body["documents"] = list(documents)
        answer = self.request("POST", "/v1/sessions", body=body)
        return str(answer["id"]), [str(i) for i in answer.get("not_restored", ())]

    def call(self, session_id: str, tool: str, arguments: dict[str, Any]) -> Any:
        """Run the evidence tool ``tool`` in the session; its result as the in-process session returns it."""
        data = self.request("POST", f"/v1/sessions/{_path(session_id)}/{tool}", body=arguments)
        return TOOLS[tool].load(data)

    def close_session(self, session_id: str) -> None:
        """End the session."""
        self.request("DELETE", f"/v1/sessions/{_path(session_id)}")

    # ingestion runs

    def ingest(self, folder: str, overrides: Sequence[str], files: Sequence[str] = ()) -> IngestionRun:
        """Queue an ingestion of ``folder`` (a path on the server's disk); the run as recorded.

        ``files``: only these files of it, as paths or globs relative to it (the server resolves them).
        """
        body = {"folder": folder, "overrides": list(overrides), "files": list(files), "source": RunSource.CLI.value}
        return _RUN.validate_python(self.request("POST", "/v1/ingestions", body=body))

    def delete(self, document_id: str, overrides: Sequence[str]) -> IngestionRun:
        """Queue the deletion of a document; the run as recorded."""
        body = {"overrides": list(overrides), "source": RunSource.CLI.value}
        answer = self.request("POST", f"/v1/documents/{_path(document_id)}/delete", body=body)
        return _RUN.validate_python(answer)

    def reextract(
        self,
        document_ids: Sequence[str],
        overrides: Sequence[str],
        *,
        other_settings: bool = False,
        force: bool = False,
    ) -> IngestionRun:
        """Queue a re-extraction of documents (or of those ingested under other settings); the run as recorded."""
        body = {
            "document_ids": list(document_ids),
            "other_settings": other_settings,
            "force": force,
            "overrides": list(overrides),
            "source": RunSource.CLI.value,
        }
        return _RUN.validate_python(self.request("POST", "/v1/reextractions", body=body))

    def finalize(self, overrides: Sequence[str]) -> IngestionRun:
        """Queue a rebuild of the stale communities and reports; the run as recorded."""
        body = {"overrides": list(overrides), "source": RunSource.CLI.value}
        return _RUN.validate_python(self.request("POST", "/v1/finalize", body=body))

    def run(self, run_id: str) -> IngestionRun:
        """One run as recorded now."""
        return _RUN.validate_python(self.request("GET", f"/v1/ingestions/{_path(run_id)}"))

    def runs(self, limit: int = 50) -> list[IngestionRun]:
        """The last ``limit`` runs, newest first."""
        return _RUNS.validate_python(self.request("GET", "/v1/ingestions", params={"limit": limit}))

    def cancel(self, run_id: str) -> IngestionRun:
        """Cancel a queued run, or stop a running one at its next safe point."""
        return _RUN.validate_python(self.request("POST", f"/v1/ingestions/{_path(run_id)}/cancel"))

    # entity resolution

    def merge_log(self) -> list[MergeLogEntry]:
        """Every resolution decision."""
        return _MERGE_LOG.validate_python(self.request("GET", "/v1/merges"))

    def undo_merge(self, key: str) -> list[MergeLogEntry]:
        """Undo a merge (a log id or a merged entity's id); the log entries it changed."""
        return _MERGE_LOG.validate_python(self.request("POST", f"/v1/merges/{_path(key)}/undo"))

    def candidates(self) -> list[ResolutionCandidate]:
        """The near misses resolution kept apart."""
        return _CANDIDATES.validate_python(self.request("GET", "/v1/merges/candidates"))

    def ask(self, question: str, documents: Sequence[str] | None = None) -> Iterator[dict[str, Any]]:
        """Ask the server's agent (``POST /v1/ask``); its events as they arrive: tool calls, then the answer.

        Raises:
            AgragError: the server refused the question (no LLM configured, an unknown document).
            ServerUnavailableError: the server did not answer or cut the stream off.
        """
        body: dict[str, Any] = {"question": question}
        if documents is not None:
            body["documents"] = list(documents)
        content = json.dumps(body, ensure_ascii=True).encode("ascii")
        headers = {"Content-Type": "application/json"}
        try:
            with self._http.stream("POST", "/v1/ask", content=content, headers=headers) as response:
                if not response.is_success:
                    response.read()
                    raise error_from(response.status_code, _json_or_none(response))
                for line in response.iter_lines():
                    if line.strip():
                        yield json.loads(line)
        except httpx.TimeoutException as exc:
            raise self._unavailable(f"no answer within {_seconds(exc, self._http.timeout)}") from exc
        except httpx.TransportError as exc:
            raise self._unavailable(_reason(exc)) from exc

    def documents(self, offset: int = 0, limit: int = 100) -> list[StoredDocument]:
        """One page of the committed documents, by path."""
        return _DOCUMENTS.validate_python(
            self.request("GET", "/v1/documents", params={"offset": offset, "limit": limit})
        )

    # the ontology

    def ontology(self, overrides: Sequence[str] = ()) -> Any:
        """The ontology in force (``get_ontology``'s output) under the server's configuration and ``overrides``."""
        params = {"overrides": list(overrides)} if overrides else None
        return TOOLS["get_ontology"].load(self.request("GET", "/v1/ontology", params=params))

    def set_ontology(self, body: dict[str, Any]) -> OntologyChange:
        """Grow the ontology (``POST /v1/ontology`` with ``set_ontology``'s arguments); its ``OntologyChange``."""
        return OntologyChange.model_validate(self.request("POST", "/v1/ontology", body=body))


def _json_or_none(response: httpx.Response) -> Any:
    try:
        return response.json()
    except ValueError:
        return None


def _reason(exc: httpx.TransportError) -> str:
    """A short reason for a transport error: refused, reset, or its own words."""
    if isinstance(exc, httpx.ConnectError):
        return "the connection was refused"
    if isinstance(exc, httpx.RemoteProtocolError):
        return "it closed the connection without an answer"
    return str(exc) or type(exc).__name__


def _seconds(exc: httpx.TimeoutException, timeout: httpx.Timeout) -> str:
    seconds = timeout.connect if isinstance(exc, httpx.ConnectTimeout) else timeout.read
    return f"{seconds:g} s"
