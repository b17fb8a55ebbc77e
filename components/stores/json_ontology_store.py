"""``JsonOntologyStore``: the ontology additions of a data dir, in one small JSON file written atomically."""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from pydantic import ValidationError

from agrag.components.data_models.ontology_additions import OntologyAdditions
from agrag.components.disk_space_errors import NOTHING_CHANGED
from agrag.components.errors import CorruptedStoreError, StoreError
from agrag.components.stores.disk_space import DiskSpace, is_disk_full

FORMAT_VERSION = 1
T = TypeVar("T")


class JsonOntologyStore:
    """The labels and relation patterns ``set_ontology`` added, kept in ``<data dir>/ontology.json``.

    A write goes to a temporary file that is flushed to disk and then renamed over the old one, so a reader (or a
    process killed mid-write) sees the old additions or the new ones, never half of them. Writes of one process
    are serialized; the data dir lock keeps other processes out. The file is read on every ``read`` (it is small),
    so what one request added the next ingestion sees.

    Usage:
        ```python
        store = JsonOntologyStore(Path(".agrag/ontology.json"))
        store.write(OntologyAdditions(labels=(LabelSpec(label="Vendor"),)))
        print(store.read().labels)
        ```
    """

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self._lock = threading.RLock()

    def read(self) -> OntologyAdditions:
        """The additions; none when the file does not exist yet.

        Raises:
            CorruptedStoreError: the file is not the JSON this store writes (edited by hand, or damaged).
        """
        try:
            text = self.path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return OntologyAdditions()
        except OSError as exc:
            raise StoreError(f"Cannot read the ontology additions {self.path}: {exc}.") from exc
        try:
            data = json.loads(text)
            return OntologyAdditions.model_validate({k: v for k, v in data.items() if k != "format"})
        except (ValueError, AttributeError, ValidationError) as exc:
            raise CorruptedStoreError(
                self.path.parent,
                f"the ontology additions {self.path.name} cannot be read ({str(exc).splitlines()[0]})",
                "Fix the file by hand (a JSON object with the lists 'labels' and 'relations'), or delete it and add "
                "the labels and relations again with `agrag ontology add`.",
            ) from exc

    def update(self, change: Callable[[OntologyAdditions], tuple[OntologyAdditions, T]]) -> T:
        """Read, ``change`` and write back as one step of this process (two updates never interleave).

        ``change`` returns the new additions and a result; the file is written only when the additions differ.
        """
        with self._lock:
            current = self.read()
            updated, result = change(current)
            if updated != current:
                self.write(updated)
            return result

    def write(self, additions: OntologyAdditions) -> None:
        """Replace the stored additions with ``additions``, atomically.

        Raises:
            NoSpaceLeftError: the disk is full (the stored additions stay as they were).
            StoreError: the file cannot be written (a read-only data dir).
        """
        data = {"format": FORMAT_VERSION, **additions.model_dump(mode="json")}
        partial = self.path.with_name(f".{self.path.name}.partial")
        with self._lock:
            try:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                with partial.open("w", encoding="utf-8") as out:
                    json.dump(data, out, ensure_ascii=False, indent=2)
                    out.flush()
                    os.fsync(out.fileno())
                os.replace(partial, self.path)
            except OSError as exc:
                partial.unlink(missing_ok=True)
                if is_disk_full(exc):  # the file written before stays whole: it is replaced only once written
                    raise DiskSpace(self.path.parent).ran_out("write the ontology additions", NOTHING_CHANGED) from exc
                raise StoreError(f"Cannot write the ontology additions {self.path}: {exc}.") from exc
