"""The ``_random_*``/``_sample_*`` operators as Symbol functions, wrapped by ``mx.sym.random``."""
