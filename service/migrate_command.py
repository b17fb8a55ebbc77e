"""``agrag migrate-vectors``: move a data dir's vectors from its Qdrant Edge shards to a Qdrant server.

The vectors are copied, not embedded again (no model is loaded), with the payloads and keyword texts ingestion
gives them; then the data dir records ``vector_store=qdrant``, and every later command takes that override. It runs
in-process only: when ``agrag serve`` holds the data dir, stop the server first. The work is in
``agrag.flows.server_migration``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

from agrag.service.cli_support import console, fail, server_client

if TYPE_CHECKING:
    from agrag.components.stores.vector_store import VectorCollection
    from agrag.flows.server_migration import ServerMigration

Overrides = Annotated[
    list[str] | None,
    typer.Argument(
        help="Hydra overrides of the target (vector_store=qdrant is implied), e.g. "
        "vector_store.collection_prefix=team_a vector_store.quantization=int8; the others (embedder.model...) as the "
        "data dir was built with."
    ),
]


def _copied(collection: VectorCollection, copied: int, total: int) -> None:
    console.print(
        f"{collection.value}: {copied} of {total} points copied", markup=False, highlight=False, soft_wrap=True
    )


def migrate_vectors(overrides: Overrides = None) -> None:
    """Copy the vectors from Qdrant Edge to the Qdrant server at AGRAG_QDRANT_URL (nothing is embedded again).

    Then the data dir keeps its vectors there: every later command needs the override vector_store=qdrant. The Edge
    shards are kept, renamed, for you to delete. Stopped halfway, the data dir stays on Qdrant Edge; run it again.
    """
    # imported here so that `agrag --help` loads no store or model code
    from agrag.components.errors import AgragError, StoreLockedError  # noqa: PLC0415

    server = server_client()
    if server is not None:
        fail(
            StoreLockedError(
                f"agrag serve holds the data dir {server.data_dir}: stop it, run `agrag migrate-vectors`, then start "
                "it again with the override vector_store=qdrant."
            )
        )
    try:
        from agrag.flows.server_migration import migrate_to_server  # noqa: PLC0415

        done = migrate_to_server(list(overrides or []), progress=_copied)
    except AgragError as exc:
        fail(exc)
    _print_summary(done)


def _print_summary(done: ServerMigration) -> None:
    counts = {c.collection.value: c.copied for c in done.migration.collections}
    names = ", ".join(f"{done.target.collection_prefix}_{name}" for name in counts)
    lines = [
        f"Migrated: {counts.get('chunks', 0)} chunk, {counts.get('entities', 0)} entity, "
        f"{counts.get('communities', 0)} community and {counts.get('facts', 0)} fact vectors copied to {names} at "
        f"{done.where}, each holding exactly the points copied; nothing was embedded again.",
        *(
            f"Not copied: {c.left_out} {c.collection.value} points of the Edge shards that no graph record names "
            "(left by an ingestion stopped mid-write; they were not part of the data dir's graph)."
            for c in done.migration.collections
            if c.left_out > 0
        ),
        f"The data dir {done.data_dir} now keeps its vectors on the Qdrant server: run every agrag command (and "
        f"agrag serve) with {' '.join(done.overrides)} and {done.variable}={done.where} set; without the override a "
        "command is refused.",
    ]
    if done.kept_shards is not None:
        lines.append(
            f"The Qdrant Edge shards were kept at {done.kept_shards}; nothing reads them any more: delete that folder "
            "when you no longer need it."
        )
    for line in lines:
        console.print(line, markup=False, highlight=False, soft_wrap=True)
