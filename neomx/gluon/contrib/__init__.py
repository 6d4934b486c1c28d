"""``gluon.contrib``: contributed layers, recurrent cells, data samplers, the Estimator
training loop and data-parallel execution."""
from . import nn
from . import rnn
from . import data
from . import estimator
from . import parallel
from . import cnn
