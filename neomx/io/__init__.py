"""``mx.io``: data iterators."""
