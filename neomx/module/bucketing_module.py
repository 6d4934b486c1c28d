"""``BucketingModule``: one network per input length, all sharing one set of parameters.

Variable-length data (sentences, say) is grouped into buckets; each batch carries its
``bucket_key``. ``sym_gen(bucket_key)`` builds the network for that key, and the module binds
one :class:`Module` per key met, each sharing the parameter arrays and the optimizer of the
default bucket's module. Training with ``fit`` then works as for a single Module, the batches
switching buckets as they come.
"""
import logging

from .. import model
from .. import ndarray as nd
from .. import symbol as sym
from ..context import cpu
from ..initializer import Uniform
from .base_module import BaseModule, check_input_names
from .module import Module

__all__ = ['BucketingModule']

# names MXNet's module also holds
from ..model import load_params  # noqa: E402,F401
from ..name import NameManager  # noqa: E402  (MXNet's module holds it too)


def _required(value, message):
    """Raise AssertionError (MXNet's check for these arguments) with ``message`` when
    ``value`` is None."""
    if value is None:
        raise AssertionError(message)


class BucketingModule(BaseModule):
    """A module for inputs of varying length: one bound :class:`Module` per bucket key.

    Parameters
    ----------
    sym_gen : callable
        ``sym_gen(bucket_key) -> (symbol, data_names, label_names)``. The symbols of all
        buckets must name their parameters alike, so that the buckets share them.
    default_bucket_key : hashable
        The bucket bound by :meth:`bind`, whose module owns the parameters (the largest
        bucket is a good choice). Required.
    logger : logging.Logger or the logging module
    context : Context or list of Context
    work_load_list : list of float, optional
    fixed_param_names : list of str, optional
    state_names : list of str, optional
    group2ctxs : dict of str -> list of Context, or list of dict, optional
        See :class:`Module`.
    compression_params : dict, optional
        See :class:`Module`.

    Raises
    ------
    AssertionError
        Without ``default_bucket_key``.
    ValueError
        When the default bucket's symbol lacks one of its data, state or fixed parameter names.

    Example
    -------
    Sequences of any length summed, then one fully connected layer whose parameters all
    buckets share:

    >>> def sym_gen(seq_len):
    ...     total = mx.sym.sum(mx.sym.var('data'), axis=1, keepdims=True)
    ...     return mx.sym.FullyConnected(total, num_hidden=2, name='fc'), ('data',), None
    >>> mod = mx.mod.BucketingModule(sym_gen, default_bucket_key=5)
    >>> mod.bind(data_shapes=[('data', (1, 5))], for_training=False)
    >>> mod.init_params(mx.init.One())
    >>> batch = mx.io.DataBatch([mx.nd.ones((1, 3))], bucket_key=3,
    ...                         provide_data=[mx.io.DataDesc('data', (1, 3))])
    >>> mod.forward(batch, is_train=False)       # binds bucket 3, sharing bucket 5's parameters
    >>> mod.get_outputs()[0]
    <BLANKLINE>
    [[3. 3.]]
    <NDArray 1x2 @cpu(0)>
    """

    def __init__(self, sym_gen, default_bucket_key=None, logger=logging, context=cpu(), work_load_list=None,
                 fixed_param_names=None, state_names=None, group2ctxs=None, compression_params=None):
        super().__init__(logger=logger)
        _required(default_bucket_key, 'BucketingModule: default_bucket_key is required')
        self._sym_gen = sym_gen
        self._default_bucket_key = default_bucket_key
        self._module_kwargs = dict(logger=logger, context=context, work_load_list=work_load_list,
                                   fixed_param_names=fixed_param_names, state_names=state_names,
                                   group2ctxs=group2ctxs, compression_params=compression_params)
        symbol, data_names, label_names = self._call_sym_gen(default_bucket_key)
        check_input_names(symbol, data_names or [], 'data', True)
        check_input_names(symbol, label_names or [], 'label', False)
        check_input_names(symbol, state_names or [], 'state', True)
        check_input_names(symbol, fixed_param_names or [], 'fixed_param', True)
        self._data_names = data_names
        self._output_names = symbol.list_outputs()
        # Symbols read from a checkpoint (load_dict) replace sym_gen's for their keys.
        self._saved_symbols = {}
        # Parameters read from a checkpoint, given to the default bucket when it is bound.
        self._loaded_params = None
        self._monitor = None
        self._grad_req = 'write'
        self._reset_bind()

    def _call_sym_gen(self, *args, **kwargs):
        """``sym_gen`` under a fresh NameManager, as MXNet: every bucket's symbol gets the
        same automatic names (``embedding0_weight``), so the buckets share parameters."""
        with NameManager():
            return self._sym_gen(*args, **kwargs)

    def _reset_bind(self):
        """Forget every bucket; the optimizer lived in their modules, so it goes too."""
        self.binded = False
        self.optimizer_initialized = False
        # True when some bucket updated the parameters since the host copies were last read.
        self._params_dirty = False
        self._buckets = {}
        self._curr_module = None
        self._curr_bucket_key = None

    # ------------------------------------------------------------ checkpoints
    @staticmethod
    def load(prefix, epoch, sym_gen=None, default_bucket_key=None, **kwargs):
        """A BucketingModule from a checkpoint written by :meth:`save_checkpoint`.

        Reads the bucket keys from ``prefix.buckets``, each bucket's symbol from
        ``prefix-<key>-symbol.json`` and the parameters from ``prefix-%04d.params``.

        Parameters
        ----------
        prefix : str
        epoch : int
        sym_gen : callable
            The ``sym_gen`` the checkpoint was trained with (it gives the input names). Required.
        default_bucket_key : hashable
            Required.
        **kwargs
            Passed to the constructor (``context``, ``state_names``...).
        """
        _required(sym_gen, 'sym_gen is required for loading BucketingModule')
        _required(default_bucket_key, 'default_bucket_key is required for loading BucketingModule')
        bucket_keys = nd.load('%s.buckets' % prefix)[0].asnumpy().tolist()
        sym_dict = {key: sym.load('%s-%s-symbol.json' % (prefix, key)) for key in bucket_keys}
        arg_params, aux_params = model.load_params(prefix, epoch)
        return BucketingModule.load_dict(sym_dict, sym_gen, default_bucket_key, arg_params, aux_params, **kwargs)

    @staticmethod
    def load_dict(sym_dict=None, sym_gen=None, default_bucket_key=None, arg_params=None, aux_params=None,
                  **kwargs):
        """A BucketingModule with known symbols per bucket key and known parameters.

        The result is not bound; :meth:`bind` gives the parameters to the default bucket.

        Parameters
        ----------
        sym_dict : dict of bucket key -> Symbol
        sym_gen : callable
            Gives the input names of each bucket (and the symbols of keys not in ``sym_dict``).
        default_bucket_key : hashable
        arg_params, aux_params : dict of str -> NDArray
        **kwargs
            Passed to the constructor.
        """
        _required(sym_dict, 'sym_dict needs to be provided for BucketingModule.load_dict')
        _required(arg_params, 'arg_params need to be provided for BucketingModule.load_dict')
        _required(aux_params, 'aux_params need to be provided for BucketingModule.load_dict')
        _required(sym_gen, 'sym_gen is required for loading BucketingModule')
        mod = BucketingModule(sym_gen, default_bucket_key, **kwargs)
        mod._saved_symbols = dict(sym_dict)
        mod._loaded_params = (arg_params, aux_params)
        mod.params_initialized = True
        return mod

    def save_checkpoint(self, prefix, epoch, remove_amp_cast=False):
        """Write ``prefix-%04d.params``, ``prefix-<key>-symbol.json`` for every bound bucket and
        ``prefix.buckets`` (the keys, as int32: numeric keys only).

        Raises
        ------
        AssertionError
            When no bucket is bound.
        """
        if not self._buckets:
            raise AssertionError('Empty BucketingModule cannot be saved')
        arg_params, aux_params = self.get_params()
        model.save_checkpoint(prefix, epoch, None, arg_params, aux_params)
        for key, module in self._buckets.items():
            module.symbol.save('%s-%s-symbol.json' % (prefix, key), remove_amp_cast=remove_amp_cast)
        nd.save('%s.buckets' % prefix, nd.array(list(self._buckets), dtype='int32'))

    # -------------------------------------------------------------- properties
    @property
    def data_names(self):
        """Data input names of the current bucket (of the default bucket before binding)."""
        return self._curr_module.data_names if self.binded else self._data_names

    @property
    def output_names(self):
        """Output names of the current bucket (of the default bucket before binding)."""
        return self._curr_module.output_names if self.binded else self._output_names

    @property
    def data_shapes(self):
        """The current bucket's data inputs, as DataDescs."""
        self._require('binded')
        return self._curr_module.data_shapes

    @property
    def label_shapes(self):
        """The current bucket's label inputs, as DataDescs (None without labels)."""
        self._require('binded')
        return self._curr_module.label_shapes

    @property
    def output_shapes(self):
        """``[(output name, shape)]`` of the current bucket."""
        self._require('binded')
        return self._curr_module.output_shapes

    @property
    def symbol(self):
        """The current bucket's Symbol."""
        self._require('binded')
        return self._curr_module.symbol

    # -------------------------------------------------------------- parameters
    def _sync_params(self):
        """Refresh the host copies of the parameters after updates in any bucket.

        All buckets share the device arrays and the host dicts, but each Module only knows of
        its own updates, so the BucketingModule keeps the flag that covers them all.
        """
        if self._params_dirty:
            self._curr_module._sync_params_from_devices()
            self._params_dirty = False

    def get_params(self):
        """``(arg_params, aux_params)``: the shared parameters, on the host."""
        self._require('binded', 'params_initialized')
        self._sync_params()
        return self._curr_module.get_params()

    def init_params(self, initializer=Uniform(0.01), arg_params=None, aux_params=None, allow_missing=False,
                    force_init=False, allow_extra=False):
        """Initialize the shared parameters (see :meth:`Module.init_params`); ignored when
        already initialized unless ``force_init``."""
        if self.params_initialized and not force_init:
            return
        self._require('binded')
        self._curr_module.init_params(initializer=initializer, arg_params=arg_params, aux_params=aux_params,
                                      allow_missing=allow_missing, force_init=force_init, allow_extra=allow_extra)
        self._params_dirty = False
        self.params_initialized = True

    def set_params(self, arg_params, aux_params, allow_missing=False, force_init=True, allow_extra=False):
        """Assign the shared parameters (see :meth:`Module.set_params`)."""
        self._require('binded')
        self._curr_module.set_params(arg_params, aux_params, allow_missing=allow_missing, force_init=force_init,
                                     allow_extra=allow_extra)
        # With allow_missing the values go to the devices only: the host copies are stale.
        self._params_dirty = self._curr_module._params_dirty
        self.params_initialized = True

    def get_states(self, merge_multi_context=True):
        """The current bucket's state arrays (see ``state_names``)."""
        self._require('binded', 'params_initialized')
        return self._curr_module.get_states(merge_multi_context)

    def set_states(self, states=None, value=None):
        """Set the current bucket's states from arrays or to the scalar ``value``."""
        self._require('binded', 'params_initialized')
        self._curr_module.set_states(states, value)

    # ----------------------------------------------------------------- binding
    def bind(self, data_shapes, label_shapes=None, for_training=True, inputs_need_grad=False,
             force_rebind=False, shared_module=None, grad_req='write'):
        """Bind the default bucket (the other buckets are bound as batches meet them).

        Parameters
        ----------
        data_shapes, label_shapes : list of DataDesc or (name, shape)
            Input shapes of the default bucket.
        for_training, inputs_need_grad, grad_req
            See :meth:`Module.bind`; every bucket is bound alike.
        force_rebind : bool
            Drop every bucket and bind the default one again, keeping the parameter values
            (the optimizer must be initialized again).
        shared_module : None
            Unused (as in MXNet).
        """
        if self.binded and not force_rebind:
            self.logger.warning('Already bound, ignoring bind()')
            return
        kept_params = self.get_params() if self.binded and self.params_initialized else self._loaded_params
        self._reset_bind()
        module = self._new_module(self._default_bucket_key)
        module.bind(data_shapes, label_shapes, for_training, inputs_need_grad, grad_req=grad_req)
        if kept_params is not None:
            module.set_params(*kept_params)
        self._loaded_params = None
        self._grad_req = grad_req
        self.for_training, self.inputs_need_grad = for_training, inputs_need_grad
        self._add_bucket(self._default_bucket_key, module)
        self._curr_module, self._curr_bucket_key = module, self._default_bucket_key
        self.binded = True

    def _new_module(self, bucket_key):
        """An unbound Module for ``bucket_key``."""
        symbol, data_names, label_names = self._call_sym_gen(bucket_key)
        symbol = self._saved_symbols.get(bucket_key, symbol)
        return Module(symbol, data_names, label_names, **self._module_kwargs)

    def _add_bucket(self, bucket_key, module):
        """Register the newly bound module of ``bucket_key`` (the installed monitor watches it too)."""
        if self._monitor is not None:
            module.install_monitor(self._monitor)
        self._buckets[bucket_key] = module

    def switch_bucket(self, bucket_key, data_shapes, label_shapes=None):
        """Make ``bucket_key`` the current bucket, binding its module on first use.

        A new bucket's module shares the parameter arrays of the default bucket's module and
        borrows its optimizer.

        Parameters
        ----------
        bucket_key : hashable
        data_shapes, label_shapes : list of DataDesc or (name, shape)
            Input shapes of that bucket (only used when it is new), e.g. a batch's
            ``provide_data``/``provide_label``.

        Raises
        ------
        AssertionError
            Before :meth:`bind`.
        ValueError
            For a new bucket without ``data_shapes``, or before the parameters are initialized.
        """
        if not self.binded:
            raise AssertionError('call bind before switching bucket')
        module = self._buckets.get(bucket_key)
        if module is None:
            if data_shapes is None:
                raise ValueError('switch_bucket: bucket %r is new and needs data_shapes (a batch of a new '
                                 'bucket must give provide_data)' % (bucket_key,))
            module = self._new_module(bucket_key)
            module.bind(data_shapes, label_shapes, self.for_training, self.inputs_need_grad,
                        shared_module=self._buckets[self._default_bucket_key], grad_req=self._grad_req)
            self._add_bucket(bucket_key, module)
        self._curr_module, self._curr_bucket_key = module, bucket_key

    def prepare(self, data_batch, sparse_row_id_fn=None):
        """Bind the bucket of ``data_batch`` ahead of its forward pass (the current bucket
        stays), and pull the rows ``sparse_row_id_fn`` gives (see :meth:`Module.prepare`)."""
        self._require('binded', 'params_initialized')
        current_key = self._curr_bucket_key
        self._switch_to_batch(data_batch)
        self._curr_module.prepare(data_batch, sparse_row_id_fn=sparse_row_id_fn)
        self.switch_bucket(current_key, None)

    def _switch_to_batch(self, data_batch):
        """Switch to the batch's bucket (the default one for a batch without ``bucket_key``)."""
        key = self._default_bucket_key if data_batch.bucket_key is None else data_batch.bucket_key
        self.switch_bucket(key, data_batch.provide_data, data_batch.provide_label)

    # --------------------------------------------------------------- optimizer
    def init_optimizer(self, kvstore='local', optimizer='sgd', optimizer_params=(('learning_rate', 0.01),),
                       force_init=False):
        """Set up one optimizer (see :meth:`Module.init_optimizer`) that every bucket uses."""
        self._require('binded', 'params_initialized')
        if self.optimizer_initialized and not force_init:
            self.logger.warning('optimizer already initialized, ignoring.')
            return
        # The KVStore starts from the host copies: they must hold the latest values.
        self._sync_params()
        self._curr_module.init_optimizer(kvstore, optimizer, optimizer_params, force_init=force_init)
        for module in self._buckets.values():
            if module is not self._curr_module:
                module.borrow_optimizer(self._curr_module)
        self.optimizer_initialized = True

    # ----------------------------------------------------------------- running
    def forward(self, data_batch, is_train=None):
        """Switch to the batch's bucket (see :meth:`switch_bucket`) and compute its outputs.

        Parameters
        ----------
        data_batch : DataBatch
            Its ``bucket_key`` picks the bucket (None: the default bucket); a new bucket is
            bound with the batch's ``provide_data``/``provide_label``.
        is_train : bool, optional
            Defaults to ``for_training``.
        """
        self._require('binded', 'params_initialized')
        self._switch_to_batch(data_batch)
        self._curr_module.forward(data_batch, is_train=is_train)

    def backward(self, out_grads=None):
        """Gradients of the current bucket's last forward."""
        self._require('binded', 'params_initialized')
        self._curr_module.backward(out_grads=out_grads)

    def update(self):
        """One optimizer step on the shared parameters with the current bucket's gradients."""
        self._require('binded', 'params_initialized', 'optimizer_initialized')
        self._params_dirty = True
        self._curr_module.update()

    def get_outputs(self, merge_multi_context=True):
        """The outputs of the current bucket's last forward."""
        self._require('binded', 'params_initialized')
        return self._curr_module.get_outputs(merge_multi_context)

    def get_input_grads(self, merge_multi_context=True):
        """Gradients of the current bucket's data inputs (bind with ``inputs_need_grad=True``)."""
        self._require('binded', 'params_initialized', 'inputs_need_grad')
        return self._curr_module.get_input_grads(merge_multi_context)

    def update_metric(self, eval_metric, labels, pre_sliced=False):
        """Accumulate the current bucket's last outputs against ``labels``."""
        self._require('binded', 'params_initialized')
        self._curr_module.update_metric(eval_metric, labels, pre_sliced)

    def install_monitor(self, monitor):
        """Let ``monitor`` watch the executors of every bucket, present and future."""
        self._require('binded')
        self._monitor = monitor
        for module in self._buckets.values():
            module.install_monitor(monitor)
