"""A files root exposing the disk (``/``, the home folder, a folder holding it) is refused wherever it enters."""

import os
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agrag.components.errors import ConfigError
from agrag.components.loaders.files_root import check_files_root, resolve_ingest_folder
from agrag.components.loaders.folder_loader import FolderLoader
from agrag.components.loaders.loader_errors import FilesRootRefusedError
from agrag.pipelines.settings import AgragSettings, load_settings
from agrag.service.cli import app

AGRAG = str(Path(sys.executable).with_name("agrag"))
FIX = "to a folder that holds only the documents to ingest"


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A home folder of this test's own (``$HOME``), with a folder of documents in it."""
    home = tmp_path / "users" / "ada"
    (home / "documents").mkdir(parents=True)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("AGRAG_DATA_DIR", str(tmp_path / "data"))
    return home


@pytest.mark.parametrize(
    ("given", "why"),
    [
        ("/", "it is the root of the file system"),
        ("~", "it is your home folder"),
        ("{home}", "it is your home folder"),
        ("{home}/documents/..", "it is your home folder"),
        ("{home}/..", "it is a folder that holds your home folder ({home})"),
        ("{tmp}", "it is a folder that holds your home folder ({home})"),
        ("{tmp}/to_home", "it is your home folder"),
        ("{tmp}/to_slash", "it is the root of the file system"),
    ],
)
def test_the_disk_and_the_home_folder_are_refused(home: Path, tmp_path: Path, given: str, why: str) -> None:
    (tmp_path / "to_home").symlink_to(home, target_is_directory=True)
    (tmp_path / "to_slash").symlink_to("/", target_is_directory=True)
    root = given.format(home=home, tmp=tmp_path)
    with pytest.raises(FilesRootRefusedError) as refused:
        check_files_root(Path(root))
    message = str(refused.value)
    assert isinstance(refused.value, ConfigError)
    assert f"{why.format(home=home)}, so every file in it" in message
    assert "(AGRAG_FILES_ROOT)" in message and f"Set AGRAG_FILES_ROOT {FIX}" in message


def test_a_folder_of_documents_is_accepted(home: Path, tmp_path: Path) -> None:
    assert check_files_root(home / "documents") == home / "documents"
    assert check_files_root(tmp_path / "users" / "bob") == tmp_path / "users" / "bob", "a sibling of the home"


def test_every_way_in_refuses_it(home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(FilesRootRefusedError):
        AgragSettings(files_root=home, _env_file=None)
    with pytest.raises(FilesRootRefusedError):
        resolve_ingest_folder("documents", home)
    with pytest.raises(FilesRootRefusedError):
        FolderLoader().run(root=str(home / "documents"), files_root=str(home))
    monkeypatch.setenv("AGRAG_FILES_ROOT", "/")
    with pytest.raises(FilesRootRefusedError, match=r"Refusing '/' as the files root \(AGRAG_FILES_ROOT\)"):
        load_settings()


@pytest.mark.parametrize("command", [["ingest", "documents"], ["serve", "--port", "0"], ["documents"], ["status"]])
@pytest.mark.parametrize("root", ["/", "{home}"])
def test_the_cli_refuses_it_with_exit_code_2_and_no_traceback(
    home: Path, monkeypatch: pytest.MonkeyPatch, command: list[str], root: str
) -> None:
    monkeypatch.setenv("AGRAG_FILES_ROOT", root.format(home=home))
    result = CliRunner().invoke(app, command)
    assert result.exit_code == 2, result.output
    assert isinstance(result.exception, SystemExit), "a clean exit, not an exception"
    assert "Traceback" not in result.output
    assert "as the files root (AGRAG_FILES_ROOT)" in result.output and FIX in result.output


@pytest.mark.needs_prefect  # runs `agrag mcp` in a subprocess
@pytest.mark.parametrize("root", ["/", "{home}"])
def test_agrag_mcp_refuses_it_as_files_root(home: Path, root: str) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AGRAG_", "RETRIEVAL_"))}
    env["AGRAG_DATA_DIR"] = str(home.parent / "data")
    given = root.format(home=home)
    result = subprocess.run(
        [AGRAG, "mcp", "--allow-write", "--files-root", given],
        capture_output=True,
        text=True,
        env=env,
        stdin=subprocess.DEVNULL,
        timeout=120,
        check=False,
    )
    assert result.returncode == 2, result.stderr
    assert f"Refusing {given!r} as the files root (--files-root)" in result.stderr
    assert f"Set --files-root {FIX}" in result.stderr and "Traceback" not in result.stderr
    assert result.stdout == "", "nothing but the protocol may reach stdout"
