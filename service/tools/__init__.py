"""The tools agrag offers a client (HTTP today; MCP and the agent next), each defined once, free of any transport."""
