"""``mx.nd.random``: samplers (filled in by the random-operator family)."""
