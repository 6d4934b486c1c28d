"""``gluon.contrib``: contributed layers and data-parallel execution."""
from . import nn
from . import parallel
