"""One evidence session per MCP client connection, bound to the caller that opened it.

A connection is the SDK's ``ServerSession``: one per stdio process, one per ``Mcp-Session-Id`` over streamable HTTP.
Its evidence (ledger, scope) lives exactly as long as it does, and no other connection can reach it.
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from agrag.service.api.access import Caller
from agrag.service.tools.errors import ConnectionOwnerError

if TYPE_CHECKING:
    from agrag.service.mcp.ledger import LedgerSession


@dataclass
class Connection:
    """A client connection's caller, evidence session, and the lock that runs its calls one at a time."""

    caller: Caller
    session: LedgerSession
    lock: threading.Lock = field(default_factory=threading.Lock)


class Connections:
    """The connections of a server, each made on its first call and gone with the SDK's session object.

    Usage:
        ```python
        connections = Connections(lambda caller: LedgerSession(store, embedder, caller.scope))
        connection = connections.get(request_context.session, caller)
        ```
    """

    def __init__(self, make_session: Callable[[Caller], LedgerSession]) -> None:
        """Make each connection's evidence session with ``make_session(caller)``."""
        self._make_session = make_session
        self._connections: weakref.WeakKeyDictionary[object, Connection] = weakref.WeakKeyDictionary()
        self._lock = threading.Lock()

    def get(self, key: object, caller: Caller) -> Connection:
        """The connection of the SDK session ``key``, made for ``caller`` on its first call.

        Raises:
            ConnectionOwnerError: the connection was opened by another caller (another token).
        """
        with self._lock:
            connection = self._connections.get(key)
            if connection is None:
                connection = Connection(caller, self._make_session(caller))
                self._connections[key] = connection
        if connection.caller.fingerprint != caller.fingerprint:
            raise ConnectionOwnerError()
        return connection

    def __len__(self) -> int:
        with self._lock:
            return len(self._connections)
