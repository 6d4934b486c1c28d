"""``gluon.contrib.nn``: Concurrent containers, Identity, SparseEmbedding, SyncBatchNorm and
PixelShuffle layers."""
from .basic_layers import *  # noqa: F401,F403
