"""``mx.contrib.text``: token counting, vocabularies and pre-trained token embeddings."""
from . import utils
from . import vocab
from . import embedding
from ... import upper_layers as _upper_layers

# gluon.contrib.data.text (a layer below) builds its datasets' vocabularies with these
_upper_layers.register('text_vocabulary', vocab.Vocabulary)
_upper_layers.register('count_tokens_from_str', utils.count_tokens_from_str)

__all__ = ['utils', 'vocab', 'embedding']
