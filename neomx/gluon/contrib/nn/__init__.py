"""``gluon.contrib.nn``: Concurrent containers, Identity and SyncBatchNorm."""
from .basic_layers import *  # noqa: F401,F403
