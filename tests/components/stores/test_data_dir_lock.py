import subprocess
import sys
from pathlib import Path

import pytest

from agrag.components.embedders.sentence_transformers_text_embedder import SentenceTransformersTextEmbedder
from agrag.components.errors import StoreLockedError
from agrag.components.stores.data_dir_lock import DataDirLock
from agrag.pipelines.config_loader import load_config
from agrag.pipelines.settings import AgragSettings
from agrag.pipelines.store_factory import open_knowledge_store

HOLD = (
    "import sys, time\n"
    "from pathlib import Path\n"
    "from agrag.components.stores.data_dir_lock import DataDirLock\n"
    "with DataDirLock(Path(sys.argv[1])):\n"
    "    print('HELD', flush=True)\n"
    "    time.sleep(60)\n"
)


def test_a_second_process_is_told_which_process_holds_the_data_dir(
    tmp_path: Path, embedder: SentenceTransformersTextEmbedder
) -> None:
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD, str(tmp_path), "ingest-for-test"], stdout=subprocess.PIPE, text=True
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "HELD"
        named = rf"in use by process {holder.pid} \(-c .* ingest-for-test\), running since"
        with pytest.raises(StoreLockedError, match=named):
            open_knowledge_store(AgragSettings(data_dir=tmp_path), load_config().vector_store, embedder)
    finally:
        holder.kill()
        holder.wait()
    # the operating system released the lock with the killed process: the store opens now
    with open_knowledge_store(AgragSettings(data_dir=tmp_path), load_config().vector_store, embedder) as store:
        assert store.counts()["Document"] == 0


def test_the_lock_is_released_on_close_and_refused_while_held(tmp_path: Path) -> None:
    with DataDirLock(tmp_path), pytest.raises(StoreLockedError, match="AGRAG_DATA_DIR"):
        DataDirLock(tmp_path).acquire()
    with DataDirLock(tmp_path):
        pass
