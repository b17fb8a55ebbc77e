"""Communities: hierarchical clusters of the entity graph."""
