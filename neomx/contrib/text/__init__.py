"""``mx.contrib.text``: token counting, vocabularies and pre-trained token embeddings."""
from . import utils
from . import vocab
from . import embedding

__all__ = ['utils', 'vocab', 'embedding']
