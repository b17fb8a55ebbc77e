"""The HTTP API of `agrag serve`: a FastAPI app whose routes are made from the tool definitions."""
