"""``gluon.model_zoo``."""
