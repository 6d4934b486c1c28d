"""``mx.gluon``: the imperative/hybrid neural-network library."""
