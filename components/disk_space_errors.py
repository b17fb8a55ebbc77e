"""The error of a disk too full for what a command would write (its own module: ``components/errors.py`` is full)."""

from __future__ import annotations

from agrag.components.errors import StoreError

NOTHING_CHANGED = "Nothing was changed."
COMMITTED_STAYS = "Nothing of this step was written, and everything committed before stays."
FAILED_STEP = "The step that met the full disk is not committed; everything committed before stays."


def size_text(size: int) -> str:
    """A size as a person reads it: ``512 KB``, ``3.5 MB``, ``64 MB``, ``1.2 GB``."""
    kib, mib = 1024, 1024 * 1024
    if size < mib:
        return f"{max(0, size) // kib} KB"
    if size < 10 * mib:
        return f"{size / mib:.1f} MB"
    if size < 1024 * mib:
        return f"{size // mib} MB"
    return f"{size / (1024 * mib):.1f} GB"


class NoSpaceLeftError(StoreError):
    """The disk of the data dir lacks the room a step needs: refused before it wrote, or stopped when the disk filled.

    A command checks the free space before each thing it writes (and a store that still meets a full disk is turned
    into this error, never a crash), so what was stored before stays as it was.

    Attributes:
        where: The data dir (the disk that holds it is the one to free).
        needed: Bytes the step needs free.
        free: Bytes free when it was checked.
    """

    def __init__(
        self, where: object, doing: str, needed: int, free: int, kept: str = NOTHING_CHANGED, *, ran_out: bool = False
    ) -> None:
        self.where = where
        self.doing = doing
        self.needed = needed
        self.free = free
        fix = (
            f"Free at least {size_text(max(needed - free, 1))} there (delete files, or set AGRAG_DATA_DIR to a data "
            "dir on a larger disk), then run the command again."
        )
        if ran_out:
            message = (
                f"The disk of {where} ran out of space while trying to {doing} ({size_text(free)} free now; "
                f"it needs about {size_text(needed)}). {kept} {fix}"
            )
        else:
            message = (
                f"Not enough free disk space to {doing}: it needs about {size_text(needed)} free on the disk of "
                f"{where}, which has {size_text(free)}. {kept} {fix}"
            )
        super().__init__(message)
