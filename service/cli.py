"""The ``agrag`` command: ``agrag ingest FOLDER [overrides]`` and ``agrag search "QUERY" [overrides]``."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated, Any, NoReturn, TypeVar

import typer

from agrag.components.data_models.paging import MAX_OFFSET, MAX_PAGE_DOCUMENTS
from agrag.service.ask_command import ask
from agrag.service.cli_support import Overrides, console, errors, fail, on_data_dir, server_client
from agrag.service.evidence_commands import evidence
from agrag.service.finalize_command import finalize
from agrag.service.mcp_command import mcp
from agrag.service.migrate_command import migrate_vectors
from agrag.service.ontology_command import ontology
from agrag.service.recipe_command import recipe
from agrag.service.reextract_command import reextract
from agrag.service.repair_command import repair
from agrag.service.runs_commands import runs
from agrag.service.runtime_env import apply_offline_defaults, quiet_prefect_run_loggers
from agrag.service.serve_commands import serve, serve_ingest
from agrag.service.status_command import status
from agrag.service.text_commands import ingest_text, preview

T = TypeVar("T")

app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    help="Agentic GraphRAG: turn a folder of documents into a knowledge graph and search it.",
)


@app.command()
def ingest(
    folder: Annotated[
        str,
        typer.Argument(help="Folder of .txt, .md, .rst, .html, .pdf and .csv files (inside AGRAG_FILES_ROOT if set)."),
    ],
    overrides: Overrides = None,
    files: Annotated[bool, typer.Option("--files", help="List every file with its status.")] = False,
    only: Annotated[
        list[str] | None,
        typer.Option(
            "--only",
            help="Only these files of the folder: a path or glob relative to it, e.g. '*.md' or 'q3/**/*.csv' "
            "(repeat; at most AGRAG_MAX_FILES_PER_CALL files). They get the ids a whole-folder ingestion gives them.",
        ),
    ] = None,
) -> None:
    """Ingest a folder into the data dir (AGRAG_DATA_DIR, default ./.agrag). Unchanged files are skipped.

    When `agrag serve` holds the data dir, the server runs the ingestion (after any run before it) and this command
    follows it; Ctrl+C stops following, not the run.
    """
    server = server_client()
    if server is not None:
        from agrag.service.served_commands import ingest_on_server

        ingest_on_server(server, folder, list(overrides or []), files=files, only=list(only or []))
        return
    from agrag.components.errors import AgragError, IngestInterruptedError
    from agrag.flows import stop_signals
    from agrag.service.server.private_prefect import PrivatePrefectServerError, starting_prefect_api

    try:
        from agrag.components.loaders.files_root import resolve_ingest_folder
        from agrag.pipelines.settings import load_settings

        settings = load_settings()
        resolved = resolve_ingest_folder(folder, settings.agrag.files_root)  # a wrong path: before Prefect starts
        # Prefect's server loads while the rest of agrag is imported and the input checked: a typo, a wrong pattern
        # or a missing LLM still fails before any flow runs (and stops it). SIGTERM and Ctrl+C stop the run at a
        # safe point and end the command with one line (flows/stop_signals.py).
        with stop_signals.stopping_on_signals(), starting_prefect_api() as prefect_ready:
            from agrag.components.loaders.file_selection import select_in_folder
            from agrag.flows.ingest_flow import run_ingest
            from agrag.flows.progress import stage_lines
            from agrag.flows.run_inputs import check_data_dir_path
            from agrag.pipelines.ingest_components import check_llm_needs, llm_client
            from agrag.pipelines.runtime import compose_config
            from agrag.service.console import file_status_table, print_ingest_report

            check_data_dir_path(settings.agrag.data_dir)
            if settings.agrag.embedding_cache_dir is not None:
                check_data_dir_path(settings.agrag.embedding_cache_dir, "AGRAG_EMBEDDING_CACHE_DIR")
            config = compose_config(list(overrides or []), settings)
            check_llm_needs(config.ingest, llm_client(settings.agrag))
            chosen = (
                select_in_folder(only, resolved, config.ingest.loader.suffixes, settings.agrag.max_files_per_call)
                if only
                else None
            )
            quiet_prefect_run_loggers()
            console.print(
                f"Ingesting {folder} into {settings.agrag.data_dir} (Prefect is starting; this takes a few seconds)",
                markup=False,
            )
            prefect_ready()
            # A terminal gets progress bars; a pipe or a log file one line per stage (on stderr, as the bars).
            with stage_lines(None if sys.stderr.isatty() else sys.stderr):
                try:
                    report = run_ingest(folder, list(overrides or []), progress_bar=sys.stderr.isatty(), files=chosen)
                except IngestInterruptedError as exc:
                    if stop_signals.received() is None:
                        raise
                    _interrupted(exc, stop_signals.received())
    except stop_signals.CommandInterrupted as exc:
        _interrupted(exc, exc.signum)
    except (AgragError, PrivatePrefectServerError) as exc:
        fail(exc)
        return
    print_ingest_report(console, report)
    if files:
        console.print(file_status_table(report.files))


def _interrupted(error: Any, signum: int | None) -> NoReturn:
    """End a command a signal stopped: its one line on stderr, and the shell's exit code for that signal."""
    from agrag.flows.stop_signals import interrupted_line

    errors.print(interrupted_line(error, signum), markup=False, highlight=False, soft_wrap=True)
    raise typer.Exit(code=128 + signum if signum is not None else 1)


@app.command()
def search(
    query: Annotated[str, typer.Argument(help="The question or keywords.")],
    overrides: Overrides = None,
    *,
    trace: Annotated[bool, typer.Option("--trace", help="Show what each method and step did.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print results as JSON.")] = False,
    label: Annotated[list[str] | None, typer.Option("--label", help="Only entities with this label (repeat).")] = None,
    document: Annotated[
        list[str] | None, typer.Option("--document", help="Only items from this document id (repeat).")
    ] = None,
    relation_type: Annotated[
        list[str] | None, typer.Option("--relation-type", help="The graph walk crosses only this type (repeat).")
    ] = None,
    prop: Annotated[
        list[str] | None,
        typer.Option("--property", help="KEY=VALUE exact match on a stored field, e.g. kind=table (repeat: any of)."),
    ] = None,
) -> None:
    """Search the data dir with a recipe (default: hybrid).

    Recipes: entity, chunk, hybrid, hybrid_reranked, graph_expand, thematic, text2cypher, multi_hop, or your own.
    When `agrag serve` holds the data dir, the server runs the search (its recipe overrides pass through).
    """
    from agrag.components.errors import AgragError
    from agrag.components.safe_text import require_text
    from agrag.service.console import analysis_line, results_json, results_table, trace_table

    try:
        require_text(query)  # here too: a server is sent only text
        filters = _search_filters(label, document, relation_type, prop)
    except AgragError as exc:
        fail(exc)

    def in_process(runtime: Any) -> tuple[Any, Any, str]:
        from agrag.pipelines.document_ids import check_documents_known

        check_documents_known(runtime.store.graph, filters.document_ids if filters is not None else None)
        response = runtime.engine.search_sync(query, runtime.config.recipe, filters)
        return response.results, response.trace, runtime.config.recipe.name

    def served(server: Any) -> tuple[Any, Any, str]:
        from agrag.service.client.server_client import recipe_overrides

        output = server.search(query, recipe_overrides(overrides or []), filters, trace=trace)
        return output.results(), output.trace, output.recipe

    results, found_trace, recipe = on_data_dir(overrides, in_process, served)
    if as_json:
        console.print_json(results_json(results, found_trace if trace else None))
        return
    console.print(results_table(results, f"{query!r} with recipe {recipe}"))
    if trace:
        console.print(trace_table(found_trace))
        if line := analysis_line(found_trace):
            console.print(line, soft_wrap=True, markup=False, highlight=False)


def _search_filters(
    labels: list[str] | None, documents: list[str] | None, relation_types: list[str] | None, props: list[str] | None
) -> Any:
    """The ``SearchFilters`` of the search options, or None; a property without ``=`` is an error for the user."""
    from agrag.components.data_models.search_filters import SearchFilters
    from agrag.components.errors import RetrievalError

    properties: dict[str, list[str]] = {}
    for text in props or []:
        key, sep, value = text.partition("=")
        if not sep or not key:
            raise RetrievalError(f"--property {text!r} is not KEY=VALUE; write it like --property kind=table.")
        properties.setdefault(key.strip(), []).append(value.strip())
    filters = SearchFilters(
        labels=tuple(labels or ()),
        relation_types=tuple(relation_types or ()),
        document_ids=tuple(documents or ()),
        properties={k: v[0] if len(v) == 1 else tuple(v) for k, v in properties.items()},
    )
    return None if filters.empty else filters


@app.command("eval")
def evaluate(
    dataset: Annotated[
        str | None,
        typer.Argument(help="musique_dev, hotpotqa_dev or notes_dev (in AGRAG_EVAL_BENCH_DIR); omit with --corpus."),
    ] = None,
    overrides: Overrides = None,
    corpus: Annotated[
        Path | None, typer.Option("--corpus", help='Your own corpus: a JSON list of {"title", "text"}.')
    ] = None,
    questions: Annotated[
        Path | None,
        typer.Option(
            "--questions",
            help='Your questions: a JSON list of {"question", "gold"}, gold being a list of corpus indexes.',
        ),
    ] = None,
    triples: Annotated[
        Path | None,
        typer.Option("--triples", help="Precomputed triples for --corpus (HippoRAG OpenIE JSON), for llm_triples."),
    ] = None,
) -> None:
    """Score recipes against BM25, dense and RRF baselines: Recall@k on multi-hop questions."""
    from agrag.components.errors import AgragError

    if dataset is not None and "=" in dataset:  # `agrag eval --corpus c --questions q recipe.limit=5`
        overrides, dataset = [dataset, *(overrides or [])], None
    # imported before the try that catches it: an import failing inside it must not hide behind a NameError
    from agrag.service.server.private_prefect import PrivatePrefectServerError

    try:
        from agrag.service.evaluation.command import DatasetChoice
        from agrag.service.evaluation.command import evaluate as run_eval

        quiet_prefect_run_loggers()
        run_eval(DatasetChoice(dataset, corpus, questions, triples), list(overrides or []), console)
    except (AgragError, PrivatePrefectServerError) as exc:
        fail(exc)


@app.command()
def delete(
    document_id: Annotated[str, typer.Argument(help="The document's id (the document_id of its chunks).")],
    overrides: Overrides = None,
) -> None:
    """Delete a document: what only it supported leaves the graph; its text stays readable by id, as superseded.

    When `agrag serve` holds the data dir, the server runs the delete (after any run before it); this command follows.
    """
    server = server_client()
    if server is not None:
        from agrag.service.served_commands import delete_on_server

        delete_on_server(server, document_id, list(overrides or []))
        return
    from agrag.components.errors import AgragError
    from agrag.service.server.private_prefect import PrivatePrefectServerError, starting_prefect_api

    try:
        # Prefect's server loads meanwhile. The data dir is opened once, before a flow runs: a typo or an unknown id
        # fails at once, and the flow runs on these open stores.
        with starting_prefect_api() as prefect_ready:
            from agrag.flows.delete_flow import delete_summary, run_delete
            from agrag.pipelines.runtime import open_runtime, serving

            with open_runtime(list(overrides or [])) as runtime, serving(runtime):
                runtime.require_document(document_id)
                quiet_prefect_run_loggers()
                prefect_ready()
                report = run_delete(document_id, list(overrides or []))
    except (AgragError, PrivatePrefectServerError) as exc:
        fail(exc)
        return
    console.print(delete_summary(report), markup=False, highlight=False)


@app.command()
def documents(
    overrides: Overrides = None,
    offset: Annotated[
        int,
        typer.Option(
            "--offset", min=0, max=MAX_OFFSET, help="Skip this many documents (the next page); past the last: none."
        ),
    ] = 0,
    limit: Annotated[
        int, typer.Option("--limit", min=1, max=MAX_PAGE_DOCUMENTS, help="The most documents shown.")
    ] = 100,
) -> None:
    """List the stored documents with their ids (for --document), titles, paths and the folders they came from."""
    from agrag.service.console import documents_table

    found = on_data_dir(
        overrides,
        lambda runtime: runtime.store.graph.documents(None, offset=offset, limit=limit),
        lambda server: server.documents(offset, limit),
    )
    empty = f"no documents after the first {offset:,}: the list is shorter" if offset else "no documents"
    console.print(documents_table(found, f"documents {offset + 1}-{offset + len(found)}" if found else empty))


@app.callback()
def _options(
    verbose: Annotated[
        bool, typer.Option("--verbose", help="Show agrag's debug log on stderr, with the traceback of a failed method.")
    ] = False,
) -> None:
    """Options of every command (``agrag --verbose search ...``)."""
    if verbose:
        import logging

        from agrag.service.server.log_lines import configure_logging

        configure_logging(verbose=True)
        logging.getLogger("agrag").setLevel(logging.DEBUG)


merges = typer.Typer(
    no_args_is_help=True, help="Entity resolution: the merge log, undoing a merge, and near-miss candidates."
)
app.add_typer(merges, name="merges")
app.add_typer(evidence, name="evidence")
app.add_typer(runs, name="runs")
app.add_typer(ontology, name="ontology")
app.add_typer(recipe, name="recipe")
app.command("status")(status)
app.command("reextract")(reextract)
app.command("repair")(repair)
app.command("migrate-vectors")(migrate_vectors)
app.command("serve")(serve)
app.command("serve-ingest")(serve_ingest)
app.command("mcp")(mcp)
app.command("ask")(ask)
app.command("finalize")(finalize)
app.command("ingest-text")(ingest_text)
app.command("preview")(preview)


@merges.command("list")
def merges_list(overrides: Overrides = None) -> None:
    """Show every resolution decision: merges (and undone ones) and homonyms kept apart, with the reason."""
    from agrag.service.console import merge_log_table

    entries = on_data_dir(overrides, lambda runtime: runtime.store.graph.merge_log(), lambda s: s.merge_log())
    console.print(merge_log_table(entries))


@merges.command("undo")
def merges_undo(
    key: Annotated[str, typer.Argument(help="A merge log id, or the id of an entity merged into another.")],
    overrides: Overrides = None,
) -> None:
    """Undo a merge: the merged entity becomes an entity of its own again, with its mentions and relations."""
    from agrag.service.console import merge_log_table

    entries = on_data_dir(overrides, lambda runtime: runtime.store.undo_merge(key), lambda s: s.undo_merge(key))
    console.print(merge_log_table(entries))


@merges.command("candidates")
def merges_candidates(overrides: Overrides = None) -> None:
    """Show the near misses resolution kept out of the graph, most similar first."""
    from agrag.service.console import candidates_table

    found = on_data_dir(overrides, lambda runtime: runtime.store.graph.candidates(), lambda s: s.candidates())
    console.print(candidates_table(found))


@app.command("show-config")
def show_config(overrides: Overrides = None) -> None:
    """Print the configuration that the overrides compose to, after validation."""
    from agrag.components.errors import AgragError

    try:
        from agrag.pipelines.runtime import compose_config
        from agrag.pipelines.settings import load_settings

        config = compose_config(list(overrides or []), load_settings())
    except AgragError as exc:
        fail(exc)
        return
    console.print_json(config.model_dump_json())


def main() -> None:
    """Entry point of the ``agrag`` console script."""
    from agrag.components.safe_text import install_log_escaping

    apply_offline_defaults()
    install_log_escaping()  # a file name or title with ESC or CR in a log line is shown, not obeyed
    app()
