"""The agrag CLI as a client of the ``agrag serve`` that holds its data dir."""
