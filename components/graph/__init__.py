"""Graph algorithms: personalized PageRank on passage-entity snapshots, and the one entity lookup by id or name."""
