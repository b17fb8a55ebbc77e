"""Settings from the environment and ``.env``: paths, URLs, secrets, and the ``RETRIEVAL_*`` tuning knobs."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated

from pydantic import Field, SecretStr, ValidationError, ValidationInfo, field_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict

from agrag.components import defaults
from agrag.components.data_models.query_analysis import QueryAnalyzerKind
from agrag.components.errors import ConfigError
from agrag.components.loaders.files_root import check_files_root

# A host as a Host header or an origin names it: a bracketed IPv6 address, or a DNS name or IPv4 address (lower case).
HOST_NAME = r"(?:\[[0-9a-f:.]+\]|[a-z0-9_](?:[a-z0-9_.-]*[a-z0-9_])?)"
_HOST_ENTRY = re.compile(rf"{HOST_NAME}(?::[0-9]{{1,5}})?")
_ORIGIN_ENTRY = re.compile(rf"https?://{HOST_NAME}(?::[0-9]{{1,5}})?")
_ENTRY_FORMS = {
    "allowed_hosts": (
        _HOST_ENTRY,
        "is not a host name: write `name` or `name:port` (an IPv6 address in brackets, `[::1]:8765`)",
    ),
    "allowed_origins": (_ORIGIN_ENTRY, "is not an origin: write `https://name` or `http://name:port`, with no path"),
}


class AgragSettings(BaseSettings):
    """Where agrag keeps its data and how it reaches services (``AGRAG_*`` variables)."""

    model_config = SettingsConfigDict(env_prefix="AGRAG_", env_file=".env", extra="ignore", frozen=True)

    data_dir: Path = Field(Path(".agrag"), description="Folder of the embedded graph and vector stores.")
    config_dir: Path | None = Field(
        None, description="A folder of your own YAML (for example recipe/mine.yaml), searched before the built-in conf."
    )
    embedding_cache_dir: Path | None = Field(
        None, description="A folder where computed embeddings are kept, so the same text is never embedded twice."
    )
    embedding_cache_queries: int = Field(
        defaults.EMBEDDING_CACHE_QUERIES,
        ge=0,
        description="How many distinct query vectors the embedding cache keeps (the oldest go first; 0 keeps none). "
        "Passage vectors are always kept.",
    )
    onnx_dir: Path | None = Field(
        None,
        description="Where embedder.backend=onnx and onnx_int8 keep the ONNX export of the embedding model and its "
        "int8 form, made from the local weights on first use (default ~/.cache/agrag/onnx).",
    )
    qdrant_url: str | None = Field(None, description="URL of a Qdrant server, for vector_store=qdrant.")
    qdrant_api_key: SecretStr | None = Field(None, description="API key of that Qdrant server, if it needs one.")
    qdrant_path: Path | None = Field(
        None,
        description="For vector_store=qdrant without a server: a folder for qdrant-client's local mode (brute-force "
        "search held in memory; for tests and small experiments, not for production).",
    )
    dask_address: str | None = Field(
        None,
        description="Address of a running Dask scheduler (e.g. tcp://dask-scheduler:8786) whose workers embed every "
        "ingestion of at least ingest.parallel.min_chunks chunks. The workers need agrag installed (the agrag image) "
        "and PREFECT_API_URL set.",
    )
    files_root: Path | None = Field(
        None,
        description="If set, `agrag ingest` reads only folders inside it; paths are resolved against it and may not "
        "leave it.",
    )
    llm_base_url: str | None = Field(
        None,
        description="An OpenAI-compatible endpoint (e.g. http://localhost:11434/v1) for LLM extraction, reports "
        "and `agrag ask`.",
    )
    llm_model: str = Field("gpt-4o-mini", description="The model name sent to that endpoint.")
    llm_api_key: SecretStr | None = Field(None, description="The endpoint's API key, if it needs one.")
    llm_timeout_seconds: float = Field(120.0, gt=0, description="How long one LLM call may take before a retry.")
    llm_max_retries: int = Field(3, ge=0, description="Retries (with backoff) of a failed or timed-out LLM call.")
    agent_max_tool_calls: int = Field(
        20, ge=1, le=1000, description="`agrag ask`: the most tool calls the agent makes for one question."
    )
    agent_max_tokens: int = Field(
        60_000, ge=100, description="`agrag ask`: the most LLM tokens (prompt and completion) one question may use."
    )
    agent_timeout_seconds: float = Field(
        300.0, gt=0, description="`agrag ask`: how long one question may take, LLM calls and tool calls together."
    )
    agent_max_result_chars: int = Field(
        12_000,
        ge=1000,
        le=1_000_000,
        description="`agrag ask`: tool results longer than this (as JSON characters) are shortened before the LLM "
        "reads them, longest lists first, and marked truncated.",
    )
    kuzu_buffer_pool_mb: int = Field(
        1024,
        ge=64,
        description="The most memory (MiB) the graph store's page cache may take; Kùzu would otherwise take up to "
        "about 80% of the machine's memory in every process.",
    )
    min_free_mb: int = Field(
        defaults.DISK_MIN_FREE_MB,
        ge=0,
        le=1_000_000,
        description="Free space (MiB) the data dir's disk must have before agrag writes to it (a commit batch, a "
        "delete, indexing, a repair); below it the write is refused with NoSpaceLeftError, so a full disk never "
        "crashes a store. Stages that write more add their own estimate. 0 turns the floor off.",
    )
    api_tokens: SecretStr | None = Field(
        None,
        description="Bearer tokens `agrag serve` accepts: `token1,token2` (each sees every document), or a JSON list "
        'of {"name", "token", "documents"} where documents (optional) is the only documents that token may read.',
    )
    api_token_file: Path | None = Field(
        None, description="A file holding the tokens in the same forms as AGRAG_API_TOKENS (JSON list or one a line)."
    )
    api_token: SecretStr | None = Field(
        None,
        description="The token the agrag CLI presents to a running `agrag serve` (default: the server's own local "
        "token, read from the data dir).",
    )
    session_idle_minutes: float = Field(
        30.0, gt=0, description="`agrag serve` ends an evidence session nobody used for this long (minutes)."
    )
    sessions_per_token: int = Field(
        32, ge=1, description="The most evidence sessions one token may hold open on `agrag serve` at once."
    )
    mcp_ledger_capacity: int = Field(
        2000,
        ge=1,
        le=1_000_000,
        description="Evidence items each MCP connection keeps for citing (`agrag serve`'s /mcp, `agrag mcp`'s "
        "default); the oldest read are dropped first, and the reply says so.",
    )
    max_files_per_call: int = Field(
        50,
        ge=1,
        le=100_000,
        description="The most files one ingestion of chosen files (paths and globs: `agrag ingest FOLDER --only`, "
        "the `files` of POST /v1/ingestions, the MCP `ingest` tool) may name.",
    )
    mcp_max_result_chars: int = Field(
        40_000,
        ge=2000,
        le=10_000_000,
        description="MCP tool replies longer than this (as JSON characters) are shortened, longest lists first, and "
        "marked truncated (`agrag serve`'s /mcp, `agrag mcp`'s default).",
    )
    allowed_hosts: Annotated[tuple[str, ...], NoDecode] = Field(
        (),
        description="`agrag serve`: more names clients may reach the server by, comma-separated, each `name` (any "
        "port) or `name:port` (e.g. `agrag.example.com,10.0.0.5:8765`). A request whose Host header names none of "
        "them nor a name derived from --host gets 421 (DNS rebinding). Default: none; the derived names always "
        "stay: 127.0.0.1, localhost and [::1] with the server's port on a loopback or all-interfaces (0.0.0.0, ::) "
        "address, plus the machine's host name and the address a request arrives at on all interfaces; the --host "
        "name or address otherwise.",
    )
    allowed_origins: Annotated[tuple[str, ...], NoDecode] = Field(
        (),
        description="`agrag serve`: browser origins of other sites whose pages may call the server, comma-separated "
        "(e.g. `https://tools.example.com`). Default: none; a page of the server itself (http or https on an "
        "allowed host and port) always may, and a request without an Origin header (curl, the agrag CLI, MCP "
        "clients) is judged by its Host alone. Any other Origin gets 403.",
    )

    @field_validator("allowed_hosts", "allowed_origins", mode="before")
    @classmethod
    def _comma_separated(cls, value: object) -> object:
        """``a, b`` from the environment as ``("a", "b")``, lower case; a list or tuple passes as it is."""
        if isinstance(value, str):
            return tuple(part.strip().lower() for part in value.split(",") if part.strip())
        return value

    @field_validator("allowed_hosts", "allowed_origins")
    @classmethod
    def _entries(cls, entries: tuple[str, ...], info: ValidationInfo) -> tuple[str, ...]:
        """Each entry as its header writes it: ``name`` or ``name:port`` (Host), ``https://name[:port]`` (Origin)."""
        form, why = _ENTRY_FORMS[str(info.field_name)]
        for entry in entries:
            if not form.fullmatch(entry.lower()):
                raise ValueError(f"{entry!r} {why}, comma-separated")
        return tuple(entry.lower() for entry in entries)

    @field_validator("files_root")
    @classmethod
    def _files_root_exposes_no_home(cls, files_root: Path | None) -> Path | None:
        """Refuse ``/``, the home folder and folders holding it: ``FilesRootRefusedError`` (a ``ConfigError``)."""
        if files_root is not None:
            check_files_root(files_root)
        return files_root

    @property
    def graph_path(self) -> Path:
        """The Kùzu database file."""
        return self.data_dir / "graph.kuzu"

    @property
    def vectors_dir(self) -> Path:
        """The folder of the Qdrant Edge shards."""
        return self.data_dir / "vectors"


class RetrievalSettings(BaseSettings):
    """Retrieval constants that deployments tune without touching recipes (``RETRIEVAL_*`` variables)."""

    model_config = SettingsConfigDict(env_prefix="RETRIEVAL_", env_file=".env", extra="ignore", frozen=True)

    rrf_k: int = Field(defaults.RRF_K, ge=1, description="The k of Reciprocal Rank Fusion: 1 / (k + rank).")
    ppr_damping: float = Field(
        defaults.PPR_DAMPING,
        gt=0,
        lt=1,
        description="The ppr method's walk: the chance of following an edge rather than restarting.",
    )
    ppr_temperature: float = Field(
        defaults.PPR_TEMPERATURE,
        gt=0,
        description="The ppr method: lower values let query similarity outweigh the walk more.",
    )
    traversal_depth: int = Field(
        defaults.TRAVERSAL_DEPTH, ge=1, le=5, description="Hops of a recipe's graph walk when bfs_depth is unset."
    )
    traversal_per_hop: int = Field(
        defaults.TRAVERSAL_PER_HOP, ge=1, description="The most relations a graph walk follows per hop."
    )
    reranker_min_score: float | None = Field(
        None, description="Drop results a reranker scores below this, when a recipe sets no min_score."
    )
    cross_encoder_model: Path | None = Field(
        None, description="Folder of a sentence-transformers cross-encoder, for reranker: cross_encoder."
    )
    query_analyzer: QueryAnalyzerKind = Field(
        QueryAnalyzerKind(defaults.QUERY_ANALYZER),
        description="How a search analyses its query (answer type, names, relations; shown on the trace): rules, "
        "llm (the rules when it fails or none is set), or auto (the LLM when AGRAG_LLM_BASE_URL is set, else rules).",
    )
    query_analysis_timeout_seconds: float = Field(
        defaults.QUERY_ANALYSIS_TIMEOUT_SECONDS,
        gt=0,
        description="How long a search waits for the LLM's query analysis (no retries) before the rules answer.",
    )


class EvalSettings(BaseSettings):
    """Where ``agrag eval`` reads benchmark sets and writes its results (``AGRAG_EVAL_*`` variables)."""

    model_config = SettingsConfigDict(env_prefix="AGRAG_EVAL_", env_file=".env", extra="ignore", frozen=True)

    bench_dir: Path = Field(Path("../shared/bench"), description="Folder of the named sets (musique_dev, ...).")
    results_dir: Path = Field(Path("bench/results"), description="Where tables, JSON, JSONL and charts go.")
    cache_dir: Path = Field(
        Path("bench/cache"), description="Passage files, built stores and embeddings, reused while unchanged."
    )


def _load(settings_type: type[BaseSettings], prefix: str) -> BaseSettings:
    try:
        return settings_type()
    except ValidationError as exc:
        problems = "; ".join(f"{prefix}{'_'.join(map(str, e['loc'])).upper()}: {e['msg']}" for e in exc.errors())
        raise ConfigError(f"Invalid environment setting ({problems}). Fix the variable or your .env file.") from exc


def load_agrag_settings() -> AgragSettings:
    """Read ``AGRAG_*`` settings; a bad value raises ``ConfigError`` naming the variable."""
    settings = _load(AgragSettings, "AGRAG_")
    assert isinstance(settings, AgragSettings)
    return settings


def load_eval_settings() -> EvalSettings:
    """Read ``AGRAG_EVAL_*`` settings; a bad value raises ``ConfigError`` naming the variable."""
    settings = _load(EvalSettings, "AGRAG_EVAL_")
    assert isinstance(settings, EvalSettings)
    return settings


def load_retrieval_settings() -> RetrievalSettings:
    """Read ``RETRIEVAL_*`` settings; a bad value raises ``ConfigError`` naming the variable."""
    settings = _load(RetrievalSettings, "RETRIEVAL_")
    assert isinstance(settings, RetrievalSettings)
    return settings


@dataclass(frozen=True, slots=True)
class Settings:
    """Every setting read from the environment and ``.env``: ``AGRAG_*`` and ``RETRIEVAL_*``."""

    agrag: AgragSettings
    retrieval: RetrievalSettings

    def with_data_dir(self, data_dir: Path | str | None, embedding_cache_dir: Path | str | None = None) -> Settings:
        """These settings with another data dir (and embedding cache), where given."""
        chosen = {"data_dir": data_dir, "embedding_cache_dir": embedding_cache_dir}
        update = {k: Path(v) for k, v in chosen.items() if v is not None}
        return Settings(self.agrag.model_copy(update=update), self.retrieval) if update else self


def load_settings() -> Settings:
    """Read the settings; a bad value raises ``ConfigError`` naming the variable."""
    return Settings(load_agrag_settings(), load_retrieval_settings())
