"""The algorithms behind the evidence functions: passage discovery, span text, snippets, citation checks."""
