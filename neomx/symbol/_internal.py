"""``mx.sym._internal``: internal operators (``_plus_scalar``...) as Symbol functions."""
