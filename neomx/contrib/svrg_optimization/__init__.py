"""``mx.contrib.svrg_optimization``: stochastic variance-reduced gradient training
(Johnson & Zhang, 2013) for symbolic Modules: :class:`svrg_module.SVRGModule`."""
from . import svrg_module
from . import svrg_optimizer

__all__ = ['svrg_module', 'svrg_optimizer']
