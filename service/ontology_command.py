"""``agrag ontology show|add``: the ontology in force, and growing it with labels and relation patterns.

Both work in-process, or through ``agrag serve`` when it holds the data dir (``GET``/``POST /v1/ontology``).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Annotated, Any, TypeVar

import typer
from rich.console import Console
from rich.table import Table

from agrag.components.data_models.ontology_additions import (
    WILDCARD,
    LabelSpec,
    OntologyChange,
    OntologyView,
    RelationSpec,
)
from agrag.components.errors import AgragError
from agrag.components.ontology_errors import OntologyError, OntologySpecError
from agrag.service.cli_support import Overrides, console, fail, on_server, server_client

T = TypeVar("T")

ontology = typer.Typer(
    no_args_is_help=True,
    help="The ontology in force (conf/ingest/ontology plus what was added to the data dir): show it, or grow it.",
)


def parse_label(text: str) -> LabelSpec:
    """``Vendor`` or ``Vendor:A company that sells us parts``.

    Raises:
        OntologySpecError: no label before the ``:``.
    """
    label, _, description = text.partition(":")
    if not label.strip():
        raise OntologySpecError("--label", text, 'LABEL or LABEL:"description"')
    return LabelSpec(label=label.strip(), description=description.strip())


def parse_relation(text: str) -> RelationSpec:
    """``SUPPLIES:Organization:Component`` (``*`` for any label), optionally ``:description`` after it.

    Raises:
        OntologySpecError: not three names separated by ``:``.
    """
    parts = text.split(":", 3)
    if len(parts) < 3 or not all(p.strip() for p in parts[:3]):
        raise OntologySpecError("--relation", text, 'TYPE:SOURCE_LABEL:TARGET_LABEL (optionally :"description")')
    description = parts[3].strip() if len(parts) == 4 else ""
    return RelationSpec(
        type=parts[0].strip(), source=parts[1].strip(), target=parts[2].strip(), description=description
    )


def _on_data_dir(overrides: list[str], in_process: Callable[[Any], T], served: Callable[[Any], T]) -> T:
    """``served(server)`` when ``agrag serve`` holds the data dir, else ``in_process(runtime)``.

    In-process the data dir may hold nothing yet: an ontology can be grown before the first ingestion.
    """
    server = server_client()
    if server is not None:
        return on_server(server, served)
    try:
        from agrag.pipelines.runtime import open_runtime  # noqa: PLC0415 (`agrag --help` loads no model)

        with open_runtime(overrides, require_data=False) as runtime:
            return in_process(runtime)
    except AgragError as exc:
        fail(exc)


@ontology.command("show")
def show(
    overrides: Overrides = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the ontology as JSON.")] = False,
) -> None:
    """Show the ontology in force: each label and relation pattern, its description, and where it comes from."""

    def served(server: Any) -> OntologyView:
        out = server.ontology(list(overrides or []))
        return OntologyView(
            name=out.name or "",
            every_label_allowed=not out.entity_labels,
            every_relation_allowed=not out.relation_types,
            labels=out.labels,
            relations=out.relations,
        )

    def in_process(runtime: Any) -> OntologyView:
        from agrag.pipelines.ontology_in_force import show_ontology  # noqa: PLC0415

        return show_ontology(runtime)

    view = _on_data_dir(list(overrides or []), in_process, served)
    if as_json:
        console.print_json(json.dumps(view.model_dump(mode="json"), ensure_ascii=False))
    else:
        print_view(console, view)


@ontology.command("add")
def add(
    overrides: Overrides = None,
    label: Annotated[
        list[str] | None,
        typer.Option("--label", help='A label to add: Vendor or Vendor:"A company that sells us parts" (repeat).'),
    ] = None,
    relation: Annotated[
        list[str] | None,
        typer.Option(
            "--relation",
            help="A relation pattern to add: SUPPLIES:Organization:Component ('*' for any label), optionally "
            ':"description" after it (repeat).',
        ),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the outcome as JSON.")] = False,
) -> None:
    """Add labels (with descriptions) and relation patterns to the ontology; nothing is ever removed.

    Later ingestions extract and keep them; documents ingested before change when ingested again or re-extracted.
    """
    try:
        labels = [parse_label(text) for text in label or []]
        relations = [parse_relation(text) for text in relation or []]
    except AgragError as exc:
        fail(exc)
    if not labels and not relations:
        fail(OntologyError("Nothing to add: give --label Vendor and/or --relation SUPPLIES:Organization:Component."))

    def served(server: Any) -> OntologyChange:
        body = {
            "labels": [spec.model_dump() for spec in labels],
            "relations": [spec.model_dump() for spec in relations],
            "overrides": list(overrides or []),
        }
        change: OntologyChange = server.set_ontology(body)
        return change

    def in_process(runtime: Any) -> OntologyChange:
        from agrag.pipelines.ontology_in_force import set_ontology  # noqa: PLC0415

        return set_ontology(runtime, labels, relations)

    change = _on_data_dir(list(overrides or []), in_process, served)
    if as_json:
        console.print_json(json.dumps(change.model_dump(mode="json"), ensure_ascii=False))
        return
    table = Table(title="set_ontology", title_justify="left")
    for column in ("what", "name", "status", "note"):
        table.add_column(column)
    for result in change.results:
        table.add_row(result.kind, result.name, result.status.value, result.note)
    console.print(table)
    console.print(change.message, markup=False, highlight=False)


def print_view(out: Console, view: OntologyView) -> None:
    """The ontology in force as two tables, with what an open side means."""
    out.print(f"ontology: {view.name}", markup=False, highlight=False)
    labels = Table(title="entity labels", title_justify="left")
    for column in ("label", "description", "from"):
        labels.add_column(column)
    for spec in view.labels:
        labels.add_row(spec.label, spec.description, spec.origin.value)
    if view.every_label_allowed:
        out.print("Every entity label is kept (no labels declared); added labels are suggested to the extractor.")
    out.print(labels)
    relations = Table(title="relation patterns", title_justify="left")
    for column in ("type", "source", "target", "description", "from"):
        relations.add_column(column)
    for p in view.relations:
        relations.add_row(p.type, _any(p.source), _any(p.target), p.description, p.origin.value)
    if view.every_relation_allowed:
        out.print("Every relation type is kept (no relation types declared).")
    out.print(relations)


def _any(label: str) -> str:
    return "any" if label == WILDCARD else label
