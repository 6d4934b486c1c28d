"""Gluon parameters: :class:`Parameter`, :class:`Constant` and :class:`ParameterDict`.

A Parameter owns one NDArray per context it is initialized on (each with its own gradient
buffer, attached with the parameter's ``grad_req``). A shape may contain unknown
dimensions (0): such a parameter, created with ``allow_deferred_init=True``, only records
the initializer when ``initialize`` is called; the first forward pass of its block
completes the shape (from the operator's ``infer_args``) and initializes it then.
"""
import threading
import warnings
from collections import OrderedDict

import numpy as np

from .. import autograd, initializer, ndarray
from .._thread_switches import ThreadCount
from ..base import MXNetError, torch_dtype
from ..context import as_context, as_context_list, cpu, current_context
from ..ndarray.sparse_arrays import with_stype
from ..ndarray.utils import load_named
from ..util import is_np_array, is_np_shape

__all__ = ['DeferredInitializationError', 'Parameter', 'Constant', 'ParameterDict',
           'tensor_types']

tensor_types = (ndarray.NDArray,)
_GRAD_REQS = ('write', 'add', 'null')
_STYPES = ('default', 'row_sparse', 'csr')

# Bumped whenever any Parameter gets new arrays or a new grad_req: Trainer caches the
# per-step lists it derives from them and rebuilds them only when this changes.
_layout_version = 0


# Held while a deferred parameter initializes, so that threads racing through a network's
# first call initialize each parameter once.
_DEFERRED_INIT_LOCK = threading.RLock()


def _layout_changed():
    global _layout_version
    _layout_version += 1


class DeferredInitializationError(MXNetError):
    """A parameter whose initialization is deferred was used before its shape was known.

    Example
    -------
    >>> layer = mx.gluon.nn.Dense(2)                # the input size is not known yet
    >>> layer.initialize()
    >>> try:
    ...     layer.weight.data()
    ... except mx.gluon.parameter.DeferredInitializationError:
    ...     print('deferred until the first forward pass')
    deferred until the first forward pass
    >>> _ = layer(mx.nd.ones((1, 3)))
    >>> layer.weight.data().shape
    (2, 3)
    """


class _SymbolicData(threading.local):
    """Set while a block written as ``forward`` is traced: ``Parameter.data()`` is then the
    parameter's variable (an ``mx.sym.np._Symbol``), as MXNet 2.0's deferred compute gives."""
    active = False


_SYMBOLIC_DATA = _SymbolicData()
# the threads inside a symbolic_data scope: while none is, Parameter.data skips the thread-local read
_SYMBOLIC_THREADS = ThreadCount()
_SYMBOLIC_ON = _SYMBOLIC_THREADS.on


class symbolic_data:  # pylint: disable=invalid-name
    """``with`` scope in which :meth:`Parameter.data` returns the parameter's variable.

    Example
    -------
    >>> p = mx.gluon.Parameter('w', shape=(2,))
    >>> p.initialize()
    >>> with mx.gluon.parameter.symbolic_data():
    ...     type(p.data()).__name__, p.data().name
    ('_Symbol', 'w')
    """

    def __enter__(self):
        self._previous = _SYMBOLIC_DATA.active
        _SYMBOLIC_THREADS.turned(self._previous, True)
        _SYMBOLIC_DATA.active = True
        return self

    def __exit__(self, *exc):
        _SYMBOLIC_DATA.active = self._previous
        _SYMBOLIC_THREADS.turned(True, self._previous)


def shape_is_known(shape):
    """Whether ``shape`` is given and has no unknown (0 or negative) dimension."""
    if shape is None:
        return False
    return all(d > 0 for d in shape)


def _as_ctx_list(ctx):
    """``None`` -> [current context]; a Context (or 'cpu(0)') -> [it]; a list stays a list."""
    return as_context_list(ctx)


def _brief_print_list(names, limit=7):
    """``'a', 'b', ..., 'z'``: a list of names short enough for an error message."""
    names = list(names)
    if len(names) > limit:
        return _brief_print_list(names[:limit // 2], limit) + ', ..., ' + \
            _brief_print_list(names[-limit // 2:], limit)
    return ', '.join("'%s'" % str(n) for n in names)


class Parameter:
    """A weight of a Block: its arrays on every context, their gradients, and how to train it.

    Parameters
    ----------
    name : str
        Full name (``dense0_weight``); ``.params`` files map arrays to parameters by it.
    grad_req : {'write', 'add', 'null'}
        How backward writes the gradient: overwrite, accumulate, or none at all.
    shape : int or tuple of int, optional
        0 marks a dimension unknown until the first forward pass.
    dtype : numpy dtype or str
    lr_mult, wd_mult : float
        Multipliers of the optimizer's learning rate and weight decay for this parameter.
    init : Initializer or str, optional
        Overrides the initializer given to :meth:`initialize` as ``default_init``.
    allow_deferred_init : bool
        Let :meth:`initialize` wait for the shape instead of failing on unknown dimensions.
    differentiable : bool
        False forces ``grad_req='null'``.
    stype, grad_stype : str
        Storage types of the data and the gradient ('default', 'row_sparse' or 'csr'). A
        row_sparse parameter is read with ``row_sparse_data``; its gradient is a
        RowSparseNDArray holding the rows backward touched (see ``NDArray.attach_grad``).

    Example
    -------
    >>> p = mx.gluon.Parameter('weight', shape=(2, 3))
    >>> p.initialize(mx.init.Constant(0.5), ctx=mx.cpu())
    >>> p.data()
    <BLANKLINE>
    [[0.5 0.5 0.5]
     [0.5 0.5 0.5]]
    <NDArray 2x3 @cpu(0)>
    >>> p.grad().shape, p.grad_req
    ((2, 3), 'write')
    """

    def __init__(self, name, grad_req='write', shape=None, dtype=np.float32, lr_mult=1.0,
                 wd_mult=1.0, init=None, allow_deferred_init=False, differentiable=True,
                 stype='default', grad_stype='default'):
        self._var = None
        self._data = None
        self._arrays_by_ctx = {}
        self._deferred_init = ()
        self._differentiable = differentiable
        self._allow_deferred_init = allow_deferred_init
        self._grad_req = None
        self._trainer = None
        if isinstance(shape, int):
            shape = (shape,)
        self._shape = shape
        self.name = name
        torch_dtype(dtype, "Parameter '%s'" % name)      # refused now rather than at initialize()
        self._dtype = dtype
        self.lr_mult = lr_mult
        self.wd_mult = wd_mult
        self.grad_req = grad_req
        self.init = init
        for kind, value in (('stype', stype), ('grad_stype', grad_stype)):
            assert value in _STYPES, "%s for Parameter '%s' must be one of %s, but got '%s'" % (
                kind, name, _STYPES, value)
        self._stype = stype
        self._grad_stype = grad_stype

    def __repr__(self):
        return 'Parameter %s (shape=%s, dtype=%s)' % (self.name, self.shape, self.dtype)

    # ------------------------------------------------------------ properties
    @property
    def grad_req(self):
        """'write', 'add' or 'null'; changing it re-attaches the gradient buffers."""
        return self._grad_req

    @grad_req.setter
    def grad_req(self, req):
        assert req in _GRAD_REQS, \
            "grad_req must be one of 'write', 'add', or 'null', but got '%s'" % req
        if not self._differentiable:
            req = 'null'
        if self._grad_req == req:
            return
        self._grad_req = req
        _layout_changed()
        if self._data is not None:
            for arr in self._data:
                if req != 'null' and arr._grad is None and self._grad_stype == 'row_sparse':
                    arr.attach_grad(req, stype='row_sparse')
                else:
                    autograd.set_grad_req(arr, req)

    @property
    def dtype(self):
        """The dtype as given (a numpy type or a name); setting it casts the arrays."""
        return self._dtype

    @dtype.setter
    def dtype(self, dtype):
        self.cast(dtype)

    @property
    def shape(self):
        """The shape; unknown dimensions are 0, or -1 under NumPy shape semantics (where 0 is
        a size), as in MXNet."""
        if self._shape is not None and is_np_shape() and 0 in self._shape:
            return tuple(-1 if d == 0 else d for d in self._shape)
        return self._shape

    @shape.setter
    def shape(self, new_shape):
        new_shape = tuple(0 if d == -1 else d for d in new_shape)     # -1: NumPy semantics' unknown
        if self._shape is not None:
            assert len(self._shape) == len(new_shape) and all(
                old in (0, new) for new, old in zip(new_shape, self._shape)), \
                "Expected shape %s is incompatible with given shape %s for Parameter '%s'." % (
                    str(new_shape), str(self._shape), self.name)
        self._shape = new_shape

    @property
    def stype(self):
        return self._stype

    # -------------------------------------------------------- initialization
    def initialize(self, init=None, ctx=None, default_init=initializer.Uniform(), force_reinit=False):
        """Create the arrays on ``ctx`` (a Context or a list) and fill them.

        Parameters
        ----------
        init : Initializer or str, optional
            Used when given; else the parameter's own ``init``; else ``default_init``.
        ctx : Context or list of Context, optional
            Defaults to the current context.
        default_init : Initializer
        force_reinit : bool
            Re-initialize an initialized parameter; without it a second call only warns.
        """
        if self._data is not None and not force_reinit:
            warnings.warn("Parameter '%s' is already initialized, ignoring. Set force_reinit=True "
                          "to re-initialize." % self.name, stacklevel=2)
            return
        self._set_arrays(None)
        ctx = _as_ctx_list(ctx)
        if init is None:
            init = default_init if self.init is None else self.init
        self._deferred_init = (init, ctx, default_init, None)
        if not shape_is_known(self._shape):
            if self._allow_deferred_init:
                return
            self._deferred_init = ()
            raise ValueError("Cannot initialize Parameter '%s' because it has invalid shape: %s."
                             % (self.name, str(self._shape)))
        self._finish_deferred_init()

    def _finish_deferred_init(self):
        """Initialize now that the shape is known (a no-op unless initialization is pending).

        Threads calling a network for the first time at once initialize it once: the others
        wait here until the arrays are in place.
        """
        if not self._deferred_init:
            return
        with _DEFERRED_INIT_LOCK:
            if not self._deferred_init:         # another thread initialized it meanwhile
                return
            init, ctx, default_init, data = self._deferred_init
            if not shape_is_known(self._shape):
                self._deferred_init = ()
                raise DeferredInitializationError(
                    "Cannot initialize Parameter '%s' because it has invalid shape: %s. Please "
                    "specify in_units, in_channels, etc for `Block`s." % (self.name, str(self._shape)))
            with autograd.pause():
                if data is None:
                    data = ndarray.zeros(self._shape, dtype=self._dtype, ctx=cpu())
                    initializer.create(default_init)(
                        initializer.InitDesc(self.name, {'__init__': init}), data)
                self._init_impl(data, ctx)
            self._deferred_init = ()

    def _init_impl(self, data, ctx_list):
        """Copy ``data`` onto every context of ``ctx_list`` and attach gradients: ``mx.np``
        arrays under NumPy array semantics, as MXNet creates them."""
        arrays = [data.copyto(ctx) for ctx in ctx_list]
        if is_np_array():
            arrays = [a.as_np_ndarray() for a in arrays]
        self._set_arrays(arrays)

    def _set_arrays(self, arrays):
        """Install per-context arrays (or ``None``) and attach their gradient buffers."""
        if arrays is not None and self._stype != 'default':
            arrays = [with_stype(a._t, a.context, self._stype) for a in arrays]
        if arrays is not None and self._grad_req != 'null':
            # a row_sparse gradient is one from the start: it holds only the rows backward used
            grad_stype = 'row_sparse' if self._grad_stype == 'row_sparse' else None
            for arr in arrays:
                arr.attach_grad(self._grad_req, stype=grad_stype)
        # Complete before published: other threads read ``_data`` without a lock.
        self._arrays_by_ctx = {} if arrays is None else {a.context: a for a in arrays}
        self._data = arrays
        _layout_changed()

    def _load_init(self, data, ctx, cast_dtype=False, dtype_source='current'):
        """Set the parameter from a loaded array: checks shape and dtype, initializes if needed.

        Raises
        ------
        AssertionError
            When the saved shape or dtype does not fit (MXNet's error type).
        """
        if cast_dtype:
            assert dtype_source in ('current', 'saved'), \
                "dtype_source must be 'current' or 'saved', got %r" % (dtype_source,)
        if self._shape:
            assert len(self._shape) == len(data.shape) and all(
                mine in (0, saved) for mine, saved in zip(self._shape, data.shape)), \
                "Failed loading Parameter '%s' from saved params: shape incompatible expected %s " \
                "vs saved %s" % (self.name, str(self._shape), str(data.shape))
            self._shape = tuple(data.shape)
        if np.dtype(self._dtype) != np.dtype(data.dtype):     # (bfloat16 is a structured dtype)
            assert cast_dtype, (
                "Failed loading Parameter '%s' from saved params: dtype incompatible expected %s "
                "vs saved %s. Set cast_dtype=True to cast the dtype of saved params."
                % (self.name, str(self._dtype), str(data.dtype)))
            if dtype_source == 'current':
                data = data.astype(self._dtype, copy=False)
            else:
                self.dtype = data.dtype     # casts arrays already there, as MXNet does
        ctx = None if ctx is None else _as_ctx_list(ctx)
        if self._data is None:
            if self._deferred_init:
                assert ctx is None or set(ctx) == set(self._deferred_init[1]), \
                    "Failed to load Parameter '%s' on %s because it was previous initialized on %s." \
                    % (self.name, str(ctx), str(self.list_ctx()))
                ctx = self._deferred_init[1]
            elif ctx is None:
                ctx = [cpu()]
            with autograd.pause():
                self._init_impl(data, ctx)
        else:
            assert ctx is None or set(ctx) == set(self.list_ctx()), \
                "Failed to load Parameter '%s' on %s because it was previous initialized on %s." \
                % (self.name, str(ctx), str(self.list_ctx()))
            self.set_data(data)
        self._deferred_init = ()

    # ---------------------------------------------------------------- access
    def _state(self):
        """``(arrays, pending)``: the per-context arrays (None before initialization) and the
        pending deferred initialization (``()`` when none), consistent while another thread
        may be initializing the parameter (its first forward pass in several threads).

        Initialization publishes ``_data`` before it clears ``_deferred_init``, so they are
        read in the other order: read first, ``_data`` could be None and ``_deferred_init``
        cleared by the time it is read, a parameter that looks never initialized.
        """
        arrays = self._data
        if arrays is not None:
            return arrays, ()
        pending = self._deferred_init
        return self._data, pending

    def _ready_arrays(self):
        """The per-context arrays; the error saying why there are none otherwise."""
        arrays, pending = self._state()
        if arrays is None:
            raise self._not_ready_error(pending)
        return arrays

    def _not_ready_error(self, pending):
        if pending:
            return DeferredInitializationError(
                "Parameter '%s' has not been initialized yet because initialization was deferred. "
                "Actual initialization happens during the first forward pass. Please pass one "
                "batch of data through the network before accessing Parameters. You can also "
                "avoid deferred initialization by specifying in_units, num_features, etc., for "
                "network layers." % self.name)
        return RuntimeError(
            "Parameter '%s' has not been initialized. Note that you should initialize parameters "
            "and create Trainer with Block.collect_params() instead of Block.params because the "
            "later does not include Parameters of nested child Blocks" % self.name)

    def data(self, ctx=None):
        """The array on ``ctx`` (the only one when initialized on one context).

        Raises
        ------
        DeferredInitializationError
            Before the first forward pass of a deferred parameter.
        RuntimeError
            Before :meth:`initialize`, or for a context it was not initialized on.
        """
        if _SYMBOLIC_ON[0] and _SYMBOLIC_DATA.active:    # a block written as forward, being traced
            return self.var().as_np_ndarray()
        self._check_dense_access('data')
        return self._array_on(ctx)

    def _check_dense_access(self, method):
        if self._stype != 'default':
            raise RuntimeError(
                "Cannot return a copy of Parameter '%s' via %s() because its storage type is %s. "
                "Please use row_sparse_data() instead." % (self.name, method, self._stype))

    def _array_on(self, ctx):
        """The array on ``ctx`` whatever the storage type (what Trainer and saving use)."""
        arrays = self._data
        if arrays is None:
            arrays = self._ready_arrays()
        if ctx is None:
            if len(arrays) == 1:
                return arrays[0]
            ctx = current_context()
        elif isinstance(ctx, str):
            ctx = as_context(ctx)
        arr = self._arrays_by_ctx.get(ctx)
        if arr is None:
            raise RuntimeError("Parameter '%s' was not initialized on context %s. It was only "
                               "initialized on %s." % (self.name, str(ctx), str(self.list_ctx())))
        return arr

    def list_data(self):
        """The arrays on every context, in context order."""
        self._check_dense_access('list_data')
        return self._list_arrays()

    def _list_arrays(self):
        """The arrays on every context whatever the storage type."""
        return list(self._ready_arrays())

    def _check_row_sparse_access(self, method):
        if self._stype != 'row_sparse':
            raise RuntimeError(
                "Cannot return a copy of Parameter '%s' via %s() because its storage type is %s. "
                "Please use data() instead." % (self.name, method, self._stype))
        if self._trainer is None:
            raise RuntimeError("Cannot get row_sparse data for Parameter '%s' when no Trainer "
                               "is created with it." % self.name)

    def row_sparse_data(self, row_id):
        """The rows ``row_id`` of a row_sparse parameter, on ``row_id``'s context.

        The rows are pulled from the Trainer's KVStore first, as MXNet does; other rows are
        zero.

        Raises
        ------
        RuntimeError
            For a parameter whose storage type is not row_sparse, or with no Trainer.
        """
        self._check_row_sparse_access('row_sparse_data')
        return self._pulled_rows(row_id.context, row_id)

    def list_row_sparse_data(self, row_id):
        """``row_sparse_data(row_id)`` on every context of the parameter."""
        self._check_row_sparse_access('list_row_sparse_data')
        return [self._pulled_rows(ctx, row_id) for ctx in self.list_ctx()]

    def _pulled_rows(self, ctx, row_id):
        # as MXNet: the parameter's own array (the one its gradient is recorded against), after
        # the store has written the requested rows into it
        arr = self._array_on(ctx)
        self._trainer._row_sparse_pull(self, arr, row_id)
        return arr

    @property
    def _grad(self):
        """The gradient buffers (None before initialization or with grad_req 'null')."""
        if self._data is None or self._grad_req == 'null':
            return None
        return self.list_grad()

    def _check_grad_available(self):
        if self._data is not None and self._grad_req == 'null':
            raise RuntimeError("Cannot get gradient array for Parameter '%s' because "
                               "grad_req='null'" % self.name)

    def grad(self, ctx=None):
        """The gradient buffer on ``ctx``; RuntimeError when ``grad_req='null'``."""
        self._check_grad_available()
        return self._with_grad_stype(self._array_on(ctx).grad)

    def _with_grad_stype(self, grad):
        if grad is None or grad.stype == self._grad_stype:
            return grad
        return with_stype(grad._t, grad.context, self._grad_stype)

    def list_grad(self):
        """The gradient buffers on every context."""
        self._check_grad_available()
        return [self._with_grad_stype(arr.grad) for arr in self._list_arrays()]

    def list_ctx(self):
        """The contexts the parameter is (or, deferred, will be) initialized on."""
        arrays, pending = self._state()
        if arrays is None:
            if pending:
                return list(pending[1])
            raise RuntimeError("Parameter '%s' has not been initialized" % self.name)
        return [arr.context for arr in arrays]

    def set_data(self, data):
        """Write ``data`` (NDArray or numpy) into the arrays on every context."""
        self.shape = data.shape
        if self._data is None:
            assert self._deferred_init, "Parameter '%s' has not been initialized" % self.name
            if not isinstance(data, ndarray.NDArray):
                data = ndarray.array(data, dtype=self._dtype)
            self._deferred_init = self._deferred_init[:3] + (data,)
            return
        trainer = self._trainer
        if trainer is not None and getattr(trainer, '_kv_initialized', False) and \
                getattr(trainer, '_update_on_kvstore', False):
            trainer._reset_kvstore()     # the store holds the weights: make it re-read them
        for arr in self._data:
            arr[:] = data      # a graph recorded before reads the new value in its backward, as MXNet's

    def zero_grad(self):
        """Set the gradient buffers to 0 (nothing to do with ``grad_req='null'``)."""
        if self._data is None or self._grad_req == 'null':
            return
        for arr in self._data:
            arr.grad[:] = 0

    def _reduce(self):
        """The mean of the per-context arrays, on cpu(0): what is saved."""
        arrays = self._list_arrays()
        if len(arrays) == 1:
            return arrays[0].copyto(cpu())
        return ndarray.add_n(*[a.copyto(cpu()) for a in arrays]) / len(arrays)

    def reset_ctx(self, ctx):
        """Move the parameter to other contexts (the values are kept; several are averaged)."""
        ctx = _as_ctx_list(ctx)
        if self._data is not None:
            data = self._reduce()
            with autograd.pause():
                self._init_impl(data, ctx)
        elif self._deferred_init:
            init, _, default_init, data = self._deferred_init
            self._deferred_init = (init, ctx, default_init, data)
        else:
            raise ValueError("Cannot reset context for Parameter '%s' because it has not been "
                             "initialized." % self.name)

    def cast(self, dtype):
        """Convert the arrays (and gradients) to ``dtype``."""
        torch_dtype(dtype, "Parameter '%s': cast" % self.name)
        self._dtype = dtype
        if self._data is None:
            return
        with autograd.pause():
            self._set_arrays([arr.astype(dtype) for arr in self._data])

    def _set_trainer(self, trainer):
        """Remember the Trainer that updates this parameter (set_data resets its KVStore).
        A sparse parameter's rows live in its Trainer's store: a second Trainer is refused."""
        if self._stype != 'default' and trainer is not None and self._trainer is not None \
                and self._trainer is not trainer:
            raise RuntimeError("Failed to set the trainer for Parameter '%s' because it was already set. "
                               "More than one trainers for a %s Parameter is not supported."
                               % (self.name, self._stype))
        self._trainer = trainer

    def var(self):
        """The Symbol variable of this parameter (name, shape, dtype, lr/wd multipliers, init)."""
        if self._var is None:
            from .. import symbol
            self._var = symbol.var(self.name, shape=self.shape, dtype=self.dtype,
                                   lr_mult=self.lr_mult, wd_mult=self.wd_mult, init=self.init,
                                   stype=self._stype)
        return self._var


class _ValueInit(initializer.Initializer):
    """Copies a fixed array: how a :class:`Constant` initializes."""

    def __init__(self, value):
        super().__init__()
        self.value = value

    def _init_weight(self, _, arr):
        arr[:] = self.value


class Constant(Parameter):
    """A parameter that keeps a fixed value and never receives a gradient.

    Parameters
    ----------
    name : str
    value : NDArray or array-like

    Example
    -------
    >>> class Scale(mx.gluon.HybridBlock):
    ...     def __init__(self, **kwargs):
    ...         super().__init__(**kwargs)
    ...         self.factor = self.params.get_constant('factor', [[2.0, 3.0]])
    ...     def hybrid_forward(self, F, x, factor):
    ...         return F.broadcast_mul(x, factor)
    >>> block = Scale(prefix='scale_')
    >>> block.initialize()
    >>> block(mx.nd.ones((1, 2)))
    <BLANKLINE>
    [[2. 3.]]
    <NDArray 1x2 @cpu(0)>
    >>> block.factor
    Constant scale_factor (shape=(1, 2), dtype=<class 'numpy.float32'>)
    >>> block.factor.grad_req
    'null'
    """

    def __init__(self, name, value):
        if not isinstance(value, ndarray.NDArray):
            value = ndarray.array(value)
        self.value = value
        super().__init__(name, grad_req='null', shape=value.shape, dtype=value.dtype,
                         init=_ValueInit(value))

    def __repr__(self):
        return 'Constant %s (shape=%s, dtype=%s)' % (self.name, self.shape, self.dtype)

    @property
    def grad_req(self):
        return 'null'

    @grad_req.setter
    def grad_req(self, req):
        if req != 'null':
            warnings.warn('Constant parameter "%s" does not support grad_req other than "null", '
                          'and new value "%s" is ignored.' % (self.name, req))
        self._grad_req = 'null'


class ParameterDict:
    """An ordered dict of Parameters sharing a name prefix.

    Parameters
    ----------
    prefix : str
        Prepended to the names given to :meth:`get`.
    shared : ParameterDict, optional
        Parameters looked up there first, so blocks can share weights.

    Example
    -------
    >>> params = mx.gluon.ParameterDict('net_')
    >>> weight = params.get('weight', shape=(2, 3))
    >>> params
    net_ (
      Parameter net_weight (shape=(2, 3), dtype=<class 'numpy.float32'>)
    )
    >>> params.get('weight') is weight, list(params.keys())
    (True, ['net_weight'])
    >>> params.initialize(mx.init.One())
    >>> params['net_weight'].data().sum()
    <BLANKLINE>
    [6.]
    <NDArray 1 @cpu(0)>
    >>> shared = mx.gluon.ParameterDict('net_', shared=params)
    >>> shared.get('weight') is weight          # net_weight is found in the shared dict
    True
    """

    def __init__(self, prefix='', shared=None):
        self._prefix = prefix
        self._params = OrderedDict()
        self._shared = shared

    def __repr__(self):
        lines = ['  ' + repr(p) for p in self._params.values()]
        return '%s(\n%s\n)' % (self._prefix + ' ' if self._prefix else '', '\n'.join(lines))

    def __getitem__(self, key):
        return self._params[key]

    def __iter__(self):
        return iter(self._params)

    def __len__(self):
        return len(self._params)

    def __contains__(self, key):
        return key in self._params

    def items(self):
        return self._params.items()

    def keys(self):
        return self._params.keys()

    def values(self):
        return self._params.values()

    @property
    def prefix(self):
        """The prefix of the names this dict creates."""
        return self._prefix

    def _get_impl(self, name):
        if name in self._params:
            return self._params[name]
        if self._shared is not None and name in self._shared._params:
            self._params[name] = self._shared._params[name]
            return self._params[name]
        return None

    def get(self, name, **kwargs):
        """The parameter ``prefix + name``, created with ``kwargs`` if absent.

        For an existing parameter, ``kwargs`` must agree with its attributes (unknown shape
        dimensions are completed from them); AssertionError otherwise.
        """
        name = self._prefix + name
        param = self._get_impl(name)
        if param is None:
            param = Parameter(name, **kwargs)
            self._params[name] = param
            return param
        for key, value in kwargs.items():
            existing = getattr(param, key, None)
            if existing is None:
                setattr(param, key, value)
            elif key == 'shape':
                param._shape = _merge_shapes(param, value)
            elif key == 'dtype':
                assert np.dtype(value) == np.dtype(existing), _mismatch(name, key, value, existing)
            else:
                assert value is None or value == existing, _mismatch(name, key, value, existing)
        return param

    def get_constant(self, name, value=None):
        """The Constant ``prefix + name``, created from ``value`` if absent.

        Raises
        ------
        KeyError
            When absent and no value is given.
        """
        name = self._prefix + name
        param = self._get_impl(name)
        if param is None:
            if value is None:
                raise KeyError("No constant named '%s'. Please specify value if you want to create "
                               "a new constant." % name)
            param = Constant(name, value)
            self._params[name] = param
        elif value is not None:
            assert isinstance(param, Constant), \
                "Parameter '%s' already exists but it is not a constant." % name
            value = value.asnumpy() if isinstance(value, ndarray.NDArray) else np.asarray(value)
            assert param.shape == value.shape and (param.value.asnumpy() == value).all(), \
                "Constant '%s' already exists but it's value doesn't match new value" % name
        return param

    def update(self, other):
        """Add the parameters of ``other``; a different parameter under the same name is an error."""
        for key, value in other.items():
            if key in self._params:
                assert self._params[key] is value, (
                    "Cannot update self with other because they have different Parameters with "
                    "the same name '%s'" % key)
        for key, value in other.items():
            self._params[key] = value

    def initialize(self, init=initializer.Uniform(), ctx=None, verbose=False, force_reinit=False):
        """Initialize every parameter; ``init`` only serves those without their own ``init``."""
        if verbose:
            init.set_verbosity(verbose=verbose)
        for param in self.values():
            param.initialize(None, ctx, init, force_reinit=force_reinit)

    def zero_grad(self):
        """Set every gradient buffer to 0."""
        for param in self.values():
            param.zero_grad()

    def reset_ctx(self, ctx):
        """Move every parameter to ``ctx``."""
        for param in self.values():
            param.reset_ctx(ctx)

    def list_ctx(self):
        """The union of the contexts of all parameters."""
        contexts = []
        for param in self.values():
            contexts.extend(c for c in param.list_ctx() if c not in contexts)
        return contexts

    def setattr(self, name, value):
        """Set attribute ``name`` (``grad_req``, ``lr_mult``...) of every parameter."""
        for param in self.values():
            setattr(param, name, value)

    def save(self, filename, strip_prefix=''):
        """Save under full names (minus ``strip_prefix``) with ``mx.nd.save``."""
        arrays = {}
        for param in self.values():
            if not param.name.startswith(strip_prefix):
                raise ValueError(
                    "Prefix '%s' is to be striped before saving, but Parameter's name '%s' does "
                    "not start with '%s'. this may be due to your Block shares parameters from "
                    "other Blocks or you forgot to use with name_scope() during init. Consider "
                    "switching to Block.collect_params.save and Block.collect_params.load instead."
                    % (strip_prefix, param.name, strip_prefix))
            arrays[param.name[len(strip_prefix):]] = param._reduce()
        ndarray.save(filename, arrays)

    def load(self, filename, ctx=None, allow_missing=False, ignore_extra=False, restore_prefix='',
             cast_dtype=False, dtype_source='current'):
        """Load arrays saved by :meth:`save` (``restore_prefix`` is prepended to their names)."""
        if restore_prefix:
            for name in self.keys():
                assert name.startswith(restore_prefix), (
                    "restore_prefix is '%s' but Parameters name '%s' does not start with '%s'"
                    % (restore_prefix, name, restore_prefix))
        self.load_dict(load_named_arrays(filename), ctx, allow_missing, ignore_extra, restore_prefix,
                       filename, cast_dtype, dtype_source)

    def load_dict(self, param_dict, ctx=None, allow_missing=False, ignore_extra=False,
                  restore_prefix='', filename=None, cast_dtype=False, dtype_source='current'):
        """Load from a dict of arrays (``arg:``/``aux:`` prefixes are dropped).

        Raises
        ------
        AssertionError
            Naming the parameter that is missing (unless ``allow_missing``) or the array that
            matches no parameter (unless ``ignore_extra``).
        """
        arrays = {restore_prefix + (k[4:] if k.startswith(('arg:', 'aux:')) else k): v
                  for k, v in param_dict.items()}
        source = 'file: %s' % filename if filename else 'param_dict'
        if not allow_missing:
            for name in self.keys():
                assert name in arrays, (
                    "Parameter '%s' is missing in %s, which contains parameters: %s. Please make "
                    "sure source and target networks have the same prefix."
                    % (name[len(restore_prefix):], source, _brief_print_list(arrays.keys())))
        for name, value in arrays.items():
            if name not in self._params:
                assert ignore_extra, (
                    "Parameter '%s' loaded from %s is not present in ParameterDict, choices are: "
                    "%s. Set ignore_extra to True to ignore. Please make sure source and target "
                    "networks have the same prefix." % (name[len(restore_prefix):], source,
                                                         _brief_print_list(self._params.keys())))
                continue
            self._params[name]._load_init(value, ctx, cast_dtype=cast_dtype,
                                          dtype_source=dtype_source)


def load_named_arrays(filename):
    """The ``{name: NDArray}`` of a parameters file (MXNetError when it has no names)."""
    return load_named(filename)


def _mismatch(name, key, desired, stored):
    return ("Cannot retrieve Parameter '%s' because desired attribute does not match with stored "
            "for attribute '%s': desired '%s' vs stored '%s'." % (name, key, str(desired), str(stored)))


def _merge_shapes(param, shape):
    """``param``'s shape with its unknown dimensions taken from ``shape`` (which must agree)."""
    stored = param.shape
    if isinstance(shape, int):
        shape = (shape,)
    assert len(shape) == len(stored) and all(
        a == b or a <= 0 or b <= 0 for a, b in zip(shape, stored)), \
        _mismatch(param.name, 'shape', shape, stored)
    return tuple(b if a <= 0 else a for a, b in zip(shape, stored))

