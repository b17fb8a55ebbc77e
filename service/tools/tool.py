"""``Tool``: one capability offered to clients, defined once: name, input model, description, handler, output type.

A transport (the HTTP API today, MCP and the agent later) turns each ``Tool`` into its own form: a route, an MCP
tool, an agent tool. The definition knows nothing of any transport; what a call needs of the process is in
``ToolContext``.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from pydantic import TypeAdapter

from agrag.components.data_models.evidence import EvidenceScope
from agrag.components.data_models.ingestion_run import IngestionRun
from agrag.components.errors import EvidenceError
from agrag.pipelines.strict_model import StrictModel

if TYPE_CHECKING:  # a client of the API imports the tool definitions for their models, without loading Haystack
    from agrag.pipelines.config_models import AgragConfig, RecipeConfig
    from agrag.pipelines.evidence_session import EvidenceSession
    from agrag.pipelines.runtime import Runtime

InputT = TypeVar("InputT", bound="ToolInput")
OutputT = TypeVar("OutputT")

CONFIG_CACHE_SIZE = 64


class ToolInput(StrictModel):
    """Base of every tool's input, with the config models' rules.

    Unknown fields are errors, an input does not change once made, and a number field refuses ``true``/``false``.
    """


class ToolHost:
    """What every call of every tool shares in one process: the runtime, and where the last ingestion is known.

    It also composes the configurations requests ask for with overrides, once each: Hydra's composition takes about
    50 ms and must not run in two threads at once.
    """

    def __init__(self, runtime: Runtime, last_ingestion: Callable[[], IngestionRun | None] | None = None) -> None:
        """Serve ``runtime``; ``last_ingestion`` says which ingestion finished last (default: the run registry's)."""
        self.runtime = runtime
        self._last_ingestion = last_ingestion or runtime.runs.last_finished
        self._configs: OrderedDict[tuple[str, ...], AgragConfig] = OrderedDict()
        self._configs_lock = threading.Lock()

    def last_ingestion(self) -> IngestionRun | None:
        """The last ingestion or delete that finished, if one is known."""
        return self._last_ingestion()

    def config(self, overrides: Sequence[str]) -> AgragConfig:
        """The runtime's configuration with a request's ``overrides`` (e.g. ``recipe=multi_hop``), composed once each.

        The overrides come from a caller (HTTP, MCP, the agent's model), so only allow-listed settings with plain
        values are taken (``Runtime.request_config``).

        Raises:
            RequestOverrideError: an override a request may not give (a resolver, a path outside the files root, a
                setting outside the allow-list).
            ConfigError: a bad override.
        """
        key = tuple(overrides)
        if not key:
            return self.runtime.config
        with self._configs_lock:
            if key in self._configs:
                self._configs.move_to_end(key)
                return self._configs[key]
            config = self.runtime.request_config(key)
            self._configs[key] = config
            if len(self._configs) > CONFIG_CACHE_SIZE:
                self._configs.popitem(last=False)
            return config

    def recipe(self, overrides: Sequence[str]) -> RecipeConfig:
        """The recipe the configuration composes to with ``overrides``; see ``config``."""
        return self.config(overrides).recipe


@dataclass(frozen=True)
class ToolContext:
    """One caller's call: the host, the documents the caller may read, and the evidence session it works in.

    Attributes:
        host: The process's runtime and ingestion record.
        scope: The documents the caller may read (every document by default). Applied inside every query.
        session: The caller's evidence session, for the evidence tools.
    """

    host: ToolHost
    scope: EvidenceScope = field(default_factory=EvidenceScope)
    session: EvidenceSession | None = None

    @property
    def runtime(self) -> Runtime:
        """The open data dir."""
        return self.host.runtime

    def evidence_session(self) -> EvidenceSession:
        """The caller's evidence session.

        Raises:
            EvidenceError: the call came without one.
        """
        if self.session is None:
            raise EvidenceError("This tool works inside an evidence session: create one first.")
        return self.session


@dataclass(frozen=True)
class Tool(Generic[InputT, OutputT]):
    """One tool: what it is called, what it takes, what it does and returns, and the function that does it.

    Attributes:
        name: A short snake_case name (``search``, ``discover``).
        title: A few words for a menu or a page heading.
        description: For a model and a person: when to use it, what it returns, what it costs.
        input_model: The pydantic model of its arguments.
        output_type: The type it returns (a pydantic model or a frozen dataclass); ``output_adapter`` dumps it as
            JSON data and reads it back exactly.
        handler: Does the work: ``handler(context, arguments) -> output``.
        in_session: True for the evidence tools, which run inside a caller's evidence session.
        writes: True for a tool that writes to the data dir (through the ingestion queue): it runs without the
            store's read lock, which its run's writes would wait for.

    Usage:
        ```python
        found = TOOLS["discover"].run(ToolContext(host, session=session), {"query": "Who wrote the planner?"})
        ```
    """

    name: str
    title: str
    description: str
    input_model: type[InputT]
    output_type: Any
    handler: Callable[[ToolContext, InputT], OutputT]
    in_session: bool = False
    writes: bool = False
    output_adapter: TypeAdapter[Any] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        # The pydantic adapter of the output type, built once: it dumps an output as JSON data and reads it back.
        object.__setattr__(self, "output_adapter", TypeAdapter(self.output_type))

    def parse(self, arguments: InputT | Mapping[str, Any]) -> InputT:
        """The arguments as the input model (validated when given as a mapping).

        Raises:
            pydantic.ValidationError: a missing, unknown or out-of-range argument.
        """
        if isinstance(arguments, self.input_model):
            return arguments
        return self.input_model.model_validate(arguments)

    def run(self, context: ToolContext, arguments: InputT | Mapping[str, Any]) -> OutputT:
        """Validate the arguments and run the handler, holding the store's read lock for the whole call.

        So a call sees the stores between two ingestion commit batches, never in the middle of one.
        """
        parsed = self.parse(arguments)
        if self.writes:
            return self.handler(context, parsed)
        with context.runtime.store.reading():
            return self.handler(context, parsed)

    def dump(self, output: OutputT) -> Any:
        """The output as JSON data."""
        return self.output_adapter.dump_python(output, mode="json")

    def load(self, data: Any) -> OutputT:
        """An output back from its JSON data (what a client of the HTTP API does)."""
        value: OutputT = self.output_adapter.validate_python(data)
        return value
