"""Settings, config loading, and the code that builds Haystack pipelines from recipes."""
