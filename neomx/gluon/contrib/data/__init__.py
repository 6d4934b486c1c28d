"""``gluon.contrib.data``: contributed samplers.

MXNet's text datasets (WikiText) are not provided: they download their data.
"""
from . import sampler
from .sampler import *
