"""Which ``Host`` and ``Origin`` headers name this server: the rule against DNS rebinding, for every route.

A web page of another site can make a browser send requests to a server on this machine by pointing its own DNS
name at 127.0.0.1 (DNS rebinding): the browser then names the page's site in ``Host``, and the page's origin in
``Origin`` on every request a page can make cross-origin with effect (POST, fetch). So a request must name this
server in its ``Host`` (421 otherwise), and a request that carries an ``Origin`` must come from a page of this
server or a configured origin (403 otherwise). A request without ``Origin`` (curl, the agrag CLI, MCP clients, a
browser opening a page) is judged by its ``Host`` alone: a foreign page can send one only as a plain navigation or
embed, whose answer it cannot read, and no route changes anything on a GET.

The names come from where ``agrag serve`` listens (``BindAddress``) plus ``AGRAG_ALLOWED_HOSTS``; they are always
names a foreign page cannot put into ``Host``: loopback names, the machine's own name, the listening address, and
the address a request arrived at.
"""

from __future__ import annotations

import ipaddress
import re
import socket
from collections.abc import Sequence
from dataclasses import dataclass

from agrag.components.errors import AgragError
from agrag.components.safe_text import printable
from agrag.pipelines.settings import HOST_NAME, AgragSettings
from agrag.service.api.errors import HostNotAllowedError, OriginNotAllowedError

LOOPBACK_NAMES = ("127.0.0.1", "localhost", "[::1]")
DEFAULT_PORTS = {"http": 80, "https": 443}
_HOST = re.compile(rf"({HOST_NAME})(?::([0-9]{{1,5}}))?")
_ORIGIN = re.compile(rf"(https?)://({HOST_NAME})(?::([0-9]{{1,5}}))?")
_SHOWN = 80  # characters of a refused header quoted in the answer


@dataclass(frozen=True)
class BindAddress:
    """Where ``agrag serve`` listens: ``--host`` as given, and its port (the free one it got for ``--port 0``)."""

    host: str
    port: int

    @property
    def all_interfaces(self) -> bool:
        """Listening on every address of the machine (``0.0.0.0``, ``::``)."""
        return self.host.strip("[]") in ("0.0.0.0", "::", "")


def _name(host: str) -> str:
    """A host as a Host header writes it: lower case, an IPv6 address in brackets."""
    bare = host.strip("[]").lower()
    try:
        return f"[{bare}]" if ipaddress.ip_address(bare).version == 6 else bare
    except ValueError:
        return bare


def _is_loopback(host: str) -> bool:
    bare = host.strip("[]").lower()
    try:
        return bare == "localhost" or ipaddress.ip_address(bare).is_loopback
    except ValueError:
        return False


def _arrival_names(local: tuple[str, int] | None) -> set[str]:
    """The address a request arrived at, as a client that connected to it writes it (IPv4 too for a mapped one)."""
    if not local or not isinstance(local[0], str):
        return set()
    names = {_name(local[0])}
    try:
        address = ipaddress.ip_address(local[0])
    except ValueError:
        return names
    mapped = address.ipv4_mapped if isinstance(address, ipaddress.IPv6Address) else None
    return names | ({str(mapped)} if mapped else set())


def _host_and_port(text: str, default_port: int) -> tuple[str, int] | None:
    """``(name, port)`` of a Host value or origin authority (no port: ``default_port``); None if it is no host."""
    match = _HOST.fullmatch(text.lower())
    if match is None:
        return None
    return match[1], int(match[2]) if match[2] else default_port


@dataclass(frozen=True)
class AllowedHosts:
    """The names a request may give this server, and the browser origins that may call it.

    Attributes:
        names: Names that reach the server at ``port`` (derived from the bind address).
        port: The port they must name; None: the port the request came in on (an app served by a test or an
            embedding, whose bind address ``create_app`` was not told).
        extra_hosts: ``AGRAG_ALLOWED_HOSTS`` as ``(name, port)``, port None for any port.
        extra_origins: ``AGRAG_ALLOWED_ORIGINS`` as ``scheme://name:port``.

    Usage:
        ```python
        allowed = AllowedHosts.for_bind(BindAddress("127.0.0.1", 8765), settings.agrag)
        refusal = allowed.refusal([b"evil.example"], [], ("127.0.0.1", 8765))  # a HostNotAllowedError
        ```
    """

    names: frozenset[str]
    port: int | None
    extra_hosts: frozenset[tuple[str, int | None]] = frozenset()
    extra_origins: frozenset[str] = frozenset()

    @classmethod
    def for_bind(cls, bind: BindAddress | None, settings: AgragSettings) -> AllowedHosts:
        """The names of a server listening at ``bind`` (None: loopback, on whatever port), plus the settings'.

        On loopback: 127.0.0.1, localhost and [::1]. On all interfaces: those and the machine's host name. Elsewhere:
        the ``--host`` name or address. Always, with the server's port, and the address a request arrived at.
        """
        if bind is None or _is_loopback(bind.host):
            names = {*LOOPBACK_NAMES, *([] if bind is None else [_name(bind.host)])}
        elif bind.all_interfaces:
            names = {*LOOPBACK_NAMES, *(n for n in [_name(socket.gethostname())] if _HOST.fullmatch(n))}
        else:
            names = {_name(bind.host)}
        extra_hosts = set()
        for entry in settings.allowed_hosts:
            found = _host_and_port(entry, 0)
            if found is not None:
                extra_hosts.add((found[0], found[1] or None))
        extra_origins = {o for o in (_origin(entry) for entry in settings.allowed_origins) if o is not None}
        return cls(
            frozenset(names), None if bind is None else bind.port, frozenset(extra_hosts), frozenset(extra_origins)
        )

    def describe(self) -> str:
        """The allowed names for a person: ``127.0.0.1:8765, ..., agrag.example.com (any port) or the address ...``."""
        port = "the server's port" if self.port is None else str(self.port)
        derived = [f"{name}:{port}" for name in sorted(self.names)]
        extra = [f"{n}:{p}" if p else f"{n} (any port)" for n, p in sorted(self.extra_hosts, key=str)]
        return ", ".join([*derived, *extra]) + " or the address a request arrives at"

    def names_server(self, name: str, port: int, local: tuple[str, int] | None) -> bool:
        """Whether ``name:port`` is this server for a request that arrived at ``local`` (address, port)."""
        if (name, port) in self.extra_hosts or (name, None) in self.extra_hosts:
            return True
        own_port = self.port if self.port is not None else (local[1] if local else None)
        if own_port is not None and port != own_port:
            return False
        return name in self.names or (local is not None and port == local[1] and name in _arrival_names(local))

    def refusal(
        self, hosts: Sequence[bytes], origins: Sequence[bytes], local: tuple[str, int] | None
    ) -> AgragError | None:
        """Why a request with these ``Host`` and ``Origin`` headers may not be served (None: it may)."""
        fix = "use the address `agrag serve` printed, or add the name clients use to AGRAG_ALLOWED_HOSTS on the server."
        if len(hosts) != 1:
            what = "no Host header" if not hosts else f"{len(hosts)} Host headers"
            return HostNotAllowedError(f"The request has {what}; send one naming this server: {fix}")
        host = hosts[0].decode("latin-1")
        found = _host_and_port(host, DEFAULT_PORTS["http"])
        if found is None or not self.names_server(*found, local):
            return HostNotAllowedError(
                f"The Host header {_quoted(host)} does not name this server, as when a web page points its own DNS "
                f"name at it (DNS rebinding); {fix}"
            )
        if not origins or self._origin_allowed(origins, local):
            return None
        return OriginNotAllowedError(
            f"The request comes from a web page of another site (Origin {_quoted(origins[0].decode('latin-1'))}), "
            "which may not use this server; pages of the server itself may, and AGRAG_ALLOWED_ORIGINS on the server "
            "names others that may."
        )

    def _origin_allowed(self, origins: Sequence[bytes], local: tuple[str, int] | None) -> bool:
        """One ``Origin`` header naming a page of this server (http or https) or an ``AGRAG_ALLOWED_ORIGINS`` entry."""
        normal = _origin(origins[0].decode("latin-1")) if len(origins) == 1 else None
        if normal is None:
            return False
        if normal in self.extra_origins:
            return True
        name, _, port = normal.partition("://")[2].rpartition(":")
        return self.names_server(name, int(port), local)


def _origin(text: str) -> str | None:
    """An origin as ``scheme://name:port`` (its default port written out), or None if it is not an http(s) origin."""
    match = _ORIGIN.fullmatch(text.lower())
    if match is None:
        return None
    scheme, name, port = match[1], match[2], match[3]
    return f"{scheme}://{name}:{int(port) if port else DEFAULT_PORTS[scheme]}"


def _quoted(value: str) -> str:
    shown = printable(value, multiline=False)
    return repr(shown if len(shown) <= _SHOWN else shown[:_SHOWN] + "…")
