"""The one place each default of a setting is written, for the settings both a config model and a component take.

The config models (``agrag.pipelines.config_models`` and ``agrag.pipelines.settings``) and the component
constructors read these names, and the YAML files under ``conf/`` repeat the values for their readers;
``tests/pipelines/test_config_defaults.py`` checks that the three agree. Components may not import ``pipelines``,
which is why the values live here and not in the models.
"""

from __future__ import annotations

from typing import Final

# embedder (conf/embedder)
EMBEDDER_MODEL: Final = "all-MiniLM-L6-v2"
EMBEDDER_DEVICE: Final = "cpu"
EMBEDDER_BATCH_SIZE: Final = 64
EMBEDDING_CACHE_QUERIES: Final = 10_000  # distinct query vectors an embedding cache keeps (about 15 MB at 384)
# ingest.parallel: below this many chunks a batch embeds in-process (a cluster takes seconds to start); slices of
# this many chunks go to a worker at a time.
PARALLEL_MIN_CHUNKS: Final = 2000
PARALLEL_SLICE_CHUNKS: Final = 256

# vector_store (conf/vector_store/qdrant.yaml)
QDRANT_COLLECTION_PREFIX: Final = "agrag"
# A Qdrant server's collections: payloads on disk, Qdrant's own HNSW defaults, no quantization.
QDRANT_ON_DISK_PAYLOAD: Final = True
QDRANT_HNSW_M: Final = 16
QDRANT_HNSW_EF_CONSTRUCT: Final = 100
# Qdrant Edge shards (conf/vector_store/edge.yaml): past this many KB of vectors in its growing segment, a collection
# is indexed for search (Qdrant's own default threshold: about 6,600 vectors of 384 floats), with int8 copies
# scanned first and the best `oversampling` times as many candidates rescored with the float32 originals.
EDGE_INDEXING_THRESHOLD_KB: Final = 10_000
EDGE_OVERSAMPLING: Final = 2.0

# AGRAG_MIN_FREE_MB: free space a write needs on the data dir's disk. A commit batch of 200 chunks writes a few MB, and
# Kùzu's checkpoint (when its log passes 16 MB) up to about twice its log: 64 MiB covers both with room to spare.
DISK_MIN_FREE_MB: Final = 64

# ingest.loader
LOADER_MAX_FILE_BYTES: Final = 20 * 1024 * 1024
# ingest.plan.limits: a file cut into more chunks is refused before extraction, as the FalkorDB toolkit's spec refuses
# files over 1,000 chunks. The example notes make 5-15 chunks each; a 20 MB line of words made 16,712.
MAX_CHUNKS_PER_FILE: Final = 1000
LOADER_SUFFIXES: Final = (".txt", ".md", ".markdown", ".rst", ".html", ".htm", ".pdf", ".csv")

# ingest.chunker (conf/ingest/chunker/*.yaml)
TABLE_MAX_ROWS: Final = 30
STRUCTURAL_MAX_CHARS: Final = 1500
STRUCTURAL_SECTION_MAX_CHARS: Final = 6000
SENTENCE_MAX_CHARS: Final = 1000
SENTENCE_OVERLAP_SENTENCES: Final = 1
FIXED_SIZE: Final = 1000
FIXED_OVERLAP: Final = 100

# ingest.extractor (conf/ingest/extractor/*.yaml)
LEXICAL_MIN_NAME_LENGTH: Final = 2
LLM_EXTRACTOR_PROMPT: Final = "rich"
LLM_EXTRACTOR_GLEANING_ROUNDS: Final = 1
LLM_EXTRACTOR_CONCURRENCY: Final = 4

# ingest.resolution
FUZZY_ENABLED: Final = True
FUZZY_MERGE_THRESHOLD: Final = 94.0
FUZZY_CANDIDATE_THRESHOLD: Final = 85.0
SHORT_FORMS_ENABLED: Final = True
EMBEDDING_RESOLUTION_ENABLED: Final = True
EMBEDDING_RESOLUTION_THRESHOLD: Final = 0.9
LLM_RESOLUTION_ENABLED: Final = False
LLM_RESOLUTION_MAX_PAIRS: Final = 50

# ingest.communities
COMMUNITY_MAX_LEVELS: Final = 3
COMMUNITY_MAX_CLUSTER_SIZE: Final = 12
COMMUNITY_MIN_SIZE: Final = 2
COMMUNITY_RESOLUTION: Final = 1.0
COMMUNITY_SEED: Final = 0
COMMUNITY_REPORT_SENTENCES: Final = 3

# recipe (conf/recipe)
RECIPE_LIMIT: Final = 10
RECIPE_COMMUNITY_TOP_K: Final = 3

# RETRIEVAL_* settings
RRF_K: Final = 60
PPR_DAMPING: Final = 0.5
PPR_TEMPERATURE: Final = 0.1
# The bridge round of the ppr method (components/graph/bridge_hop.py), measured on notes_dev (README, Retrieval).
BRIDGE_FIRST: Final = 2
BRIDGE_MAX_BRIDGES: Final = 12
BRIDGE_MAX_SHARE: Final = 0.3
BRIDGE_ENTITY_WEIGHT: Final = 0.5
BRIDGE_SEED_PASSAGES: Final = 2
# Reciprocal-rank fusion of the walk's list with the bridge round's: k, and the bridge list's weight.
BRIDGE_RRF_K: Final = 2
BRIDGE_RRF_WEIGHT: Final = 1.5
BRIDGE_KEYWORD_RRF_K: Final = 5
BRIDGE_KEYWORD_WEIGHT: Final = 1.0
TRAVERSAL_DEPTH: Final = 2
# 30, not 20, since relations are typed facts: one pair of names can be several relations (MuSiQue graph_expand R@5
# 62.2 -> 63.7, notes_dev 83.3 -> 85.8).
TRAVERSAL_PER_HOP: Final = 30
# The rules: until the analysis feeds the ranking, an LLM call per search (and per agent tool call) buys a trace line.
QUERY_ANALYZER: Final = "rules"
# A search waits this long for the LLM's query analysis (no retries), then the rules answer.
QUERY_ANALYSIS_TIMEOUT_SECONDS: Final = 10.0
