"""``agrag status``: what the data dir holds, what its graph was built with, and the last ingestion.

In-process it opens the data dir and builds the status as the ``status`` tool does; when ``agrag serve`` holds the
data dir it asks the server (``GET /v1/status``) and also names the server.
"""

from __future__ import annotations

import json
from typing import Annotated, Any

import typer
from rich.columns import Columns
from rich.console import Console, Group
from rich.markup import escape
from rich.table import Table

from agrag.components.data_models.ingestion_run import IngestionRun
from agrag.components.data_models.store_status import RecordedOntology, StoreStatus
from agrag.service.cli_support import console, on_runtime, on_server, server_client
from agrag.service.server.server_file import ServerInfo

Overrides = Annotated[
    list[str] | None,
    typer.Argument(help="Hydra overrides the data dir was built with, e.g. vector_store=qdrant."),
]
PER_TYPE_SHOWN = 15  # labels and relation types listed; the rest are summed in one row


def status(
    overrides: Overrides = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the status as JSON.")] = False,
) -> None:
    """Show what the data dir holds: counts, entity labels, relation types, the ontology, the last ingestion."""
    server = server_client()
    info: ServerInfo | None = None
    if server is None:
        found = on_runtime(overrides, _in_process)
    else:
        info = server.info

        def served(client: Any) -> StoreStatus:
            client.check_overrides(list(overrides or []))
            result: StoreStatus = client.status()
            return result

        found = on_server(server, served)
    if as_json:
        console.print_json(json.dumps(status_json(found, info), ensure_ascii=False))
    else:
        print_status(console, found, info)


def _in_process(runtime: Any) -> StoreStatus:
    from agrag.pipelines.store_status import store_status

    with runtime.store.reading():
        return store_status(runtime.store, None, runtime.runs.last_finished())


def status_json(status: StoreStatus, server: ServerInfo | None) -> dict[str, Any]:
    """The status as ``GET /v1/status`` returns it, with the server (url, pid, started) or null."""
    from pydantic import TypeAdapter

    data: dict[str, Any] = TypeAdapter(StoreStatus).dump_python(status, mode="json")
    data["server"] = None if server is None else {"url": server.url, "pid": server.pid, "started": server.started}
    return data


def print_status(out: Console, status: StoreStatus, server: ServerInfo | None) -> None:
    """The status as a few tables: counts, entities per label and relations per type, then the ontology and runs."""
    if server is not None:
        out.print(f"Served by the agrag server at {server.url} (process {server.pid}, since {server.started}).")
    if status.scope is not None:
        out.print(f"Within the documents your token may read: {', '.join(status.scope) or 'none'}.", markup=False)
    counts = Table(title="the data dir holds", title_justify="left")
    for column in ("documents", "chunks", "entities", "relations", "communities"):
        counts.add_column(column, justify="right")
    communities = "-" if status.communities is None else str(status.communities)
    counts.add_row(str(status.documents), str(status.chunks), str(status.entities), str(status.relations), communities)
    out.print(counts)
    out.print(
        Columns(
            [
                _per_type("entities per label", "label", status.entity_labels),
                _per_type("relations per type", "type", status.relation_types),
            ],
            padding=(0, 4),
        )
    )
    if status.facts is not None:
        out.print(_facts(status), markup=False, highlight=False)
    out.print(_ontology(status.ontology))
    out.print(f"store generation: {status.generation or '(nothing committed yet)'}", markup=False, highlight=False)
    out.print(_last_ingestion(status.last_ingestion, scoped=status.scope is not None))


def _per_type(title: str, what: str, counts: dict[str, int]) -> Table:
    table = Table(title=title, title_justify="left")
    table.add_column(what)
    table.add_column("count", justify="right")
    items = list(counts.items())
    for name, count in items[:PER_TYPE_SHOWN]:
        table.add_row(escape(name), str(count))
    rest = items[PER_TYPE_SHOWN:]
    if rest:
        table.add_row(f"({len(rest)} more)", str(sum(n for _, n in rest)))
    if not items:
        table.add_row("(none)", "0")
    return table


def _facts(status: StoreStatus) -> str:
    line = f"facts: {status.facts} searchable (recipe=fact)"
    if status.facts_unsearchable:
        line += (
            f"; {status.facts_unsearchable} relations have no fact vector yet (a data dir made before facts were "
            "searchable, or one that lost them): run `agrag repair` to embed them (the graph is not changed)"
        )
    return line


def _ontology(ontology: RecordedOntology | None) -> Group | str:
    if ontology is None:
        return "ontology: none recorded (the data dir was built before agrag recorded it, or holds nothing yet)"
    if not ontology.entity_labels and not ontology.relation_types:
        return f"ontology: [bold]{escape(ontology.name)}[/bold] (every entity label and relation type is kept)"
    labels = ", ".join(ontology.entity_labels) or "every label"
    lines = [f"ontology: [bold]{escape(ontology.name)}[/bold]; entity labels: {escape(labels)}"]
    if not ontology.relation_types:
        lines.append("  relation types: every type")
    for relation, pairs in ontology.relation_types.items():
        patterns = ", ".join(f"({source})->({target})" for source, target in pairs) or "any labels"
        lines.append(f"  {escape(relation)}: {escape(patterns)}")
    return Group(*lines)


def _last_ingestion(run: IngestionRun | None, *, scoped: bool) -> str:
    if run is None:
        why = "not shown to a token limited to documents" if scoped else "none recorded"
        return f"last ingestion: {why}"
    when = run.finished or run.started or run.created
    action = run.kind.action
    return (
        f"last ingestion: {action} {escape(run.target)}: [bold]{run.state.value}[/bold] at {when} "
        f"(run {run.id}, from {run.source.value}). {escape(run.message)}"
    )
