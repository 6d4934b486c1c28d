"""``gluon.data.vision``: vision datasets and transforms."""
