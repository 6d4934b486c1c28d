"""``gluon.model_zoo``: MXNet's predefined networks, and the store of their pretrained
parameters."""
from . import model_store
from . import vision
