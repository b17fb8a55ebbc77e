"""A new Prefect home starts from the migrated database the first one left, and a damaged template is ignored.

And a server started early, while a command still imports and checks its input, stops if the command fails.
"""

import shutil
import sqlite3
from contextlib import closing
from pathlib import Path

import pytest
from prefect import flow
from prefect.settings import PREFECT_API_URL, temporary_settings

from agrag.service.server.prefect_home_template import PrefectHomeTemplate
from agrag.service.server.private_prefect import PrivatePrefectServer, starting_prefect_api


@flow(name="template-probe")
def probe(value: int) -> int:
    return value + 1


def rows(database: Path, table: str) -> int:
    with closing(sqlite3.connect(database)) as connection:
        return int(connection.execute(f"SELECT count(*) FROM {table}").fetchone()[0])


def migration(database: Path) -> str:
    with closing(sqlite3.connect(database)) as connection:
        return str(connection.execute("SELECT version_num FROM alembic_version").fetchone()[0])


def probe_on(server: PrivatePrefectServer, value: int) -> int:
    """Run the probe flow once on ``server`` (started here, stopped after)."""
    url = server.start()
    try:
        with temporary_settings(updates={PREFECT_API_URL: url}):
            return probe(value)
    finally:
        server.stop()


def migrated_stub(home: Path) -> None:
    """A home whose database has a migration table, as a started server's has."""
    home.mkdir()
    with closing(sqlite3.connect(home / "prefect.db")) as connection:
        connection.execute("CREATE TABLE alembic_version (version_num TEXT)")
        connection.commit()


@pytest.mark.needs_prefect
def test_the_first_new_home_leaves_a_template_and_the_next_runs_flows_on_a_copy(tmp_path: Path) -> None:
    template = PrefectHomeTemplate(tmp_path / "cache")
    first = PrivatePrefectServer(tmp_path / "first", template=template)
    first.start()
    first.stop()
    kept = template.path / "prefect.db"
    assert kept.is_file() and (template.path / "memo_store.toml").is_file()
    assert migration(kept) == migration(tmp_path / "first" / "prefect.db")
    assert rows(kept, "block_type") > 0 and rows(kept, "flow_run") == 0

    second_home = tmp_path / "second"
    assert template.seed(second_home) and (second_home / "prefect.db").is_file()
    assert not template.seed(second_home), "a home with a database is never overwritten"
    second = PrivatePrefectServer(second_home, template=template)
    assert probe_on(second, 41) == 42
    assert rows(second_home / "prefect.db", "flow_run") == 1
    assert rows(kept, "flow_run") == 0, "the template is copied, never used in place"
    assert [p.name for p in template.folder.iterdir()] == [template.path.name], "no staging folder is left"


def test_a_damaged_template_is_not_copied_nor_replaced(tmp_path: Path) -> None:
    template = PrefectHomeTemplate(tmp_path / "cache")
    template.path.mkdir(parents=True)
    (template.path / "prefect.db").write_bytes(b"not a database" * 100)
    home = tmp_path / "home"
    assert not template.seed(home) and not (home / "prefect.db").exists(), "the server migrates its own database"
    migrated_stub(home)
    template.keep(home)
    assert (template.path / "prefect.db").read_bytes().startswith(b"not a database"), "an existing one is kept"


def test_an_unwritable_cache_folder_leaves_no_template_and_no_error(tmp_path: Path) -> None:
    blocked = tmp_path / "cache"
    blocked.write_text("a file where the folder should be", encoding="utf-8")
    template = PrefectHomeTemplate(blocked)
    home = tmp_path / "home"
    migrated_stub(home)
    template.keep(home)
    assert blocked.is_file() and not template.seed(tmp_path / "other")


@pytest.mark.needs_prefect
def test_a_used_home_never_becomes_the_template(tmp_path: Path) -> None:
    template = PrefectHomeTemplate(tmp_path / "cache")
    home = tmp_path / "used"
    assert probe_on(PrivatePrefectServer(home, template=template), 1) == 2
    shutil.rmtree(template.folder)  # as for a data dir made before templates existed
    again = PrivatePrefectServer(home, template=template)
    again.start()
    again.stop()
    assert rows(home / "prefect.db", "flow_run") == 1
    assert not template.path.exists(), "a database holding this data dir's runs is not copied into new homes"


@pytest.mark.needs_prefect
def test_a_server_started_early_is_stopped_when_the_command_fails_before_its_first_flow(tmp_path: Path) -> None:
    """`agrag ingest` starts the server before its slow imports and input checks: a typo found then stops it."""
    home = tmp_path / "home"
    with temporary_settings(restore_defaults={PREFECT_API_URL}):
        with pytest.raises(ValueError, match="typo"), starting_prefect_api(home):
            url = str(PREFECT_API_URL.value())
            assert url.startswith("http://127.0.0.1:") and url.endswith("/api")  # known before the server answers
            (record,) = (home / "agrag-servers").iterdir()
            pid = int(record.stem)
            assert Path(f"/proc/{pid}").exists(), "the server is loading while the command goes on"
            raise ValueError("a typo in an override")
        assert not Path(f"/proc/{pid}").exists(), "the server was stopped (and reaped)"
        assert not list((home / "agrag-servers").iterdir()), "its record goes with it"
        assert PREFECT_API_URL.value() is None
