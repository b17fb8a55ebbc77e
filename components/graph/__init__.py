"""Graph algorithms over snapshots of the store: personalized PageRank on the passage-entity graph."""
