"""``gluon.data.vision``: image datasets and transforms."""
from .datasets import *  # noqa: F401,F403
from ..record_dataset import ImageRecordDataset  # noqa: F401
from . import transforms  # noqa: F401
