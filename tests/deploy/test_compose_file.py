"""docker-compose.yml, the Dockerfile and agrag.env.example, read as a user's Docker engine would read them.

No Docker engine runs here, so nothing is built or started: the checks are that every variable the files set is a
real agrag or Prefect setting (a misspelt name would be ignored without a word), that images are pinned, and that
the agrag service's command is one `agrag serve` accepts with overrides that compose.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml
from prefect.settings import Settings as PrefectSettings
from prefect.settings.legacy import _get_valid_setting_names

from agrag.pipelines.config_loader import load_config
from agrag.pipelines.settings import AgragSettings, EvalSettings, RetrievalSettings

REPO = Path(__file__).resolve().parents[2]
COMPOSE = yaml.safe_load((REPO / "docker-compose.yml").read_text())
# Variables of other tools, each set on purpose (telemetry off, offline model loading, Python's own).
OTHER_TOOLS = {
    "DO_NOT_TRACK",
    "HAYSTACK_TELEMETRY_ENABLED",
    "HF_HUB_OFFLINE",
    "TRANSFORMERS_OFFLINE",
    "PYTHONDONTWRITEBYTECODE",
    "PYTHONUNBUFFERED",
    "PIP_NO_CACHE_DIR",
    "PIP_DISABLE_PIP_VERSION_CHECK",
}


def _env_names(model: type, prefix: str) -> set[str]:
    return {f"{prefix}{name}".upper() for name in model.model_fields}  # type: ignore[attr-defined]


AGRAG_NAMES = (
    _env_names(AgragSettings, "AGRAG_")
    | _env_names(EvalSettings, "AGRAG_EVAL_")
    | _env_names(RetrievalSettings, "RETRIEVAL_")
)
PREFECT_NAMES = set(_get_valid_setting_names(PrefectSettings))


def _unknown(names: set[str]) -> set[str]:
    return {n for n in names if n not in AGRAG_NAMES | PREFECT_NAMES | OTHER_TOOLS}


def test_every_variable_the_compose_file_sets_is_a_real_setting() -> None:
    names = {name for service in COMPOSE["services"].values() for name in service.get("environment", {})}
    assert {"AGRAG_QDRANT_URL", "AGRAG_DATA_DIR", "PREFECT_API_URL", "PREFECT_UI_API_URL"} <= names
    assert _unknown(names) == set()


def test_every_variable_of_the_env_file_and_the_dockerfile_is_a_real_setting() -> None:
    example = (REPO / "agrag.env.example").read_text()
    in_env_file = set(re.findall(r"^#? ?([A-Z][A-Z0-9_]+)=", example, flags=re.M))
    dockerfile = (REPO / "Dockerfile").read_text()
    in_dockerfile = set(re.findall(r"\b([A-Z][A-Z0-9_]+)=", dockerfile.split("RUN pip install torch")[0]))
    assert "AGRAG_API_TOKENS" in in_env_file and "AGRAG_DATA_DIR" in in_dockerfile
    assert _unknown(in_env_file | in_dockerfile) == set()


@pytest.mark.parametrize("service", sorted(COMPOSE["services"]))
def test_images_are_pinned(service: str) -> None:
    image = COMPOSE["services"][service]["image"]
    name, _, tag = image.rpartition(":")
    assert name and re.match(r"v?\d+\.\d+\.\d+", tag), f"{service}: {image} is not pinned to a release"


def test_the_agrag_service_serves_the_deployment_over_the_qdrant_server() -> None:
    agrag = COMPOSE["services"]["agrag"]
    command = agrag["command"]
    assert command[:1] == ["serve"] and command[command.index("--deployment") + 1] == "agrag-ingest"
    overrides = [part for part in command if "=" in part]
    assert load_config(overrides).vector_store.backend == "qdrant"
    assert agrag["environment"]["AGRAG_QDRANT_URL"].startswith("http://qdrant:")
    assert agrag["environment"]["PREFECT_API_URL"].startswith("http://prefect:")
    assert {"qdrant", "prefect"} <= set(agrag["depends_on"])
    for dependency in ("qdrant", "prefect"):
        assert "healthcheck" in COMPOSE["services"][dependency], dependency


def _compose_command() -> list[str]:
    """`docker compose` (the plugin) or `docker-compose` (the distribution's package), whichever is installed."""
    if shutil.which("docker"):
        plugin = subprocess.run(["docker", "compose", "version"], capture_output=True, text=True, check=False)
        if plugin.returncode == 0:
            return ["docker", "compose"]
    if shutil.which("docker-compose"):
        return ["docker-compose"]
    pytest.fail("Neither `docker compose` nor `docker-compose` is installed: `make test` installs docker-compose.")


def test_docker_compose_validates_the_file(tmp_path: Path) -> None:
    # compose reads agrag.env next to the file: the example stands in for the user's copy
    shutil.copy(REPO / "docker-compose.yml", tmp_path / "docker-compose.yml")
    shutil.copy(REPO / "agrag.env.example", tmp_path / "agrag.env")
    done = subprocess.run(
        [*_compose_command(), "-f", str(tmp_path / "docker-compose.yml"), "config"],
        capture_output=True,
        text=True,
        check=False,
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    resolved = yaml.safe_load(done.stdout)
    assert set(resolved["services"]) == {"agrag", "qdrant", "prefect", "dask-scheduler", "dask-worker"}
    for name in ("dask-scheduler", "dask-worker"):  # only with `--profile dask`
        assert resolved["services"][name]["profiles"] == ["dask"]
    assert resolved["services"]["agrag"]["environment"]["AGRAG_API_TOKENS"] == "change-me-to-a-long-random-token"


def test_the_dask_workers_run_the_agrag_image_at_the_address_the_env_file_names() -> None:
    services = COMPOSE["services"]
    agrag_image = services["agrag"]["image"]
    assert services["dask-scheduler"]["image"] == services["dask-worker"]["image"] == agrag_image
    port = services["dask-scheduler"]["command"][services["dask-scheduler"]["command"].index("--port") + 1]
    assert services["dask-worker"]["entrypoint"][-1] == f"tcp://dask-scheduler:{port}"
    example = (REPO / "agrag.env.example").read_text()
    assert f"# AGRAG_DASK_ADDRESS=tcp://dask-scheduler:{port}" in example
    assert (
        services["dask-worker"]["environment"]["PREFECT_API_URL"] == services["agrag"]["environment"]["PREFECT_API_URL"]
    )
