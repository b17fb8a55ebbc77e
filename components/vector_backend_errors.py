"""Errors of a data dir's vector backend: opening it with the other one, and moving its vectors to a Qdrant server.

Their own module: ``components/errors.py`` is at its size limit.
"""

from __future__ import annotations

from agrag.components.errors import ConfigError, StoreError


class VectorBackendMismatchError(ConfigError):
    """The data dir keeps its vectors in one backend (``vector_store=...``), and a command asked for the other.

    Attributes:
        recorded: The backend the data dir records (``edge`` or ``qdrant``).
        asked: The backend the command was composed with.
    """

    def __init__(self, recorded: str, asked: str) -> None:
        self.recorded = recorded
        self.asked = asked
        super().__init__(
            f"This data dir keeps its vectors in vector_store={recorded}, but the command asked for "
            f"vector_store={asked}. Add the override vector_store={recorded} (every agrag command takes it)."
        )


class AlreadyOnQdrantServerError(ConfigError):
    """``agrag migrate-vectors`` on a data dir whose vectors already live on a Qdrant server: nothing to migrate."""

    def __init__(self, data_dir: object, leftover_shards: object | None = None) -> None:
        self.data_dir = data_dir
        leftover = (
            f" The Qdrant Edge shards at {leftover_shards} are no longer read; delete them when no longer needed."
            if leftover_shards is not None
            else ""
        )
        super().__init__(
            f"The data dir {data_dir} already keeps its vectors on a Qdrant server (vector_store=qdrant): there is "
            f"nothing to migrate. Run the other commands with the override vector_store=qdrant and AGRAG_QDRANT_URL "
            f"set.{leftover}"
        )


class ForeignTargetPointsError(ConfigError):
    """The target Qdrant collection holds points that are not this data dir's (another data dir's, same prefix).

    Raised before anything is written. Attributes name the collection and the counts.
    """

    def __init__(self, name: str, where: str, held: int, ours: int, prefix: str) -> None:
        self.name = name
        self.held = held
        self.ours = ours
        super().__init__(
            f"The Qdrant collection {name} at {where} holds {held} points, {held - ours} of which are not this data "
            f"dir's: it belongs to another data dir that uses vector_store.collection_prefix={prefix}. Nothing was "
            "copied. Give this data dir a prefix of its own, e.g. vector_store.collection_prefix=<name> (and use that "
            "override with every later command), or, if the collection is left over from an earlier migration of "
            "this data dir that it no longer matches, delete it on the server and run `agrag migrate-vectors` again."
        )


class MigrationIncompleteError(StoreError):
    """After copying, a target collection does not hold exactly the points copied; the data dir was not switched."""

    def __init__(self, name: str, where: str, held: int, copied: int) -> None:
        self.name = name
        self.held = held
        self.copied = copied
        cause = (
            "another process wrote to it during the migration"
            if held > copied
            else "the server did not keep every point written"
        )
        super().__init__(
            f"After the migration the Qdrant collection {name} at {where} holds {held} points, but {copied} were "
            f"copied into it ({cause}). The data dir still keeps its vectors in vector_store=edge and nothing of it "
            "was changed. Make sure no other data dir writes to that collection (vector_store.collection_prefix), "
            "then run `agrag migrate-vectors` again."
        )
