"""How many evidence items an MCP connection's ledger keeps by default (``LedgerSession``, ``agrag mcp``).

Apart from ``ledger`` so that ``agrag mcp``, which reads its options before it knows whether it forwards to a running
server, does not import the evidence session (and Haystack and torch with it) to do so.
"""

DEFAULT_LEDGER_CAPACITY = 2000
