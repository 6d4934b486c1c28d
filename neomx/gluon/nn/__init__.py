"""``gluon.nn``: neural-network layers."""
