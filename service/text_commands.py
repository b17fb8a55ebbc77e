"""``agrag ingest-text NAME`` and ``agrag preview [PATHS_OR_GLOBS...]``, in this process or on ``agrag serve``.

When ``agrag serve`` holds the data dir, it runs the ingestion in its queue and previews its own files root.

Heavy modules are imported inside the commands, so ``agrag --help`` starts at once.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from agrag.components.data_models.paging import MAX_OFFSET
from agrag.service.cli_support import Overrides, console, fail, server_client


def ingest_text(
    document_id: Annotated[
        str, typer.Argument(help="The text's name, e.g. meeting-2026-11-30 or notes.md (the same name: a new version).")
    ],
    overrides: Overrides = None,
    title: Annotated[
        str | None, typer.Option("--title", help="Its title (default: its first heading, else the name).")
    ] = None,
    file: Annotated[
        Path | None, typer.Option("--file", help="Read the text from this file (UTF-8) instead of standard input.")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the result as JSON.")] = False,
) -> None:
    """Ingest a text (from --file or standard input) as the document NAME: new, a new version, or unchanged.

    The text is kept in the data dir's texts folder. A name that leads to a document read from a file is refused.
    When `agrag serve` holds the data dir, the server ingests it (after any run before it).
    """
    from agrag.components.errors import AgragError  # noqa: PLC0415

    try:
        text = _read_text(file)
        server = server_client()
        if server is None:
            result = _ingest_in_process(text, document_id, title, list(overrides or []))
        else:
            body = {
                "text": text,
                "document_id": document_id,
                "title": title,
                "overrides": list(overrides or []),
                "source": "cli",
            }
            with server:
                result = _text_result(server.request("POST", "/v1/texts", body=body))
    except AgragError as exc:
        fail(exc)
    if as_json:
        console.print_json(result.model_dump_json())
        return
    console.print(_text_line(result), markup=False, highlight=False, soft_wrap=True)
    if result.status == "failed":
        raise typer.Exit(code=1)


def preview(
    paths: Annotated[
        list[str] | None,
        typer.Argument(help="Paths or globs relative to the files root ('**' for any depth); none: every file."),
    ] = None,
    offset: Annotated[
        int, typer.Option("--offset", min=0, max=MAX_OFFSET, help="Skip this many matched files (the next page).")
    ] = 0,
    limit: Annotated[int, typer.Option("--limit", min=1, max=100, help="The most files shown.")] = 10,
    chars: Annotated[int, typer.Option("--chars", min=100, max=20000, help="The most characters a sample.")] = 2000,
    as_json: Annotated[bool, typer.Option("--json", help="Print the page as JSON.")] = False,
) -> None:
    """Show a sample from the middle of each file under the files root (AGRAG_FILES_ROOT, else the current folder).

    Only a window around each file's middle is read (a PDF: its middle page), so large files cost little. Use it
    to see what the documents hold before choosing an ontology. When `agrag serve` holds the data dir, the server
    previews its own files root.
    """
    from agrag.components.errors import AgragError  # noqa: PLC0415

    arguments = {"paths": list(paths or []), "offset": offset, "limit": limit, "chars": chars}
    try:
        server = server_client()
        if server is None:
            page = _preview_in_process(arguments)
        else:
            from agrag.components.loaders.file_preview import PreviewPage  # noqa: PLC0415

            with server:
                page = PreviewPage.model_validate(server.request("POST", "/v1/files/preview", body=arguments))
    except AgragError as exc:
        fail(exc)
    if as_json:
        console.print_json(page.model_dump_json())
        return
    _print_page(page)


def _read_text(file: Path | None) -> str:
    from agrag.components.text_preview_errors import BadTextError  # noqa: PLC0415

    if file is None:
        if sys.stdin.isatty():
            raise BadTextError(
                "no text was given", "Pipe it in (`agrag ingest-text NAME < notes.md`) or give --file F."
            )
        raw = sys.stdin.buffer.read()
        where = "standard input"
    else:
        try:
            raw = file.expanduser().read_bytes()
        except OSError as exc:
            raise BadTextError(
                f"{str(file)!r} cannot be read ({exc.strerror or exc})", "Give a readable file."
            ) from exc
        where = repr(str(file))
    try:
        return raw.decode("utf-8-sig").replace("\r\n", "\n")
    except UnicodeDecodeError as exc:
        raise BadTextError(f"{where} is not UTF-8 text (byte {exc.start})", "Save it as UTF-8 and try again.") from exc


def _ingest_in_process(text: str, name: str, title: str | None, overrides: list[str]) -> Any:
    from agrag.flows.run_inputs import check_data_dir_path  # noqa: PLC0415
    from agrag.flows.text_ingest import ingest_text as run_text  # noqa: PLC0415
    from agrag.pipelines.ingest_components import check_llm_needs  # noqa: PLC0415
    from agrag.pipelines.runtime import open_runtime  # noqa: PLC0415
    from agrag.pipelines.settings import load_settings  # noqa: PLC0415
    from agrag.service.runtime_env import quiet_prefect_run_loggers  # noqa: PLC0415
    from agrag.service.server.private_prefect import PrivatePrefectServerError, private_prefect_api  # noqa: PLC0415

    settings = load_settings()
    check_data_dir_path(settings.agrag.data_dir)
    with open_runtime(overrides, settings, require_data=False) as runtime:
        check_llm_needs(runtime.config.ingest, runtime.llm)
        quiet_prefect_run_loggers()
        try:  # the stages are Prefect tasks: a private server of ours, not Prefect's own that outlives a kill -9
            with private_prefect_api():
                return run_text(runtime, text, name, title)
        except PrivatePrefectServerError as exc:
            fail(exc)


def _text_result(data: Any) -> Any:
    from agrag.flows.text_targets import TextIngestResult  # noqa: PLC0415

    return TextIngestResult.model_validate(data)


def _preview_in_process(arguments: dict[str, Any]) -> Any:
    from agrag.components.loaders.file_preview import preview_files  # noqa: PLC0415
    from agrag.pipelines.runtime import compose_config  # noqa: PLC0415
    from agrag.pipelines.settings import load_settings  # noqa: PLC0415

    settings = load_settings()
    root = settings.agrag.files_root if settings.agrag.files_root is not None else Path.cwd()
    suffixes = compose_config([], settings).ingest.loader.suffixes
    return preview_files(
        arguments["paths"],
        root,
        suffixes,
        offset=arguments["offset"],
        limit=arguments["limit"],
        chars=arguments["chars"],
    )


def _text_line(result: Any) -> str:
    what = {
        "ingested": "ingested",
        "unchanged": "unchanged (nothing written)",
        "no text": "stored, but with nothing to search",
    }.get(result.status, result.status)
    line = f"{result.name}: {what}. Document {result.document_id}"
    if result.version:
        line += f", version {result.version}, title {result.title!r}"
    line += f"; kept in {result.file} of the data dir."
    return f"{line} {result.reason}".rstrip() if result.reason else line


def _print_page(page: Any) -> None:
    from rich.markup import escape  # noqa: PLC0415

    from agrag.components.safe_text import printable  # noqa: PLC0415

    for note in page.notes:  # a file name on one line: a newline in it is shown, not obeyed
        console.print(f"skipped {printable(note, multiline=False)}", markup=False, highlight=False)
    if not page.files:
        console.print(f"No files in this page ({page.total} matched, offset {page.offset}).", markup=False)
        return
    for found in page.files:
        where = f"page {found.page} of {found.pages}" if found.page else f"bytes {found.window[0]}-{found.window[1]}"
        whole = "whole file" if found.whole else where
        heading = f"{found.path} ({found.size} bytes, {found.format}, {whole})"
        console.rule(escape(printable(heading, multiline=False)), style="bold")  # a name may hold [markup]
        console.print(printable(found.sample) if found.sample else f"({found.note})", markup=False, highlight=False)
        if found.sample and found.note:
            console.print(f"({found.note})", markup=False, highlight=False)
    last = page.offset + len(page.files)
    more = f"; next page: --offset {page.next_offset}" if page.next_offset is not None else ""
    console.print(f"Files {page.offset + 1}-{last} of {page.total}{more}.", markup=False, highlight=False)
