"""``agrag evidence``: the evidence functions on the command line, within a document scope, optionally as JSON."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from dataclasses import asdict, is_dataclass
from pathlib import Path
from typing import Annotated, Any

import typer

from agrag.service.cli_support import console, fail, on_data_dir, split_overrides
from agrag.service.evidence_console import print_result

evidence = typer.Typer(
    no_args_is_help=True,
    help="Find, read and cite passages, with ids that name one version of one document. --document limits every "
    "command to those documents; --session FILE keeps what was read, so `check` and `render` know it.",
)

Documents = Annotated[
    list[str] | None,
    typer.Option("--document", help="Only this document id may be read (repeat). Default: every document."),
]
Session = Annotated[
    Path | None,
    typer.Option("--session", help="A JSON file that keeps the scope and what was read across commands."),
]
AsJson = Annotated[bool, typer.Option("--json", help="Print the result as JSON.")]
Overrides = Annotated[
    list[str] | None,
    typer.Argument(help="Hydra overrides the data dir was built with, e.g. vector_store=qdrant."),
]


def _run(
    documents: list[str] | None,
    session_file: Path | None,
    as_json: bool,
    overrides: list[str] | None,
    call: Callable[[Any], Any],
) -> None:
    """Open a session (from the file, if any), run ``call`` on it, save what it read, print the result.

    When `agrag serve` holds the data dir, the session is one of the server's for this call: made with the file's
    scope and fetched ids, ended after the call.
    """
    from agrag.service.evidence_state import load_session, save_session

    def action(runtime: Any) -> Any:
        from agrag.pipelines.document_ids import check_documents_known

        scope, fetched = load_session(session_file, documents)
        check_documents_known(runtime.store.graph, documents)  # the server checks them when it opens the session
        session = runtime.evidence_session(scope, fetched)
        result = call(session)
        save_session(session_file, session.scope, session.fetched)
        return result

    def served(server: Any) -> Any:
        from agrag.service.client.served_session import ServedEvidenceSession

        scope, fetched = load_session(session_file, documents)
        with ServedEvidenceSession.opened(server, scope, fetched) as session:
            result = call(session)
        save_session(session_file, session.scope, session.fetched)
        return result

    result = on_data_dir(overrides, action, served)
    if as_json:
        console.print_json(json.dumps(_plain(result), ensure_ascii=False))
    else:
        print_result(console, result)


def _plain(value: Any) -> Any:
    if is_dataclass(value) and not isinstance(value, type):
        return asdict(value)
    if isinstance(value, tuple | list):
        return [_plain(v) for v in value]
    return value


@evidence.command()
def discover(
    query: Annotated[str, typer.Argument(help="What to look for.")],
    overrides: Overrides = None,
    *,
    mode: Annotated[
        str, typer.Option("--mode", help="graph (the bridge recipe's walk; the best found), keyword, vector or hybrid.")
    ] = "graph",
    limit: Annotated[int, typer.Option("--limit", help="The most passages returned (1 to 100).")] = 10,
    document: Documents = None,
    session: Session = None,
    as_json: AsJson = False,
) -> None:
    """Search the current versions of the documents in scope; each hit has an id, a snippet and where it is."""
    _run(document, session, as_json, overrides, lambda s: s.discover(query, mode, limit))


@evidence.command()
def fetch(
    ids: Annotated[
        list[str],
        typer.Argument(help="Evidence ids (from discover, find-entities, explore), then any overrides (key=value)."),
    ],
    *,
    document: Documents = None,
    session: Session = None,
    as_json: AsJson = False,
) -> None:
    """The exact text behind each id; says when a version was superseded or a span only partly stored."""
    evidence_ids, overrides = split_overrides(ids)
    _run(document, session, as_json, overrides, lambda s: s.fetch(evidence_ids))


@evidence.command()
def navigate(
    evidence_id: Annotated[str, typer.Argument(help="The passage to start from.")],
    direction: Annotated[str, typer.Argument(help="parent, children, siblings, previous, next or cells.")],
    overrides: Overrides = None,
    *,
    document: Documents = None,
    session: Session = None,
    as_json: AsJson = False,
) -> None:
    """The passages around one: its section, its parts, its neighbours, or the cells around a table cell."""
    _run(document, session, as_json, overrides, lambda s: s.navigate(evidence_id, direction))


@evidence.command("find-entities")
def find_entities(
    query: Annotated[str, typer.Argument(help="A name or a description.")],
    overrides: Overrides = None,
    *,
    limit: Annotated[int, typer.Option("--limit", help="The most entities returned (1 to 100).")] = 10,
    document: Documents = None,
    session: Session = None,
    as_json: AsJson = False,
) -> None:
    """Entities in scope, each with up to three ids of passages that support it."""
    _run(document, session, as_json, overrides, lambda s: s.find_entities(query, limit))


@evidence.command()
def explore(
    entity: Annotated[str, typer.Argument(help="An entity id (from find-entities) or its exact name.")],
    overrides: Overrides = None,
    *,
    depth: Annotated[int, typer.Option("--depth", help="Hops outward (1 to 3).")] = 1,
    relation_type: Annotated[
        list[str] | None, typer.Option("--relation-type", help="Only cross relations of this type (repeat).")
    ] = None,
    limit: Annotated[int, typer.Option("--limit", help="The most relations returned (1 to 100).")] = 50,
    document: Documents = None,
    session: Session = None,
    as_json: AsJson = False,
) -> None:
    """Relations around an entity: an assertion names the passage that states it; a path has no current passage."""
    _run(document, session, as_json, overrides, lambda s: s.explore(entity, depth, relation_type, limit))


def _answer(source: str) -> str:
    """The draft answer's text; a missing path, a folder or bytes that are not UTF-8 end the command with a message."""
    from agrag.components.errors import AnswerFileError

    name = "on standard input" if source == "-" else f"file {source}"
    try:
        data = sys.stdin.buffer.read() if source == "-" else Path(source).read_bytes()
    except FileNotFoundError:
        fail(AnswerFileError(name, "it does not exist"))
    except IsADirectoryError:
        fail(AnswerFileError(name, "it is a folder, not a file"))
    except OSError as exc:
        fail(AnswerFileError(name, exc.strerror or str(exc)))
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        fail(AnswerFileError(name, f"it is not UTF-8 text (byte 0x{data[exc.start]:02x} on line {line})"))


@evidence.command()
def check(
    answer: Annotated[str, typer.Argument(help="A file with the draft answer, or - for standard input.")],
    overrides: Overrides = None,
    *,
    document: Documents = None,
    session: Session = None,
    as_json: AsJson = False,
) -> None:
    """Check a draft's [id] citations against what this session read, and its figures and names (no LLM)."""
    text = _answer(answer)
    _run(document, session, as_json, overrides, lambda s: s.check_citations(text))


@evidence.command()
def render(
    answer: Annotated[str, typer.Argument(help="A file with the answer, or - for standard input.")],
    overrides: Overrides = None,
    *,
    document: Documents = None,
    session: Session = None,
    as_json: AsJson = False,
) -> None:
    """The answer with numbered references and a Sources list; invalid citations are dropped."""
    text = _answer(answer)
    _run(document, session, as_json, overrides, lambda s: s.render_citations(text))
