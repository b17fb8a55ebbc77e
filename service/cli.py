"""The ``agrag`` command: ``agrag ingest FOLDER [overrides]`` and ``agrag search "QUERY" [overrides]``."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated, Any, TypeVar

import typer

from agrag.service.cli_support import console, fail, on_store
from agrag.service.evidence_commands import evidence
from agrag.service.runtime_env import apply_offline_defaults, log_served_runs_at_info, quiet_prefect_run_loggers

T = TypeVar("T")

app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    help="Agentic GraphRAG: turn a folder of documents into a knowledge graph and search it.",
)

Overrides = Annotated[
    list[str] | None,
    typer.Argument(help="Hydra overrides, e.g. recipe=hybrid recipe.limit=5 ingest.chunker.max_chars=800"),
]


@app.command()
def ingest(
    folder: Annotated[
        str,
        typer.Argument(help="Folder of .txt, .md, .rst, .html, .pdf and .csv files (inside AGRAG_FILES_ROOT if set)."),
    ],
    overrides: Overrides = None,
    files: Annotated[bool, typer.Option("--files", help="List every file with its status.")] = False,
) -> None:
    """Ingest a folder into the data dir (AGRAG_DATA_DIR, default ./.agrag). Unchanged files are skipped."""
    from agrag.components.errors import AgragError

    try:
        from agrag.components.loaders.files_root import resolve_ingest_folder
        from agrag.flows.ingest_flow import ingest_flow
        from agrag.pipelines.config_loader import load_config
        from agrag.pipelines.ingest_components import check_llm_needs, llm_client
        from agrag.pipelines.settings import load_agrag_settings
        from agrag.service.console import file_status_table, print_ingest_report

        settings = load_agrag_settings()
        # A wrong path, a typo or a missing LLM fails here, before Prefect starts.
        resolve_ingest_folder(folder, settings.files_root)
        check_llm_needs(load_config(list(overrides or [])).ingest, llm_client(settings))
        quiet_prefect_run_loggers()
        console.print(f"Ingesting {folder} into {settings.data_dir} (Prefect is starting; this takes a few seconds)")
        report = ingest_flow(folder, list(overrides or []), progress_bar=sys.stderr.isatty())
    except AgragError as exc:
        fail(exc)
        return
    print_ingest_report(console, report)
    if files:
        console.print(file_status_table(report.files))


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
    """
    from agrag.components.errors import AgragError, RetrievalError

    try:
        from agrag.components.embedders.sentence_transformers_text_embedder import SentenceTransformersTextEmbedder
        from agrag.pipelines.config_loader import load_config
        from agrag.pipelines.ingest_components import llm_client
        from agrag.pipelines.search_engine import SearchEngine
        from agrag.pipelines.settings import load_agrag_settings, load_retrieval_settings
        from agrag.pipelines.store_factory import open_knowledge_store
        from agrag.service.console import results_json, results_table, trace_table

        config = load_config(list(overrides or []))
        settings = load_agrag_settings()
        if not settings.graph_path.exists():
            raise RetrievalError(
                f"Nothing has been ingested into {settings.data_dir} yet. Run `agrag ingest FOLDER` first "
                "(or set AGRAG_DATA_DIR to the data dir you ingested into)."
            )
        retrieval = load_retrieval_settings()
        embedder = SentenceTransformersTextEmbedder(config.embedder.model, config.embedder.device)
        filters = _search_filters(label, document, relation_type, prop)
        llm = llm_client(settings)
        with open_knowledge_store(settings, config.vector_store, embedder, retrieval) as store:
            response = SearchEngine(store, embedder, retrieval, llm=llm).search_sync(query, config.recipe, filters)
    except AgragError as exc:
        fail(exc)
        return
    if as_json:
        console.print_json(results_json(response.results, response.trace if trace else None))
        return
    console.print(results_table(response.results, f"{query!r} with recipe {config.recipe.name}"))
    if trace:
        console.print(trace_table(response.trace))


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
        str | None, typer.Argument(help="musique_dev or hotpotqa_dev (in AGRAG_EVAL_BENCH_DIR); omit with --corpus.")
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
    try:
        from agrag.service.evaluation.command import DatasetChoice
        from agrag.service.evaluation.command import evaluate as run_eval

        quiet_prefect_run_loggers()
        run_eval(DatasetChoice(dataset, corpus, questions, triples), list(overrides or []), console)
    except AgragError as exc:
        fail(exc)


@app.command()
def delete(
    document_id: Annotated[str, typer.Argument(help="The document's id (the document_id of its chunks).")],
    overrides: Overrides = None,
) -> None:
    """Delete a document: what only it supported leaves the graph; its text stays readable by id, as superseded."""
    from agrag.components.errors import AgragError, IngestError

    try:
        from agrag.flows.delete_flow import delete_flow
        from agrag.pipelines.config_loader import load_config
        from agrag.pipelines.settings import load_agrag_settings

        load_config(list(overrides or []))
        settings = load_agrag_settings()
        if not settings.graph_path.exists():
            raise IngestError(f"Nothing has been ingested into {settings.data_dir}, so there is nothing to delete.")
        quiet_prefect_run_loggers()
        report = delete_flow(document_id, list(overrides or []))
    except AgragError as exc:
        fail(exc)
        return
    console.print(
        f"Deleted {report.document_id}: {report.chunks_retired} chunks retired (still readable by id), "
        f"{report.entities_removed} entities no other document supports removed, {report.communities} communities now."
    )


@app.command("serve-ingest")
def serve_ingest(
    name: Annotated[
        str, typer.Option("--name", help="The deployment's name; runs start as 'agrag-ingest/NAME'.")
    ] = "agrag-ingest",
    limit: Annotated[
        int,
        typer.Option(
            "--limit",
            min=1,
            help="Runs that may execute at once; more wait their turn. Runs into the same data dir cannot overlap.",
        ),
    ] = 1,
) -> None:
    """Serve ingestion as a Prefect deployment: start runs (folder, overrides) from the Prefect UI. Needs a server."""
    log_served_runs_at_info()  # before Prefect is imported: it reads its settings once, and runs inherit them
    from agrag.components.errors import AgragError

    try:
        from agrag.flows import ingest_deployment as deployment
        from agrag.pipelines.settings import load_agrag_settings

        deployment.check_deployment_name(name)
        data_dir = load_agrag_settings().data_dir
        api_url = deployment.prefect_api_url()
    except AgragError as exc:
        fail(exc)
        return
    ui_url = deployment.prefect_ui_url()
    full_name = deployment.deployment_full_name(name)
    lines = [
        f"Serving ingestion as the Prefect deployment {full_name}",
        f"  Prefect API: {api_url}",
        *([f"  Prefect UI:  {ui_url}  (Deployments → {full_name} → Run → Custom run)"] if ui_url else []),
        f"  Runs write into {data_dir.resolve()} unless a run sets data_dir",
        f"  A relative folder is read from {Path.cwd()}",
        "Start a run from a shell:",
        f"  {deployment.example_run_command(name)}",
        "Press Ctrl+C to stop serving.",
    ]
    # The example command holds a JSON list, which rich would read as markup.
    console.print("\n".join(lines), markup=False, highlight=False, soft_wrap=True)
    deployment.serve_ingest(data_dir, name, limit=limit)


merges = typer.Typer(
    no_args_is_help=True, help="Entity resolution: the merge log, undoing a merge, and near-miss candidates."
)
app.add_typer(merges, name="merges")
app.add_typer(evidence, name="evidence")


@merges.command("list")
def merges_list() -> None:
    """Show every resolution decision: merges (and undone ones) and homonyms kept apart, with the reason."""
    from agrag.service.console import merge_log_table

    console.print(merge_log_table(on_store(lambda store, _: store.graph.merge_log())))


@merges.command("undo")
def merges_undo(
    key: Annotated[str, typer.Argument(help="A merge log id, or the id of an entity merged into another.")],
) -> None:
    """Undo a merge: the merged entity becomes an entity of its own again, with its mentions and relations."""
    from agrag.service.console import merge_log_table

    console.print(merge_log_table(on_store(lambda store, _: store.undo_merge(key))))


@merges.command("candidates")
def merges_candidates() -> None:
    """Show the near misses resolution kept out of the graph, most similar first."""
    from agrag.service.console import candidates_table

    console.print(candidates_table(on_store(lambda store, _: store.graph.candidates())))


@app.command("show-config")
def show_config(overrides: Overrides = None) -> None:
    """Print the configuration that the overrides compose to, after validation."""
    from agrag.components.errors import AgragError

    try:
        from agrag.pipelines.config_loader import load_config

        config = load_config(list(overrides or []))
    except AgragError as exc:
        fail(exc)
        return
    console.print_json(config.model_dump_json())


def main() -> None:
    """Entry point of the ``agrag`` console script."""
    apply_offline_defaults()
    app()
