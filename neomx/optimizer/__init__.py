"""``mx.optimizer``: optimizers, their registry and the Updater.

``mx.optimizer.create('adam', learning_rate=0.1)`` builds an optimizer by name;
``mx.optimizer.get_updater(opt)`` wraps it with per-parameter state. Every optimizer's rule
runs as fused multi-tensor torch kernels (:mod:`neomx.operator.optimizer_ops`), for one
parameter (``update``) or a whole model at once (``update_multi``).
"""
from .optimizer import Optimizer, Updater, register, create, get_updater
from .sgd import SGD, NAG, Signum, LARS, LBSGD, DCASGD, SGLD, ccSGD
from .checking import Test
from .adaptive import Adam, AdamW, Adamax, Nadam, LAMB, AdaGrad, AdaDelta, RMSProp, Ftrl, FTML
from . import contrib

__all__ = ['Optimizer', 'Updater', 'register', 'create', 'get_updater', 'SGD', 'NAG', 'Signum', 'LARS', 'LBSGD',
           'DCASGD', 'SGLD', 'ccSGD', 'Adam', 'AdamW', 'Adamax', 'Nadam', 'LAMB', 'AdaGrad', 'AdaDelta',
           'RMSProp', 'Ftrl', 'FTML', 'Test']
