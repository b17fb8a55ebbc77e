"""``agrag repair``: embed again, from the graph, the vector collections a data dir lost.

A read command refuses a data dir whose vector collections lack points its graph says they hold
(``CorruptedStoreError``, naming this command); ``agrag repair`` is the one command that rebuilds them. It runs
in-process only: when ``agrag serve`` holds the data dir, stop the server first (it refuses a damaged data dir too).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

from agrag.service.cli_support import console, fail, server_client

if TYPE_CHECKING:
    from agrag.pipelines.runtime import Runtime

Overrides = Annotated[
    list[str] | None,
    typer.Argument(help="Hydra overrides the data dir was built with, e.g. vector_store=qdrant."),
]


def repair(
    overrides: Overrides = None,
    everything: Annotated[
        bool, typer.Option("--all", help="Embed every collection again, not only the damaged ones.")
    ] = False,
) -> None:
    """Embed the lost vectors again from the graph (chunks, entities, community reports, facts); the graph is unchanged.

    A data dir made before facts were searchable gets its fact vectors this way.
    """
    # imported here so that `agrag --help` loads no store or model code
    from agrag.components.errors import AgragError, StoreLockedError  # noqa: PLC0415

    server = server_client()
    if server is not None:
        fail(
            StoreLockedError(
                f"agrag serve holds the data dir {server.data_dir}: stop it, run `agrag repair`, then start it again."
            )
        )
    try:
        from agrag.flows.vector_repair import plan_repair, repair_vectors  # noqa: PLC0415
        from agrag.pipelines.runtime import open_runtime  # noqa: PLC0415

        with open_runtime(list(overrides or []), check_vectors=False) as runtime:
            plan = plan_repair(runtime.store, everything=everything)
            if plan.contents:
                console.print(_room_line(runtime, plan.room, plan.doing), markup=False, highlight=False)
            embedder = runtime.ingest_embedder(progress_bar=False)
            done = repair_vectors(
                runtime.store,
                embedder,
                plan=plan,
                progress=lambda name, n: console.print(f"{name}: {n} points written", markup=False),
            )
            counts = runtime.store.counts()
            set_aside = sorted(runtime.settings.agrag.vectors_dir.glob("*.damaged-*"))
    except AgragError as exc:
        fail(exc)
    if not done.written:
        console.print("Nothing to repair: every vector collection holds what the graph says it should.", markup=False)
        return
    for damage in done.damage:
        console.print(f"Found: {damage}.", markup=False, highlight=False)
    written = ", ".join(f"{n} {name}" for name, n in done.written.items())
    console.print(
        f"Repaired: embedded again {written}. The data dir now holds {counts['chunk_vectors']} chunk, "
        f"{counts['entity_vectors']} entity, {counts['community_vectors']} community and {counts['fact_vectors']} "
        "fact vectors.",
        markup=False,
        highlight=False,
    )
    for folder in set_aside:
        console.print(
            f"A shard that could not be opened was kept at {folder}; delete it when no longer needed.", markup=False
        )


def _room_line(runtime: Runtime, room: int, doing: str) -> str:
    """What the repair will write and the disk room it needs, said before it starts (it stops here without it)."""
    from agrag.components.disk_space_errors import size_text  # noqa: PLC0415

    space = runtime.store.space
    if space is None:
        return f"Repair: {doing}."
    free = space.free()
    have = f"{size_text(free)} free" if free is not None else "no size limit"
    needed = size_text(space.min_free + room)
    return f"Repair: {doing}; this needs about {needed} free on the disk of {space.data_dir} ({have})."
