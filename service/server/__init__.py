"""The serving process: its server file, its HTTP server loop and its ingestion queue."""
