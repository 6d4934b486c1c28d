"""Automatic mixed precision (``mx.contrib.amp``), as in MXNet 1.9.1.

:func:`init` switches the process to mixed precision, as MXNet does: it wraps the ``mx.nd``
and ``mx.sym`` functions of the operators in MXNet's lists (and the arithmetic of NDArray
and Symbol, which MXNet routes through those functions), so that from then on

* operators of ``list_lp16_ops`` (``Convolution``, ``FullyConnected`` for bfloat16) run in
  the target dtype: their floating inputs are cast to it (``amp_cast``), except the inputs
  ``list_lp16_use_fp32_params`` keeps in float32 (BatchNorm's statistics);
* operators of ``list_fp32_ops`` (``softmax``, ``exp``, ``Flatten``...) run in float32;
* operators of ``list_conditional_fp32_ops`` do so for some attribute values (``Activation``
  with ``act_type='softrelu'``);
* operators of ``list_widest_type_cast`` (``elemwise_add``, ``concat``...) run in the widest
  type among their inputs (``amp_multicast`` in graphs);
* the others run in whatever type their inputs have.

Hybridized Gluon blocks trace their graphs through the ``mx.sym`` functions, so the casts
are nodes of their graphs, compiled like the other operators. On CPUs bfloat16
convolutions and matrix products run oneDNN's bfloat16 kernels (AMX where the CPU has it).

:func:`convert_symbol`, :func:`convert_model` and :func:`convert_hybrid_block` rewrite a
float32 graph for mixed-precision inference as MXNet's ``ReducePrecision`` pass does
(:mod:`neomx.symbol.low_precision`); the graphs they write load in MXNet 1.9.1.
"""
import contextlib
import logging

import numpy as np

from ... import ndarray, optimizer as opt, symbol
from ...base import bfloat16
from ...context import gpu
from ...gluon import HybridBlock, SymbolBlock, trainer
from ...module import BucketingModule
from ...ndarray import NDArray
from ...ndarray.ndarray import ARITHMETIC_OPERATORS
from ...symbol import Symbol
from ...symbol.low_precision import cast_inputs, multicast_inputs, reduce_precision, set_arithmetic_hook
from . import lists
from .loss_scaler import LossScaler

__all__ = ['init', 'init_trainer', 'scale_loss', 'unscale', 'convert_model',
           'convert_hybrid_block', 'list_lp16_ops', 'list_fp32_ops',
           'list_lp16_fp32_ops', 'list_conditional_fp32_ops',
           'list_widest_type_cast', 'list_loss_output_functions', 'list_lp16_use_fp32_params',
           'convert_symbol']

_FLOAT16 = np.dtype('float16')
_FLOAT32 = np.dtype('float32')
# The dtypes an NDArray is cast between, by device: MXNet casts only these.
_CASTABLE = {'cpu': (bfloat16, _FLOAT32), 'gpu': (_FLOAT16, _FLOAT32)}
_OP_NAME_PREFIXES = ('_contrib_', '_linalg_', '_sparse_', '_image_', '_random_')

# neomx's own operators that Gluon calls where MXNet calls operators of FP32_FUNCS: the
# losses' fused log_softmax and pick (MXNet: log_softmax, then pick) run in float32 too.
_NEOMX_FP32_FUNCS = ['_softmax_cross_entropy_per_position']

_amp_initialized = False
_amp_loss_scale_initialized = False
_loss_scaler = None
_restore = []       # (owner, attribute, original) of everything init replaced


# ------------------------------------------------------------------ the lists
def _is_float16(target_dtype):
    return target_dtype in ('float16', np.float16) or (isinstance(target_dtype, np.dtype)
                                                       and target_dtype == _FLOAT16)


def _lists_of(target_dtype):
    if _is_float16(target_dtype):
        return lists.symbol_fp16
    assert target_dtype in ('bfloat16', bfloat16), 'not supported type'
    return lists.symbol_bf16


def list_lp16_ops(target_dtype):
    """Get the default list of LP16 ops for AMP"""
    mod = _lists_of(target_dtype)
    return mod.FP16_FUNCS if mod is lists.symbol_fp16 else mod.BF16_FUNCS


def list_fp32_ops(target_dtype):
    """Get the default list of FP32 ops for AMP"""
    return _lists_of(target_dtype).FP32_FUNCS


def list_lp16_fp32_ops(target_dtype):
    """Get the default list of ops which run in both LP16 and FP32"""
    mod = _lists_of(target_dtype)
    return mod.FP16_FP32_FUNCS if mod is lists.symbol_fp16 else mod.BF16_FP32_FUNCS


def list_conditional_fp32_ops(target_dtype):
    """Get the conditional fp32 ops list"""
    return _lists_of(target_dtype).CONDITIONAL_FP32_FUNCS


def list_widest_type_cast(target_dtype):
    """Get the widest type cast ops list"""
    return _lists_of(target_dtype).WIDEST_TYPE_CASTS


def list_loss_output_functions(target_dtype):
    """Get loss function list"""
    return _lists_of(target_dtype).LOSS_OUTPUT_FUNCTIONS


def list_lp16_use_fp32_params(target_dtype):
    """Get the params restrict for LP16"""
    mod = _lists_of(target_dtype)
    return None if mod is lists.symbol_fp16 else mod.BF16_USE_FP32_PARAMS


def _mxnet_op_names():
    """Every operator name of MXNet's lists: names neomx may lack an operator for."""
    names = set()
    for mod in (lists.symbol_fp16, lists.symbol_bf16):
        for value in vars(mod).values():
            if isinstance(value, list):
                names.update(v[0] if isinstance(v, tuple) else v for v in value)
    return names


# ----------------------------------------------------------------- the casts
def _cast(value, dtype):
    """MXNet's ``_cast_symbol_NDArray``: a Symbol gets an ``amp_cast``; an NDArray is cast
    when it is of another of the floating dtypes of its device; anything else is returned."""
    if isinstance(value, Symbol):
        return _ORIGINAL_SYM_AMP_CAST(value, dtype=dtype)
    if isinstance(value, NDArray):
        current = np.dtype(value.dtype)
        if current != dtype and current in _CASTABLE.get(value.context.device_type, _CASTABLE['gpu']):
            return _ORIGINAL_ND_AMP_CAST(value, dtype=dtype)
    return value


_ORIGINAL_ND_AMP_CAST = ndarray.amp_cast
_ORIGINAL_SYM_AMP_CAST = symbol.amp_cast


def _condition_fails(cond_arg, kwargs):
    return cond_arg is not None and (cond_arg[0] not in kwargs or kwargs[cond_arg[0]] not in cond_arg[1])


def _named_like(wrapper, f):
    wrapper.__name__, wrapper.__doc__ = f.__name__, f.__doc__
    wrapper.__module__ = getattr(f, '__module__', None)
    wrapper.__wrapped__ = f
    spec = getattr(f, 'spec', None)
    if spec is not None:
        # the same operator: Gluon's deferred initialisation reads its inputs from the spec
        wrapper.spec = spec
    return wrapper


def _ndarray_wrapper(f, dtype, fp32_param=None, cond_arg=None):
    """``f`` with its NDArray arguments cast to ``dtype`` (those ``fp32_param`` names kept)."""
    def wrapped(*args, **kwargs):
        if _condition_fails(cond_arg, kwargs):
            return f(*args, **kwargs)
        if fp32_param:
            args = tuple(x if i < len(fp32_param) and fp32_param[i] else _cast(x, dtype)
                         for i, x in enumerate(args))
            kwargs = {k: v if k in fp32_param else _cast(v, dtype) for k, v in kwargs.items()}
        else:
            args = tuple(_cast(x, dtype) for x in args)
            kwargs = {k: _cast(v, dtype) for k, v in kwargs.items()}
        return f(*args, **kwargs)
    return _named_like(wrapped, f)


def _symbol_wrapper(f, dtype, fp32_param=None, cond_arg=None):
    """``f`` whose node reads its inputs through ``amp_cast`` to ``dtype`` (auxiliary states
    and the ``fp32_param`` inputs read directly)."""
    def wrapped(*args, **kwargs):
        if _condition_fails(cond_arg, kwargs):
            return f(*args, **kwargs)
        return cast_inputs(f(*args, **kwargs), dtype, fp32_param)
    return _named_like(wrapped, f)


def _widest_dtype(arrays, target_dtype):
    """The widest dtype among the NDArrays: float32 when one is, else the target."""
    for a in arrays:
        if np.dtype(a.dtype) == _FLOAT32:
            return _FLOAT32
    return target_dtype


def _widest_wrapper(f, target_dtype):
    """``f`` running in the widest type among its array arguments: NDArrays of the target
    dtype are cast to float32 when another is float32; Symbols go through ``amp_multicast``."""
    def wrapped(*args, **kwargs):
        args = list(args)
        slots = [(args, i) for i, a in enumerate(args) if isinstance(a, (Symbol, NDArray))]
        slots += [(kwargs, k) for k, a in kwargs.items() if isinstance(a, (Symbol, NDArray))]
        values = [holder[key] for holder, key in slots]
        if any(isinstance(v, Symbol) for v in values):
            casted = _ORIGINAL_SYM_AMP_MULTICAST(*values, num_outputs=len(values))
            for (holder, key), value in zip(slots, casted):
                holder[key] = value
        else:
            widest = _widest_dtype(values, target_dtype)
            for holder, key in slots:
                value = holder[key]
                if np.dtype(value.dtype) != widest and np.dtype(value.dtype) == target_dtype:
                    holder[key] = _ORIGINAL_ND_AMP_CAST(value, dtype=widest)
        return f(*args, **kwargs)
    return _named_like(wrapped, f)


_ORIGINAL_SYM_AMP_MULTICAST = symbol.amp_multicast


# ------------------------------------------------------------ wrapping names
def _submodules(module):
    return {prefix: getattr(module, prefix[1:-1]) for prefix in _OP_NAME_PREFIXES}


def _function_owner(name, module):
    """(function name, namespace) of operator ``name`` in ``module`` (MXNet's
    ``_get_fun_to_wrap``): ``_contrib_X`` is ``contrib.X``, other ``_X`` are ``_internal``'s."""
    for prefix in _OP_NAME_PREFIXES:
        if name.startswith(prefix):
            if prefix != '_random_' or name.endswith('_like'):
                return name[len(prefix):], _submodules(module)[prefix]
            return name, module._internal
    if name.startswith('_'):
        return name, module._internal
    return name, module


_INHERITED = object()     # the name came from the owner's module __getattr__ or a base class


def _replace(owner, name, value):
    # A namespace that finds names through its module ``__getattr__`` (mx.sym.sparse finds
    # mx.sym.op's) would otherwise record an already wrapped function as its original.
    _restore.append((owner, name, vars(owner).get(name, _INHERITED)))
    setattr(owner, name, value)


def _wrap_names(module, names, make, known):
    """Replace each function of ``names`` in ``module`` (and its ``op`` namespace) by
    ``make(name, function)``. A name MXNet lists but neomx has no operator for is skipped;
    any other unknown name raises AttributeError, as MXNet does."""
    for entry in names:
        fun_name, owner = _function_owner(entry, module)
        if not hasattr(owner, fun_name) and entry in known:
            continue
        f = getattr(owner, fun_name)
        _replace(owner, fun_name, make(entry, f))
        owners = [module, module.op] if owner is module else []
        if owner is module._internal:    # neomx also has mx.nd._X: the same function
            owners = [o for o in (module, module.op) if getattr(o, fun_name, None) is f]
        for other in owners[1 if owner is module else 0:]:
            if hasattr(other, fun_name):
                _replace(other, fun_name, make(entry, f))


def _wrap_functions(module, target_dtype, target_precision_ops, conditional_fp32_ops, fp32_ops, known):
    wrapper = _symbol_wrapper if module is symbol else _ndarray_wrapper
    fp32_params = list_lp16_use_fp32_params(target_dtype) or {}
    lp16 = target_precision_ops if target_precision_ops is not None else list_lp16_ops(target_dtype)
    _wrap_names(module, lp16, lambda name, f: wrapper(f, target_dtype, fp32_param=fp32_params.get(name)), known)
    fp32 = fp32_ops if fp32_ops is not None else list_fp32_ops(target_dtype) + _NEOMX_FP32_FUNCS
    _wrap_names(module, fp32, lambda name, f: wrapper(f, _FLOAT32), known)
    conditional = (conditional_fp32_ops if conditional_fp32_ops is not None
                   else list_conditional_fp32_ops(target_dtype))
    for name, arg, values in conditional:
        _wrap_names(module, [name], lambda _, f: wrapper(f, _FLOAT32, cond_arg=(arg, values)), known)
    _wrap_names(module, list_widest_type_cast(target_dtype), lambda _, f: _widest_wrapper(f, target_dtype), known)


def _wrap_loss_output_functions(module, scaler, target_dtype):
    for name in list_loss_output_functions(target_dtype):
        if not hasattr(module, name):
            continue
        f = getattr(module, name)
        if module is ndarray:
            def scaled(*args, __f=f, **kwargs):
                kwargs['grad_scale'] = kwargs.get('grad_scale', 1.0) * scaler.loss_scale
                return __f(*args, **kwargs)
            _replace(module, name, _named_like(scaled, f))
        else:
            def warned(*args, __f=f, **kwargs):
                logging.warning('%s does not support dynamic loss scaling in symbolic and hybridized execution.',
                                __f.__name__)
                return __f(*args, **kwargs)
            _replace(module, name, _named_like(warned, f))


# Symbol arithmetic: the operator names of MXNet's lists for the operators a Symbol's dunders make
_SYMBOL_ARITHMETIC = {
    'elemwise_add': '_Plus', 'elemwise_sub': '_Minus', 'elemwise_mul': '_Mul', 'elemwise_div': '_Div',
    '_mod': '_Mod', '_power': '_Power', '_plus_scalar': '_PlusScalar', '_minus_scalar': '_MinusScalar',
    '_rminus_scalar': '_RMinusScalar', '_mul_scalar': '_MulScalar', '_div_scalar': '_DivScalar',
    '_rdiv_scalar': '_RDivScalar', '_mod_scalar': '_ModScalar', '_rmod_scalar': '_RModScalar',
    '_power_scalar': '_PowerScalar', '_rpower_scalar': '_RPowerScalar', 'Cast': 'cast',
}


class _Policy:
    """What mixed precision does to the function of one MXNet name: the dtype its inputs are
    cast to, or 'widest', or None (nothing)."""

    def __init__(self, target_dtype, target_precision_ops, conditional_fp32_ops, fp32_ops):
        self.target = target_dtype
        self.lp16 = set(target_precision_ops if target_precision_ops is not None else list_lp16_ops(target_dtype))
        self.fp32 = set(fp32_ops if fp32_ops is not None else list_fp32_ops(target_dtype))
        self.widest = set(list_widest_type_cast(target_dtype))

    def __call__(self, name):
        if name in self.widest:
            return 'widest'
        if name in self.fp32:
            return _FLOAT32
        if name in self.lp16:
            return self.target
        return None


def _nd_arithmetic(method, array_rule, scalar_rule, target):
    def wrapped(self, other):
        if isinstance(other, NDArray):
            if array_rule == 'widest':
                widest = _widest_dtype((self, other), target)
                self, other = [_ORIGINAL_ND_AMP_CAST(a, dtype=widest)
                               if np.dtype(a.dtype) != widest and np.dtype(a.dtype) == target else a
                               for a in (self, other)]
            elif array_rule is not None:
                self, other = _cast(self, array_rule), _cast(other, array_rule)
        elif scalar_rule not in (None, 'widest'):
            self = _cast(self, scalar_rule)
        return method(self, other)
    return _named_like(wrapped, method)


def _wrap_arithmetic(policy):
    # NDArray arithmetic, by the names of the MXNet operators it stands for
    for method_name, (array_op, scalar_op) in ARITHMETIC_OPERATORS.items():
        array_rule = policy(array_op) if array_op else None
        scalar_rule = policy(scalar_op)
        if array_rule or scalar_rule:
            _replace(NDArray, method_name,
                     _nd_arithmetic(getattr(NDArray, method_name), array_rule, scalar_rule, policy.target))

    def symbol_arithmetic(op_name, sym):
        rule = policy(_SYMBOL_ARITHMETIC.get(op_name, op_name))
        if rule == 'widest':
            return multicast_inputs(sym)
        if rule is not None:
            return cast_inputs(sym, rule, None)
        return sym
    set_arithmetic_hook(symbol_arithmetic)
    _restore.append((None, None, None))     # the hook: unset by _deinit


def init(target_dtype='float16', target_precision_ops=None,
         conditional_fp32_ops=None, fp32_ops=None):
    """Initialize AMP (automatic mixed precision).

    This needs to be done before model creation. A second call changes nothing, as in MXNet.

    Parameters
    ----------
    target_dtype : {'float16', 'bfloat16'}
        Target low precision type for AMP.
    target_precision_ops : list of string
        Override the list of functions casted to target_dtype.
    conditional_fp32_ops : list of (string, string, list of string)
        Override the list of functions conditionally casted to FP32: (name of the function,
        name of the parameter, values of the parameter that make the function run in FP32).
    fp32_ops : list of string
        Override the list of functions casted to FP32.

    Example
    -------
    >>> from neomx.contrib import amp
    >>> amp.list_lp16_ops('bfloat16')      # what init('bfloat16') runs in bfloat16
    ['Convolution', 'FullyConnected']
    """
    global _amp_initialized, _loss_scaler
    if _amp_initialized:
        return
    assert target_dtype in ['float16', np.float16, 'bfloat16', bfloat16], \
        'AMP currently supports only float16 or bfloat16 as a target_dtype'
    _amp_initialized = True
    logging.info('Using AMP')
    target_dtype = bfloat16 if target_dtype in ('bfloat16', bfloat16) else np.dtype(target_dtype)
    known = _mxnet_op_names() | set(_NEOMX_FP32_FUNCS)
    for module in (symbol, ndarray):
        _wrap_functions(module, target_dtype, target_precision_ops, conditional_fp32_ops, fp32_ops, known)
    _wrap_arithmetic(_Policy(target_dtype, target_precision_ops, conditional_fp32_ops, fp32_ops))
    _loss_scaler = LossScaler()
    _wrap_loss_output_functions(ndarray, _loss_scaler, target_dtype)
    _wrap_loss_output_functions(symbol, _loss_scaler, target_dtype)


def _deinit():
    """Undo :func:`init` (for tests: MXNet has no way back)."""
    global _amp_initialized, _amp_loss_scale_initialized, _loss_scaler
    while _restore:
        owner, name, original = _restore.pop()
        if owner is None:
            set_arithmetic_hook(None)
        elif original is _INHERITED:
            delattr(owner, name)
        else:
            setattr(owner, name, original)
    _amp_initialized = _amp_loss_scale_initialized = False
    _loss_scaler = None


# ------------------------------------------------------------ loss scaling
def init_trainer(optimizer_or_trainer):
    """Initialize trainer or optimizer to work with AMP dynamic loss scaling.

    Parameters
    ----------
    optimizer_or_trainer : Optimizer or Trainer
        MXNet Optimizer or Gluon trainer to initialize with AMP
    """
    global _amp_loss_scale_initialized
    assert _amp_initialized, 'AMP not initialized, did you forget to call amp.init()?'
    if not _amp_loss_scale_initialized:
        _amp_loss_scale_initialized = True
        loss_scaler = _loss_scaler
    else:
        loss_scaler = LossScaler()
    if isinstance(optimizer_or_trainer, trainer.Trainer):
        optimizer_or_trainer._amp_loss_scaler = loss_scaler
        optimizer_or_trainer._amp_original_scale = optimizer_or_trainer._scale
    elif isinstance(optimizer_or_trainer, opt.Optimizer):
        raise TypeError('AMP is currently only compatible with Gluon Trainer')
    else:
        raise TypeError('optimizer_or_trainer should be a Gluon Trainer or '
                        'an optimizer, instead is %s' % type(optimizer_or_trainer))


@contextlib.contextmanager
def scale_loss(loss, optimizer_or_trainer):
    """Scale the loss (a value or a list of them) by the trainer's loss scale for the
    backward pass; the trainer divides the gradients by it again."""
    scaler = getattr(optimizer_or_trainer, '_amp_loss_scaler', None)
    assert scaler is not None, 'Loss scaler is not initialized, did you forget to call amp.init_trainer()?'
    optimizer_or_trainer._scale = optimizer_or_trainer._amp_original_scale / scaler.loss_scale
    if isinstance(loss, (list, tuple)):
        yield [l * scaler.loss_scale for l in loss]
    else:
        yield scaler.loss_scale * loss


def unscale(optimizer_or_trainer):
    """Check and unscale the gradients manually. This function should only be used
    if accessing gradients is necessary, e.g. for gradient clipping.

    Parameters
    ----------
    optimizer_or_trainer : Optimizer or Trainer
        MXNet optimizer or Gluon Trainer used when scaling the gradients
    """
    if isinstance(optimizer_or_trainer, trainer.Trainer):
        for param in optimizer_or_trainer._params:
            if param.grad_req != 'null':
                for g in param.list_grad():
                    g[:] *= optimizer_or_trainer._scale
        optimizer_or_trainer._scale = 1.
    elif isinstance(optimizer_or_trainer, opt.Optimizer):
        raise TypeError('AMP is currently only compatible with Gluon Trainer')
    else:
        raise TypeError('optimizer_or_trainer should be a Gluon Trainer or '
                        'an optimizer, instead is %s' % type(optimizer_or_trainer))


# --------------------------------------------------------------- conversion
def _check_lists(target_dtype, target_dtype_ops, fp32_ops, conditional_fp32_ops):
    conditional_names = []
    for entry in conditional_fp32_ops:
        assert isinstance(entry[0], str) and isinstance(entry[1], str) and isinstance(entry[2], list), \
            'conditional_fp32_ops should be a list of (str, str, list of str)'
        conditional_names.append(entry[0])
    common = set(target_dtype_ops) & set(fp32_ops)
    assert not common, 'Ops cannot be in two or more lists. Common ops in target_dtype_ops and fp32_ops {}'.format(
        common)
    common = set(target_dtype_ops) & set(conditional_names)
    assert not common, ('Ops cannot be in two or more lists. Common ops in target_dtype_ops and '
                        'conditional_fp32_ops {}'.format(common))
    common = set(conditional_names) & set(fp32_ops)
    assert not common, ('Ops cannot be in two or more lists. Common ops in fp32_ops and '
                        'conditional_fp32_ops {}'.format(common))
    allowed = set(list_lp16_ops(target_dtype) + list_fp32_ops(target_dtype) + list_lp16_fp32_ops(target_dtype)
                  + [c[0] for c in list_conditional_fp32_ops(target_dtype)])
    illegal = set(target_dtype_ops + fp32_ops + conditional_names) - allowed
    assert not illegal, ('Can only choose ops from one of the three lists for lp16_ops and fp32_ops\n'
                         '1. amp.list_lp16_ops(target_dtype)\n2. amp.list_fp32_ops(target_dtype)\n'
                         '3. amp.list_lp16_fp32_ops(target_dtype)\n4. amp.list_conditional_fp32_ops(target_dtype)\n'
                         'Op %s not in any of them' % illegal)


def convert_symbol(sym, target_dtype="float16", target_dtype_ops=None,
                   fp32_ops=None, conditional_fp32_ops=None,
                   excluded_sym_names=None, data_names=None,
                   cast_optional_params=False):
    """Given a symbol object representing a neural network of data type FP32 and target_dtype,
    add cast layers according to the op lists (target_dtype_ops, fp32_ops,
    conditional_fp32_ops) if provided, otherwise use the default lists provided by the framework.

    Parameters
    ----------
    sym : Symbol
        FP32 neural network symbol
    target_dtype : str, optional defaults to float16
        'float16' or 'bfloat16'.
    target_dtype_ops : list of strs, optional
        Override the list of operator names casted to the target_dtype.
    fp32_ops : list of strs, optional
        Override the list of operator names casted to FP32.
    conditional_fp32_ops : list of (string, string, list of string), optional
        Override the list of functions to be casted to FP32.
    excluded_sym_names : list of strs, optional
        Names of nodes to leave in FP32.
    data_names : list of strs, optional
        The model's data inputs (default: the inputs without a ``__dtype__``).
    cast_optional_params : bool, default False
        Whether to also cast to the target dtype the parameters only read through casts to it.
    """
    assert isinstance(sym, Symbol), 'First argument to convert_symbol should be Symbol'
    assert target_dtype in ['float16', 'bfloat16'], 'Only target_dtype float16 and bfloat16 are supported currently'
    if target_dtype_ops is not None:
        assert isinstance(target_dtype_ops, list), 'target_dtype_ops should be a list of strs'
    else:
        target_dtype_ops = list_lp16_ops(target_dtype)
    if fp32_ops is not None:
        assert isinstance(fp32_ops, list), 'fp32_ops should be a list of strs'
    else:
        fp32_ops = list_fp32_ops(target_dtype)
    if conditional_fp32_ops is not None:
        assert isinstance(conditional_fp32_ops, list), 'conditional_fp32_ops should be a list'
    else:
        conditional_fp32_ops = list_conditional_fp32_ops(target_dtype)
    if excluded_sym_names is not None:
        assert isinstance(excluded_sym_names, list), 'excluded_sym_names should be a list of strs'
    else:
        excluded_sym_names = []
    _check_lists(target_dtype, target_dtype_ops, fp32_ops, conditional_fp32_ops)
    attr_dict = sym.attr_dict()
    if data_names is None:
        data_names = [n for n in sym.list_inputs() if '__dtype__' not in attr_dict.get(n, {})]
    model_param_names = list(set(sym.list_inputs()) - set(data_names))
    return reduce_precision(sym, target_dtype, target_dtype_ops, fp32_ops, list_widest_type_cast(target_dtype),
                            conditional_fp32_ops, excluded_sym_names, data_names, model_param_names,
                            cast_optional_params)


def _typed_params(sym, params, names):
    """``params`` with each array of ``names`` cast to the ``__dtype__`` ``sym`` gives it."""
    attr_dict = sym.attr_dict()
    for name in names:
        flag = attr_dict.get(name, {}).get('__dtype__', '-1')
        if name in params and flag != '-1':
            dtype = _DTYPE_OF_FLAG[int(flag)]
            params[name] = (_cast(params[name], bfloat16) if dtype is bfloat16 else params[name].astype(dtype))
    return params


_DTYPE_OF_FLAG = {0: np.float32, 1: np.float64, 2: np.float16, 3: np.uint8, 4: np.int32, 5: np.int8,
                  6: np.int64, 7: np.bool_, 8: np.int16, 12: bfloat16}


def convert_model(sym, arg_params, aux_params, target_dtype="float16", target_dtype_ops=None,
                  fp32_ops=None, conditional_fp32_ops=None, excluded_sym_names=None,
                  cast_optional_params=False):
    """API for converting a model from FP32 model to a mixed precision model: the symbol
    with casts (:func:`convert_symbol`) and the parameters cast to the dtypes it gives them.

    Parameters
    ----------
    sym : Symbol
    arg_params : dict of str -> NDArray
    aux_params : dict of str -> NDArray
    target_dtype, target_dtype_ops, fp32_ops, conditional_fp32_ops, excluded_sym_names, \
cast_optional_params
        As for :func:`convert_symbol`.

    Returns
    -------
    (Symbol, dict, dict)
    """
    if excluded_sym_names is None:
        excluded_sym_names = []
    assert target_dtype in ['float16', 'bfloat16'], 'Only target_dtype float16 and bfloat16 are supported currently'
    assert isinstance(sym, Symbol), 'First argument to convert_model should be Symbol'
    assert isinstance(arg_params, dict), 'Second argument to convert_model should be a dict of name to ndarray'
    assert isinstance(aux_params, dict), 'Third argument to convert_model should be a dict of name to ndarray'
    param_names = list(arg_params) + list(aux_params)
    data_names = list(set(sym.list_inputs()) - set(param_names))
    sym = convert_symbol(sym, target_dtype, target_dtype_ops, fp32_ops, conditional_fp32_ops,
                         excluded_sym_names, data_names, cast_optional_params)
    _typed_params(sym, arg_params, sym.list_arguments())
    _typed_params(sym, aux_params, sym.list_auxiliary_states())
    return sym, arg_params, aux_params


def convert_hybrid_block(block, target_dtype="float16", target_dtype_ops=None,
                         fp32_ops=None, conditional_fp32_ops=None,
                         excluded_sym_names=None, ctx=None,
                         cast_optional_params=False):
    """Given a hybrid block/symbol block representing a FP32 model and a target_dtype,
    return a SymbolBlock with mixed precision support which can be used for inference.

    Parameters
    ----------
    block : HybridBlock
        Hybridized and run once (its traced graph is converted).
    target_dtype, target_dtype_ops, fp32_ops, conditional_fp32_ops, excluded_sym_names, \
cast_optional_params
        As for :func:`convert_symbol`.
    ctx : Context
        Context on which model parameters should live (MXNet's default: ``gpu(0)``).
    """
    assert isinstance(block, HybridBlock), 'block input should be a HybridBlock'
    graph = block._cached_graph
    if not graph:
        raise RuntimeError('Please first call block.hybridize() and then run forward with '
                           'this block at least once before calling export.')
    inputs = [v for v in graph.variables if v is not None]
    converted = convert_symbol(graph.symbol, target_dtype, target_dtype_ops, fp32_ops, conditional_fp32_ops,
                               excluded_sym_names, data_names=[v.name for v in inputs],
                               cast_optional_params=cast_optional_params)
    arg_names = set(converted.list_arguments())
    params = {}
    for name, param in block.collect_params().items():
        if name in arg_names or name in set(converted.list_auxiliary_states()):
            params[name] = param.data(param.list_ctx()[0]).copy()
    _typed_params(converted, params, list(params))
    result = SymbolBlock(converted, inputs)
    for name, param in result.collect_params().items():
        if name in params and np.dtype(param.dtype) != np.dtype(params[name].dtype):
            param.cast(params[name].dtype)
    if ctx is None:
        ctx = gpu(0)
    result.collect_params().load_dict({('arg:%s' if n in arg_names else 'aux:%s') % n: v for n, v in params.items()},
                                      ctx=ctx)
    return result


def convert_bucketing_module(bucketing_mod, target_dtype="float16", target_dtype_ops=None,
                             fp32_ops=None, conditional_fp32_ops=None,
                             excluded_sym_names=None, cast_optional_params=False):
    """Given a bucketing module cast the symbols associated with the BucketingModule
    and params if cast_optional_params is set (see :func:`convert_model`)."""
    assert isinstance(bucketing_mod, BucketingModule), 'module should be instance of bucketing module'
    assert len(bucketing_mod._buckets) > 0, 'Bucketing Module should not be empty'
    assert bucketing_mod.params_initialized, \
        'bucketing_mod params should be initialized for mixed precision conversion'
    arg_params, aux_params = bucketing_mod.get_params()
    sym_dict = {}
    for key, module in bucketing_mod._buckets.items():
        sym_dict[key], result_args, result_aux = convert_model(
            module.symbol, dict(arg_params), dict(aux_params), target_dtype=target_dtype,
            target_dtype_ops=target_dtype_ops, fp32_ops=fp32_ops, conditional_fp32_ops=conditional_fp32_ops,
            excluded_sym_names=excluded_sym_names, cast_optional_params=cast_optional_params)
    return BucketingModule.load_dict(sym_dict, sym_gen=bucketing_mod._sym_gen, arg_params=result_args,
                                     aux_params=result_aux, default_bucket_key=bucketing_mod._default_bucket_key,
                                     logger=bucketing_mod.logger, context=bucketing_mod._context)
