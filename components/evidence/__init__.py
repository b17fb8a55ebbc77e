"""The algorithms behind the evidence functions: span text, snippets, citation checks."""
