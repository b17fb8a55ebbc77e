"""Store adapters: the Kùzu graph and the Qdrant vector collections, behind small interfaces."""
