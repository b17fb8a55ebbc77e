"""``agrag recipe show NAME``: a recipe as its validated settings, or (``--pipeline``) as its Haystack pipeline YAML."""

from __future__ import annotations

import sys
from typing import Annotated

import typer

from agrag.service.cli_support import Overrides, fail

# Haystack loads classes only from modules it is told to trust, so the YAML says how to trust agrag's.
LOAD_HINT = (
    "# The recipe {name} as a Haystack pipeline (written by `agrag recipe show {name} --pipeline`).\n"
    '# Load it with haystack.Pipeline.loads(text, allowed_modules=["agrag"]). When it runs, its components use\n'
    "# the data dir this process holds open, or open it themselves (data_dir below).\n"
)

recipe = typer.Typer(no_args_is_help=True, help="Search recipes: show one as settings or as its Haystack pipeline.")


@recipe.command("show")
def show(
    name: Annotated[str, typer.Argument(help="The recipe: hybrid, chunk, multi_hop... or one in AGRAG_CONFIG_DIR.")],
    overrides: Overrides = None,
    pipeline: Annotated[
        bool,
        typer.Option(
            "--pipeline",
            help="Print the compiled Haystack pipeline as YAML (load it with haystack.Pipeline.loads); it names the "
            "data dir (AGRAG_DATA_DIR), which it opens when run.",
        ),
    ] = False,
) -> None:
    """Print a recipe after validation (YAML), or with --pipeline the Haystack pipeline it compiles to.

    The output is plain YAML on stdout, for a pipe or a file: `agrag recipe show hybrid --pipeline > p.yaml`.
    Nothing is opened or loaded; an LLM endpoint is read only for a recipe that uses text2cypher.
    """
    from agrag.components.errors import AgragError

    try:
        import yaml  # type: ignore[import-untyped]  # PyYAML ships no stubs

        from agrag.pipelines.runtime import compose_config, recipe_pipeline
        from agrag.pipelines.settings import load_settings

        settings = load_settings()
        config = compose_config([f"recipe={name}", *(overrides or [])], settings)
        text = (
            LOAD_HINT.format(name=config.recipe.name) + recipe_pipeline(config, settings).dumps()
            if pipeline
            else yaml.safe_dump(config.recipe.model_dump(mode="json"), sort_keys=False, allow_unicode=True)
        )
    except AgragError as exc:
        fail(exc)
    sys.stdout.write(text)
