"""What every ``agrag`` command shares: the consoles, how an error ends a command, opening the data dir."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NoReturn, TypeVar

import typer
from rich.console import Console
from rich.markup import escape

T = TypeVar("T")

console = Console()
errors = Console(stderr=True)


def fail(exc: Exception) -> NoReturn:
    """Print ``exc`` as the command's error and exit (2 for a configuration error, 1 otherwise)."""
    from agrag.components.errors import ConfigError

    # Messages quote user input and JSON shapes ([...]); escaped so rich does not read them as markup.
    errors.print(f"[bold red]Error:[/bold red] {escape(str(exc))}", highlight=False, soft_wrap=True)
    raise typer.Exit(code=2 if isinstance(exc, ConfigError) else 1)


def on_store(action: Callable[[Any, Any], T]) -> T:
    """Run ``action(store, embedder)`` on the open stores of AGRAG_DATA_DIR; an ``AgragError`` ends the command."""
    from agrag.components.embedders.sentence_transformers_text_embedder import SentenceTransformersTextEmbedder
    from agrag.components.errors import AgragError, RetrievalError
    from agrag.pipelines.config_loader import load_config
    from agrag.pipelines.settings import load_agrag_settings
    from agrag.pipelines.store_factory import open_knowledge_store

    try:
        config = load_config([])
        settings = load_agrag_settings()
        if not settings.graph_path.exists():
            raise RetrievalError(
                f"Nothing has been ingested into {settings.data_dir} yet. Run `agrag ingest FOLDER` first."
            )
        embedder = SentenceTransformersTextEmbedder(config.embedder.model, config.embedder.device)
        with open_knowledge_store(settings, config.vector_store, embedder) as store:
            return action(store, embedder)
    except AgragError as exc:
        fail(exc)
