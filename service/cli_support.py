"""What every ``agrag`` command shares: the consoles, how an error ends a command, opening the data dir."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Annotated, Any, NoReturn, TypeVar

import typer
from rich.console import Console, ConsoleDimensions
from rich.markup import escape
from rich.segment import Segment
from rich.text import Text

from agrag.components.safe_text import printable

if TYPE_CHECKING:
    from agrag.service.client.server_client import ServerClient

T = TypeVar("T")

Overrides = Annotated[
    list[str] | None,
    typer.Argument(help="Hydra overrides, e.g. recipe=hybrid recipe.limit=5 ingest.chunker.max_chars=800"),
]

# Through a pipe or into a file there is no terminal width: rich would use 80 columns and cut the labels of every
# table. Tables take their natural width up to this; COLUMNS (or an explicit width) still rules.
PIPE_WIDTH = 200


class SafeConsole(Console):
    """The CLI's rich console: control characters from data are shown escaped; through a pipe, wide lines.

    Every text segment passes through ``printable`` as it is written (styles and rich's own cursor controls are
    rendered by rich, not read from data), so a file name, title or passage holding ESC, CR or a bidi override is
    shown, not obeyed. When the output is not a terminal and no width was set, lines are up to ``PIPE_WIDTH`` wide.
    """

    @property
    def size(self) -> ConsoleDimensions:
        """The terminal's size; ``PIPE_WIDTH`` wide when the output is not a terminal and no width was set."""
        size = super().size
        if self._width is None and not self.is_terminal:
            return ConsoleDimensions(PIPE_WIDTH, size.height)
        return size

    @size.setter
    def size(self, new_size: tuple[int, int]) -> None:
        self._width, self._height = new_size

    def render_str(self, text: str, **kwargs: Any) -> Text:
        """Escape control characters before rich measures the text, so tables keep their columns aligned."""
        return super().render_str(printable(text), **kwargs)

    def _render_buffer(self, buffer: Iterable[Segment]) -> str:
        safe = (segment if segment.control else Segment(printable(segment.text), segment.style) for segment in buffer)
        return super()._render_buffer(safe)


console = SafeConsole()
errors = SafeConsole(stderr=True)


def fail(exc: Exception) -> NoReturn:
    """Print ``exc`` as the command's error and exit (2 for a configuration error, 1 otherwise)."""
    from agrag.components.errors import ConfigError

    # Messages quote user input and JSON shapes ([...]); escaped so rich does not read them as markup.
    errors.print(f"[bold red]Error:[/bold red] {escape(str(exc))}", highlight=False, soft_wrap=True)
    raise typer.Exit(code=2 if isinstance(exc, ConfigError) else 1)


def on_runtime(overrides: list[str] | None, action: Callable[[Any], T]) -> T:
    """Run ``action(runtime)`` on the data dir opened with ``overrides``; an ``AgragError`` ends the command."""
    from agrag.components.errors import AgragError
    from agrag.pipelines.runtime import open_runtime

    try:
        with open_runtime(list(overrides or [])) as runtime:
            return action(runtime)
    except AgragError as exc:
        fail(exc)


def split_overrides(values: list[str] | None) -> tuple[list[str], list[str]]:
    """Split a command's arguments into Hydra overrides (``key=value``) and the rest (ids never hold ``=``)."""
    overrides = [v for v in values or [] if "=" in v]
    return [v for v in values or [] if "=" not in v], overrides


def server_client() -> ServerClient | None:
    """The client of the ``agrag serve`` that holds this command's data dir, or None: the command works in-process.

    The token is ``AGRAG_API_TOKEN`` if set, else the server's own token from its server file. Only settings and the
    server file are read here, so a command sent to a server loads no model and opens no store.
    """
    from agrag.components.errors import AgragError
    from agrag.pipelines.settings import load_settings
    from agrag.service.server.server_file import find_server

    try:
        settings = load_settings().agrag
    except AgragError as exc:
        fail(exc)
    info = find_server(settings.data_dir)
    if info is None:
        return None
    from agrag.service.client.server_client import ServerClient

    token = settings.api_token.get_secret_value() if settings.api_token is not None else info.token
    return ServerClient(info, token, settings.data_dir)


def on_server(server: ServerClient, action: Callable[[ServerClient], T]) -> T:
    """Run ``action(server)``, then close the client.

    An ``AgragError`` (the server's own, or none answering) ends the command as the same error does in-process.
    """
    from agrag.components.errors import AgragError

    try:
        with server:
            return action(server)
    except AgragError as exc:
        fail(exc)


def on_data_dir(
    overrides: list[str] | None,
    in_process: Callable[[Any], T],
    served: Callable[[ServerClient], T],
) -> T:
    """Run ``served(server)`` on the server that holds the data dir, else ``in_process(runtime)`` in this process.

    The server checks ``overrides`` against the stores it opened (one that changes the vector store or the
    embedder is refused with its message), as the in-process command opens the data dir with them.
    """
    server = server_client()
    if server is None:
        return on_runtime(overrides, in_process)

    def checked(client: ServerClient) -> T:
        client.check_overrides(list(overrides or []))
        return served(client)

    return on_server(server, checked)
