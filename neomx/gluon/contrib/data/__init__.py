"""``gluon.contrib.data``: contributed samplers and the WikiText language-modelling datasets."""
from . import sampler
from . import text
from .sampler import *
