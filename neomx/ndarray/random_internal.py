"""Registry samplers ('_random_*', '_sample_*'), wrapped by ``mx.nd.random``."""
