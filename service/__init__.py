"""Entry points: the agrag command line."""
