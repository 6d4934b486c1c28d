"""``mx.init``: parameter initializers."""
