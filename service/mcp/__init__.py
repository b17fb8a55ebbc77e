"""The MCP server of agrag: the tools of ``agrag.service.tools`` over stdio (``agrag mcp``) and streamable HTTP."""
