"""``gluon.contrib``."""
from . import nn
