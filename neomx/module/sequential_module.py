"""``SequentialModule``: modules chained one after the other.

The outputs of each module are the data of the next; backward runs the chain in reverse,
each module's input gradients becoming the output gradients of the one before. A symbolic
graph of the whole network is faster; the chain is a convenience for composing modules.
"""
import logging

from ..initializer import Uniform
from ..io import DataBatch, DataDesc
from .base_module import BaseModule

__all__ = ['SequentialModule']


class SequentialModule(BaseModule):
    """A chain of modules, each fed the outputs of the previous one.

    Parameters
    ----------
    logger : logging.Logger or the logging module

    Notes
    -----
    Modules are added with :meth:`add`, with optional meta flags:

    - ``take_labels``: the module receives the chain's labels (any module may take them).
    - ``auto_wiring``: the previous module's outputs are renamed to this module's data names
      (else they must already carry those names).

    Example
    -------
    >>> fc1 = mx.sym.FullyConnected(mx.sym.var('data'), num_hidden=3, name='fc1')
    >>> fc2 = mx.sym.FullyConnected(mx.sym.var('data'), num_hidden=1, name='fc2')
    >>> net2 = mx.sym.LinearRegressionOutput(fc2, name='out')
    >>> seq = mx.mod.SequentialModule()
    >>> _ = seq.add(mx.mod.Module(fc1, label_names=None))     # add returns the chain
    >>> _ = seq.add(mx.mod.Module(net2, label_names=['out_label']), take_labels=True, auto_wiring=True)
    >>> seq.bind(data_shapes=[('data', (2, 4))], label_shapes=[('out_label', (2, 1))])
    >>> seq.init_params(mx.init.One())          # weights 1, biases 0
    >>> seq.forward(mx.io.DataBatch([mx.nd.ones((2, 4))], [mx.nd.zeros((2, 1))]), is_train=False)
    >>> seq.get_outputs()[0]                    # fc1: 4 per unit; fc2: 3 * 4
    <BLANKLINE>
    [[12.]
     [12.]]
    <NDArray 2x1 @cpu(0)>
    """

    META_TAKE_LABELS = 'take_labels'
    META_AUTO_WIRING = 'auto_wiring'

    def __init__(self, logger=logging):
        super().__init__(logger=logger)
        self._modules = []
        self._metas = []
        self._label_shapes = None

    def add(self, module, **kwargs):
        """Append ``module`` to the chain; returns ``self`` so that calls chain.

        Parameters
        ----------
        module : BaseModule
        **kwargs
            Meta flags: ``take_labels``, ``auto_wiring`` (see the class notes).

        Raises
        ------
        AssertionError
            For an unknown meta flag.
        """
        for key in kwargs:
            if key not in (self.META_TAKE_LABELS, self.META_AUTO_WIRING):
                raise AssertionError('Unknown meta "%s", a typo?' % key)
        self._modules.append(module)
        self._metas.append(kwargs)
        # The chain changed: it must be bound and initialized again.
        self.binded = self.params_initialized = self.optimizer_initialized = False
        return self

    def _meta(self, index, key):
        return bool(self._metas[index].get(key, False))

    # -------------------------------------------------------------- properties
    @property
    def data_names(self):
        """Data input names of the first module (empty for an empty chain)."""
        return self._modules[0].data_names if self._modules else []

    @property
    def output_names(self):
        """Output names of the last module (empty for an empty chain)."""
        return self._modules[-1].output_names if self._modules else []

    @property
    def data_shapes(self):
        """The first module's data inputs, as DataDescs."""
        self._require('binded')
        return self._modules[0].data_shapes

    @property
    def label_shapes(self):
        """The label shapes given to :meth:`bind`."""
        self._require('binded')
        return self._label_shapes

    @property
    def output_shapes(self):
        """``[(output name, shape)]`` of the last module."""
        self._require('binded')
        return self._modules[-1].output_shapes

    # -------------------------------------------------------------- parameters
    def get_params(self):
        """``(arg_params, aux_params)`` of all modules together."""
        self._require('params_initialized')
        arg_params, aux_params = {}, {}
        for module in self._modules:
            args, auxs = module.get_params()
            arg_params.update(args)
            aux_params.update(auxs)
        return arg_params, aux_params

    def init_params(self, initializer=Uniform(0.01), arg_params=None, aux_params=None, allow_missing=False,
                    force_init=False, allow_extra=False):
        """Initialize every module's parameters (see :meth:`Module.init_params`); the dicts
        hold the parameters of all modules.

        Raises
        ------
        AssertionError
            When two modules have a parameter of the same name.
        """
        if self.params_initialized and not force_init:
            return
        self._require('binded')
        for module in self._modules:
            module.init_params(initializer=initializer, arg_params=arg_params, aux_params=aux_params,
                               allow_missing=allow_missing, force_init=force_init, allow_extra=allow_extra)
        self._check_unique_param_names()
        self.params_initialized = True

    def _check_unique_param_names(self):
        owners = {}
        for index, module in enumerate(self._modules):
            for name in (name for params in module.get_params() for name in params):
                if name in owners:
                    first = owners[name]
                    raise AssertionError('Duplicated parameter names: name "%s" in layer %d (%s) is already '
                                         'used in layer %d (%s).' % (name, index, type(module), first,
                                                                     type(self._modules[first])))
                owners[name] = index

    def set_params(self, arg_params, aux_params, allow_missing=False, force_init=True, allow_extra=False):
        """Assign the parameters of every module from dicts covering them all."""
        self.init_params(initializer=None, arg_params=arg_params, aux_params=aux_params,
                         allow_missing=allow_missing, force_init=force_init, allow_extra=allow_extra)

    # ----------------------------------------------------------------- binding
    def bind(self, data_shapes, label_shapes=None, for_training=True, inputs_need_grad=False,
             force_rebind=False, shared_module=None, grad_req='write'):
        """Bind every module, each for the output shapes of the previous one.

        Parameters
        ----------
        data_shapes, label_shapes : list of DataDesc or (name, shape)
            Inputs of the chain; the labels go to the modules added with ``take_labels``.
        for_training, force_rebind, grad_req
            See :meth:`Module.bind`.
        inputs_need_grad : bool
            Gradients of the chain's data inputs (the later modules always compute theirs
            when training, to pass gradients back).
        shared_module : None
            Not supported.

        Raises
        ------
        AssertionError
            For an empty chain, or with ``shared_module``.
        """
        if self.binded and not force_rebind:
            self.logger.warning('Already bound, ignoring bind()')
            return
        if shared_module is not None:
            raise AssertionError('SequentialModule does not support shared_module')
        if not self._modules:
            raise AssertionError('Attempting to bind an empty SequentialModule')
        inputs = data_shapes
        for index, module in enumerate(self._modules):
            module.bind(inputs, label_shapes if self._meta(index, self.META_TAKE_LABELS) else None,
                        for_training=for_training,
                        inputs_need_grad=inputs_need_grad if index == 0 else for_training,
                        force_rebind=force_rebind, grad_req=grad_req)
            inputs = self._next_inputs(index, module.output_shapes)
        self.for_training, self.inputs_need_grad = for_training, inputs_need_grad
        self._label_shapes = label_shapes
        self.binded = True

    def _next_inputs(self, index, output_shapes):
        """The outputs ``[(name, shape)]`` of module ``index`` as inputs of the next module
        (None after the last): renamed to its data names with ``auto_wiring``."""
        if index + 1 == len(self._modules):
            return None
        if not self._meta(index + 1, self.META_AUTO_WIRING):
            return [DataDesc(name, shape) for name, shape in output_shapes]
        data_names = self._modules[index + 1].data_names
        if len(data_names) != len(output_shapes):
            raise AssertionError('auto_wiring: layer %d has %d outputs for the %d data inputs of layer %d'
                                 % (index, len(output_shapes), len(data_names), index + 1))
        return [DataDesc(name, shape) for name, (_, shape) in zip(data_names, output_shapes)]

    # --------------------------------------------------------------- optimizer
    def init_optimizer(self, kvstore='local', optimizer='sgd', optimizer_params=(('learning_rate', 0.01),),
                       force_init=False):
        """Set up the optimizer of every module (see :meth:`Module.init_optimizer`)."""
        self._require('binded', 'params_initialized')
        if self.optimizer_initialized and not force_init:
            self.logger.warning('optimizer already initialized, ignoring.')
            return
        for module in self._modules:
            module.init_optimizer(kvstore=kvstore, optimizer=optimizer, optimizer_params=optimizer_params,
                                  force_init=force_init)
        self.optimizer_initialized = True

    # ----------------------------------------------------------------- running
    def forward(self, data_batch, is_train=None):
        """Run the chain on ``data_batch``: each module's outputs are the next one's data.

        Parameters
        ----------
        data_batch : DataBatch
        is_train : bool, optional
            Defaults to ``for_training``.
        """
        self._require('binded', 'params_initialized')
        batch = data_batch
        for index, module in enumerate(self._modules):
            if index > 0:
                batch = self._batch_of_outputs(index - 1, data_batch)
            module.forward(batch, is_train=is_train)

    def _batch_of_outputs(self, index, data_batch):
        """The outputs of module ``index`` as the next module's batch (with ``data_batch``'s labels)."""
        module = self._modules[index]
        outputs = module.get_outputs()
        shapes = [(name, out.shape) for name, out in zip(module.output_names, outputs)]
        return DataBatch(outputs, data_batch.label, pad=data_batch.pad, index=data_batch.index,
                         provide_data=self._next_inputs(index, shapes), provide_label=data_batch.provide_label)

    def backward(self, out_grads=None):
        """Back-propagate through the chain, last module first."""
        self._require('binded', 'params_initialized')
        for index in reversed(range(len(self._modules))):
            module = self._modules[index]
            module.backward(out_grads=out_grads)
            if index > 0:
                out_grads = module.get_input_grads()

    def update(self):
        """One optimizer step in every module."""
        self._require('binded', 'params_initialized', 'optimizer_initialized')
        for module in self._modules:
            module.update()

    def get_outputs(self, merge_multi_context=True):
        """The last module's outputs."""
        self._require('binded', 'params_initialized')
        return self._modules[-1].get_outputs(merge_multi_context)

    def get_input_grads(self, merge_multi_context=True):
        """Gradients of the chain's data inputs (bind with ``inputs_need_grad=True``)."""
        self._require('binded', 'params_initialized', 'inputs_need_grad')
        return self._modules[0].get_input_grads(merge_multi_context)

    def update_metric(self, eval_metric, labels, pre_sliced=False):
        """Accumulate into ``eval_metric`` the outputs of every module that takes labels."""
        self._require('binded', 'params_initialized')
        for index, module in enumerate(self._modules):
            if self._meta(index, self.META_TAKE_LABELS):
                module.update_metric(eval_metric, labels, pre_sliced)

    def install_monitor(self, monitor):
        """Let ``monitor`` watch the executors of every module."""
        self._require('binded')
        for module in self._modules:
            module.install_monitor(monitor)
