"""``gluon.contrib.nn``."""
