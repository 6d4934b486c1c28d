"""``gluon.contrib.estimator``: a training loop (:class:`Estimator`) driven by event handlers."""
from . import batch_processor
from . import estimator
from . import event_handler
from . import utils
from .batch_processor import *
from .estimator import *
from .event_handler import *
