"""How ``agrag evidence`` shows its results in a terminal."""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from agrag.components.data_models.citations import CitationCheck, RenderedAnswer
from agrag.components.data_models.evidence import (
    DiscoverResult,
    EntityEvidence,
    EvidenceLocation,
    ExploreResult,
    FetchResult,
)


def print_result(console: Console, result: Any) -> None:
    """Print any evidence function's result."""
    if isinstance(result, DiscoverResult):
        _discover(console, result)
    elif isinstance(result, FetchResult):
        _fetch(console, result)
    elif isinstance(result, ExploreResult):
        _explore(console, result)
    elif isinstance(result, CitationCheck):
        _check(console, result)
    elif isinstance(result, RenderedAnswer):
        console.print(result.text, markup=False, highlight=False)
    else:
        _entities(console, tuple(result))


def _where(location: EvidenceLocation) -> str:
    return " > ".join(location.heading_path or (location.title,)) + f" [{location.start}:{location.end}]"


def _discover(console: Console, result: DiscoverResult) -> None:
    table = Table(title=f"{len(result.hits)} passages ({result.mode.value})")
    for column in ("#", "id", "where", "snippet", "legs"):
        table.add_column(column, overflow="fold")
    for rank, hit in enumerate(result.hits, start=1):
        table.add_row(str(rank), hit.id, escape(_where(hit.location)), escape(hit.snippet), ", ".join(hit.legs))
    console.print(table)
    for leg, reason in result.failed_legs.items():
        console.print(f"[yellow]The {leg} leg failed[/yellow]: {escape(reason)}; the hits come from the other leg.")
    if result.truncated:
        console.print("More passages matched than were returned: raise --limit to see more.")


def _fetch(console: Console, result: FetchResult) -> None:
    for item in result.items:
        marks = [m for m, on in (("superseded", not item.current), ("partial", item.partial)) if on]
        head = f"[bold]{item.id}[/bold] {escape(_where(item.location))}"
        console.print(head + (f" [yellow]({', '.join(marks)})[/yellow]" if marks else ""))
        console.print(item.text, markup=False, highlight=False)
        console.print()
    if result.not_found:
        console.print("Not found (or not in scope): " + ", ".join(result.not_found), markup=False)


def _entities(console: Console, entities: tuple[EntityEvidence, ...]) -> None:
    table = Table(title=f"{len(entities)} entities")
    for column in ("id", "name", "label", "passages", "facts"):
        table.add_column(column, overflow="fold")
    for entity in entities:
        facts = "\n".join(f"{fact.fact} [{', '.join(fact.passages)}]" for fact in entity.facts)
        table.add_row(entity.id, escape(entity.name), escape(entity.label), "\n".join(entity.passages), escape(facts))
    console.print(table)


def _explore(console: Console, result: ExploreResult) -> None:
    if result.entity is None:
        console.print("No such entity in scope.")
        return
    table = Table(title=f"Relations around {escape(result.entity.name)}")
    for column in ("hop", "relation", "kind", "passages"):
        table.add_column(column, overflow="fold")
    for edge in result.edges:
        relation = f"{edge.source} -[{edge.type}]-> {edge.target}"
        table.add_row(str(edge.hop), escape(relation), edge.kind.value, "\n".join(edge.passages))
    console.print(table)


def _check(console: Console, check: CitationCheck) -> None:
    verdict = "[green]grounded[/green]" if check.grounded else "[red]not grounded[/red]"
    count = len(check.cited)
    console.print(f"{verdict}: {count} valid citation{'' if count == 1 else 's'}")
    for invalid in check.invalid:
        console.print(f"  removed {invalid.id}: {invalid.reason}", markup=False)
    for sentence in check.uncited:
        console.print(f"  no citation: {sentence}", markup=False)
    for claim in check.unsupported:
        missing = ", ".join((*claim.missing_figures, *claim.missing_names))
        console.print(f"  not in its evidence ({missing}): {claim.sentence}", markup=False)
