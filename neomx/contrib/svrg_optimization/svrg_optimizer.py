"""The optimizer :class:`~.svrg_module.SVRGModule` uses: parameters named ``<name>_full``
(the full-data gradients kept in the KVStore) are assigned, the others updated by the
wrapped default optimizer."""
from ... import optimizer as opt

__all__ = []


@opt.register
class _AssignmentOptimizer(opt.Optimizer):
    """Sets the weight to the gradient (how the KVStore keeps the averaged full gradients)."""

    def update(self, index, weight, grad, state):
        weight[:] = grad


@opt.register
class _SVRGOptimizer(opt.Optimizer):
    """Updates ``<name>_full`` keys by assignment and every other parameter with
    ``default_optimizer`` (a name, built with ``kwargs``, or an Optimizer).

    Parameters
    ----------
    default_optimizer : str or Optimizer
    **kwargs
        The optimizer's parameters; those of the base Optimizer also configure this one.
    """
    _BASE_PARAMS = ('rescale_grad', 'param_idx2name', 'wd', 'clip_gradient', 'learning_rate', 'lr_scheduler',
                    'sym', 'begin_num_update', 'multi_precision', 'param_dict')

    def __init__(self, default_optimizer, **kwargs):
        super().__init__(**self._check_params(**kwargs))
        if isinstance(default_optimizer, str):
            self.default_opt = opt.create(default_optimizer, **kwargs)
        else:
            self.default_opt = default_optimizer
        self.aux_opt = opt.create(_AssignmentOptimizer.__name__)

    @staticmethod
    def _check_params(**kwargs):
        """The arguments of ``kwargs`` that the base Optimizer takes."""
        return {k: v for k, v in kwargs.items() if k in _SVRGOptimizer._BASE_PARAMS}

    def _for(self, index):
        return self.aux_opt if 'full' in self._check_index(index) else self.default_opt

    def update(self, index, weight, grad, state):
        self._for(index).update(index, weight, grad, state)

    def create_state(self, index, weight):
        return self._for(index).create_state(index, weight)

    def _check_index(self, index):
        """The parameter name of ``index`` (an index, or already a name)."""
        return index if index in self.idx2name.values() else self.idx2name[index]
