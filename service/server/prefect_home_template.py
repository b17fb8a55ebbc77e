"""``PrefectHomeTemplate``: a migrated Prefect database kept once per Prefect version and copied into new homes.

A private Prefect server on a new ``PREFECT_HOME`` spends about 5 of its 8 seconds of start-up here migrating an
empty SQLite database and registering Prefect's block types. Both give the same result in every new home, so the
first server of a Prefect version leaves a copy of its freshly started database (and the memo file that records the
block registration) in a cache folder, and every later new home starts from that copy: about 3 seconds instead of 8.
The copy is only a shortcut: when it cannot be read or written, the server starts as it always did.
"""

from __future__ import annotations

import logging
import os
import shutil
import sqlite3
import tempfile
from contextlib import closing
from pathlib import Path

import prefect

logger = logging.getLogger(__name__)

DEFAULT_FOLDER = Path.home() / ".cache" / "agrag" / "prefect"
DATABASE = "prefect.db"
MEMO = "memo_store.toml"  # Prefect's record that the block types are registered (PREFECT_MEMO_STORE_PATH)


class PrefectHomeTemplate:
    """The migrated database of this Prefect version, in ``folder`` (default ``~/.cache/agrag/prefect``).

    Usage:
        ```python
        template = PrefectHomeTemplate()
        template.seed(home)   # before the server starts: copies the template into a home with no database yet
        ...                   # the server starts and answers
        template.keep(home)   # after: the first new home of this Prefect version becomes the template
        ```
    """

    def __init__(self, folder: Path = DEFAULT_FOLDER) -> None:
        self.folder = Path(folder).expanduser()

    @property
    def path(self) -> Path:
        """The template of the installed Prefect version (a folder holding ``prefect.db``)."""
        return self.folder / f"prefect-{prefect.__version__}"

    def seed(self, home: Path) -> bool:
        """Copy the template into ``home`` if ``home`` has no database yet and a template exists; True if copied."""
        if (home / DATABASE).exists() or not (self.path / DATABASE).is_file():
            return False
        if not _sound(self.path / DATABASE):
            logger.warning("The Prefect database template %s is damaged; starting without it", self.path)
            return False
        try:
            home.mkdir(parents=True, exist_ok=True)
            for name in (MEMO, DATABASE):  # the database last: a home with one was seeded whole
                if (self.path / name).is_file():
                    shutil.copyfile(self.path / name, home / f"{name}.seeding")
                    os.replace(home / f"{name}.seeding", home / name)
        except OSError as exc:
            logger.warning("Could not copy the Prefect database template %s (%s); starting without it", self.path, exc)
            for name in (MEMO, DATABASE):
                (home / f"{name}.seeding").unlink(missing_ok=True)
            return False
        return True

    def keep(self, home: Path) -> None:
        """Make ``home``'s database the template of this Prefect version if there is none yet.

        Call it only for a home that had no database before its server started, right after that server answers:
        its database is then migrated and holds nothing but Prefect's block types (a used home holds its runs).
        The copy is a consistent snapshot (SQLite's backup), written beside the template and renamed into place, so
        concurrent starts never see half a template.
        """
        if self.path.exists() or not (home / DATABASE).is_file():
            return
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            staging = Path(tempfile.mkdtemp(prefix=".staging-", dir=self.folder))
            try:
                source, copy = sqlite3.connect(home / DATABASE), sqlite3.connect(staging / DATABASE)
                with closing(source), closing(copy):
                    source.backup(copy)
                if not _sound(staging / DATABASE):
                    return
                if (home / MEMO).is_file():
                    shutil.copyfile(home / MEMO, staging / MEMO)
                os.rename(staging, self.path)  # fails if another process made it first: theirs is as good
            finally:
                shutil.rmtree(staging, ignore_errors=True)
        except (OSError, sqlite3.Error) as exc:
            logger.info("Did not keep a Prefect database template in %s: %s", self.folder, exc)


def _sound(database: Path) -> bool:
    """Whether ``database`` is an SQLite file that passes SQLite's quick integrity check."""
    try:
        with closing(sqlite3.connect(f"file:{database}?mode=ro", uri=True)) as connection:
            return bool(connection.execute("PRAGMA quick_check").fetchone() == ("ok",))
    except sqlite3.Error:
        return False
