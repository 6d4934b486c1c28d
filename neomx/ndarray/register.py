"""Generates ``mx.nd.<Op>`` functions from the operator registry.

Each generated function takes the operator's inputs first (positionally or by name), then
its attributes in declaration order, plus ``out=`` and ``name=`` as MXNet's do. Argument
handling is precomputed per operator at import time, and parsed attributes are cached per
keyword set, so a call costs a dict lookup, one implementation call and one wrap. Most
operators' functions are a lean entry (:mod:`.fast_entries`) for the common call shapes in
front of this general function, which takes every other call.
"""
import inspect

import torch

from ..base import MXNetError, check_call, py_str  # noqa: F401  (MXNet's register module has them)
from ..util import use_np_shape  # noqa: F401
from ..context import Context, as_context, current_context
from ..operator import registry
from ..operator.registry import owned_results
from .. import _int_grad, async_errors
from .._autograd_state import STATE as _AUTOGRAD
from .._recorded_graph import note as note_recorded, note_new
from ..autograd import run_recording, run_without_graph
from .ndarray import NDArray, constructor
NDArrayBase = NDArray       # MXNet's base class of NDArray, which its generated functions check for
from .op_results import IMPL_ERRORS, check_interface, input_names, op_error, results, write_out
from .sparse_arrays import DENSE_CALL, SPARSE_MADE, storage_dispatch
from . import fast_entries
from .fast_entries import exact_tensors, tensors_of

__all__ = ['make_function', 'populate']

_Tensor = torch.Tensor
_object_new = object.__new__
_NEVER, _ALWAYS = (False,), (True,)     # storage tests' flags (see make_function's build)


# Attribute kinds whose parsed value depends on the Python type of an argument, not just
# its value: 1, 1.0 and True are equal dict keys but ANY keeps them apart and STR prints
# them differently. Operators with such attributes parse on every call.
_TYPE_SENSITIVE_PARSES = (registry.ANY.parse, registry.STR.parse)
_ATTR_CACHE_SIZE = 256      # attribute combinations remembered per operator


def _cacheable(spec):
    """Whether parsed attributes can be reused for equal keyword values (see _TYPE_SENSITIVE_PARSES)."""
    return not any(a.parse in _TYPE_SENSITIVE_PARSES and a.choices is None for a in spec.attrs.values())


def _attr_parser(spec):
    """``spec.parse_attrs`` behind a cache keyed by the keywords as given.

    A layer calls its operators with the same few attribute sets at every step, so each
    set is parsed (and validated) once and later calls cost one dict lookup. The parsed
    dicts are shared between calls: callers must not modify them.
    """
    parse = spec.parse_attrs
    if not _cacheable(spec):
        return parse
    cache = {}

    def parse_cached(kwargs):
        key = tuple(kwargs.items())
        try:
            attrs = cache.get(key)
        except TypeError:           # an unhashable value (a list): parse it every time
            return parse(kwargs)
        if attrs is None:
            attrs = parse(kwargs)
            if len(cache) < _ATTR_CACHE_SIZE:
                cache[key] = attrs
        return attrs
    return parse_cached


def _unwrap(spec, arrays):
    """The tensors of the input arrays (None for absent ones) and the first array's context."""
    tensors, ctx = [], None
    for i, a in enumerate(arrays):
        if a is None:
            tensors.append(None)
        elif isinstance(a, NDArray):
            tensors.append(a._t)
            if ctx is None:
                ctx = a._ctx
        else:
            names = input_names(spec, arrays)
            raise TypeError('%s: argument %s must be an NDArray, got %s'
                            % (spec.name, names[i] if i < len(names) else i, type(a).__name__))
    return tensors, ctx


# What the generated functions take: inputs and attributes by position or keyword, the
# array to write into and a node name (their code takes the last two from **kwargs)
_GENERAL_SIGNATURE = inspect.Signature([
    inspect.Parameter('args', inspect.Parameter.VAR_POSITIONAL),
    inspect.Parameter('out', inspect.Parameter.KEYWORD_ONLY, default=None),
    inspect.Parameter('name', inspect.Parameter.KEYWORD_ONLY, default=None),
    inspect.Parameter('kwargs', inspect.Parameter.VAR_KEYWORD)])


def make_function(spec, func_name, array_class=NDArray, on_symbol=None):
    """Build the nd function for ``spec`` under the public name ``func_name``.

    ``array_class`` is the interface's array type: ``NDArray`` for ``mx.nd``, ``mx.np.ndarray``
    for ``mx.npx``; the function takes arrays of that interface only (MXNet's TypeError for
    the other's) and returns that type. ``on_symbol(arrays, kwargs, name)``, where given,
    takes calls whose inputs are Symbols (``arrays`` by input position, ``kwargs`` the
    attributes as given): how ``mx.npx``'s functions record graph nodes in a traced ``forward``.
    """
    new = constructor(array_class)
    np_arrays = array_class._is_np_array
    inputs = spec.inputs
    n_in = len(inputs)
    input_pos = {n: i for i, n in enumerate(inputs)}
    attr_names = spec.attr_names
    impl = spec.nd_impl
    # an implementation whose results may be its inputs' memory: nd_impl copies those; a
    # remembered call binds spec.impl itself and copies them here (see below)
    shares = impl is not spec.impl
    op_name = spec.name
    parse = _attr_parser(spec)
    variadic = spec.variadic
    count_attr = variadic if isinstance(variadic, str) else None    # None: no attribute counts them (Custom)
    ctx_attrs = spec.ctx_attrs
    fixed_visible = spec.num_visible_outputs if not callable(spec.num_visible_outputs) else None
    count_visible = spec.count_visible
    fixed_outputs = spec.num_outputs if not callable(spec.num_outputs) else None
    arg_names = ('data',) if variadic else inputs
    has_optional_inputs = spec.optional_inputs is not None and not variadic
    casts = fast_entries.may_cast(spec)
    int_live = _int_grad.LIVE
    errors_live = async_errors.LIVE
    # A call passing its inputs positionally as NDArrays, the common case, skips the argument
    # handling of ``arguments``: ``positional`` maps the keywords of such calls, as given, to
    # (parsed attributes, number of inputs passed, the absent inputs' Nones or None, for
    # operators creating arrays the attributes completed per context, else the implementation
    # with these attributes bound, taking every input: see fast_entries.impl_with_attrs, or
    # None where it cannot be made). The inputs passed are
    # the leading inputs present for those attributes; the rest are absent, as softmax's
    # ``length`` usually is.
    positional = {}
    no_keywords = [None]        # positional's entry for a call without keywords, at hand
    positional_limit = float('inf') if variadic else n_in + len(attr_names)
    remember = _cacheable(spec)
    # Where some attributes parse by their values' types (STR, ANY), a call is remembered
    # only when those are given as strings or None: such a key equals no other type's
    insensitive = None if remember else frozenset(
        n for n, a in spec.attrs.items() if not (a.parse in _TYPE_SENSITIVE_PARSES and a.choices is None))
    absent = (None,) * n_in

    def remember_call(key, attrs, n_given):
        """Let later calls with keywords ``key`` and ``n_given`` positional arrays skip parsing."""
        if insensitive is not None and not all(k in insensitive or type(v) is str or v is None for k, v in key):
            return
        if len(positional) < _ATTR_CACHE_SIZE:
            call = (attrs, n_given, None if variadic or n_given == n_in else absent[n_given:],
                    {} if ctx_attrs else None,
                    None if ctx_attrs or variadic else fast_entries.impl_with_attrs(spec, spec.impl, attrs))
            if not key:
                no_keywords[0] = call
            try:
                positional[key] = call
            except TypeError:       # an unhashable value (a list)
                pass

    def arguments(args, kwargs):
        """The input arrays (absent ones None) and the parsed attributes of any call."""
        if variadic:
            arrays = args
            if len(args) == 1 and isinstance(args[0], (list, tuple)):
                arrays = args[0]
            key = tuple(kwargs.items())
            if count_attr is not None:
                kwargs.setdefault(count_attr, len(arrays))
            attrs = parse(kwargs)
            if arrays is args:
                remember_call(key, attrs, len(args))
            return arrays, attrs
        arrays = list(args[:n_in])
        if len(arrays) < n_in:
            arrays.extend([None] * (n_in - len(arrays)))
        attrs_by_position = len(args) > n_in
        if attrs_by_position:
            kwargs.update(zip(attr_names, args[n_in:]))     # no more of them: see general
        inputs_by_name = kwargs and not input_pos.keys().isdisjoint(kwargs)
        if inputs_by_name:
            for k in [k for k in kwargs if k in input_pos]:
                arrays[input_pos[k]] = kwargs.pop(k)
        attrs = parse(kwargs)
        if has_optional_inputs:
            _check_input_count(spec, attrs, arrays)
        if not (attrs_by_position or inputs_by_name):
            present = spec.input_names(attrs)
            if present == inputs[:len(present)]:
                remember_call(tuple(kwargs.items()), attrs, len(present))
        return arrays, attrs

    def build(storage, storage_live):
        """The generated function; ``storage`` is the storage rule's test it makes first
        while ``storage_live[0]`` (see sparse_arrays.storage_dispatch). The function without
        the test (``storage_live`` never true) is the rule's dense fallback: both share this
        code, so a dense call pays one flag test."""
        def general(*args, **kwargs):
            # out and name come in kwargs: matching each keyword against named parameters
            # costs the interpreter more than these tests (see fast_entries.attr_keywords)
            if 'out' in kwargs or 'name' in kwargs:
                out = kwargs.pop('out', None)
                name = kwargs.pop('name', None)
            else:
                out = name = None
            if storage_live[0]:
                res = storage(args, kwargs, out, name)
                if res is not DENSE_CALL:
                    return res
            if len(args) > positional_limit:   # MXNet's order: inputs, attributes, then out and name
                args, out, name = _out_and_name_by_position(spec, args, positional_limit, out, name)
            if not kwargs:
                call = no_keywords[0]
            elif positional:      # empty for variadic operators and per-call parsing
                try:
                    call = positional.get(tuple(kwargs.items()))
                except TypeError:       # an unhashable value (a list)
                    call = None
            else:
                call = None
            tensors = with_ctx = bound = None
            if call is not None and len(args) == call[1]:
                # arrays of the interface's own class only (others, or sparse arrays, take
                # the path below, which checks them)
                n_given = call[1]
                if n_given == 1:
                    if type(args[0]) is array_class:
                        tensors = (args[0]._t,)
                elif n_given == 2:      # binary operators: inline, as the unary ones
                    a, b = args
                    if type(a) is array_class and type(b) is array_class:
                        tensors = (a._t, b._t)
                else:
                    tensors = exact_tensors(args, array_class)
                if tensors is not None:
                    attrs, with_ctx, bound = call[0], call[3], call[4]
                    if call[2] is not None:     # absent optional inputs
                        tensors = tuple(tensors) + call[2]
                    arrays = args
                    ctx = args[0]._ctx if args else None
            if tensors is None:
                arrays, attrs = arguments(args, kwargs)
                try:        # every input given, as an NDArray
                    tensors = tensors_of(arrays)
                    ctx = arrays[0]._ctx if arrays else None
                except AttributeError:      # absent inputs (None), or a wrong type
                    if on_symbol is not None and any(hasattr(a, '_heads') for a in arrays):
                        return on_symbol(arrays, kwargs, name)
                    if has_optional_inputs:
                        arrays = _to_present_inputs(spec, attrs, arrays)
                    tensors, ctx = _unwrap(spec, arrays)
                for a in arrays:        # the interface's own class needs no attribute look-up
                    if type(a) is not array_class and a is not None and a._is_np_array is not np_arrays:
                        check_interface(spec, func_name, arrays, np_arrays)
            if ctx_attrs:
                c = attrs.get('ctx')
                if not isinstance(c, Context):
                    c = as_context(c) if c else (ctx or current_context())
                if with_ctx is None:
                    attrs = dict(attrs, ctx=c)
                else:       # a remembered call: its attributes with each context, made once
                    attrs = with_ctx.get(c) or with_ctx.setdefault(c, dict(attrs, ctx=c))
                ctx = c
            elif ctx is None:
                ctx = current_context()
            try:
                if (int_live[0] or casts) and _AUTOGRAD.recording:    # integer gradients
                    res = _int_grad.run(impl, tensors, attrs)
                    if res is None:
                        res = run_recording(impl, *tensors, **attrs)
                    recorded = any(t is not None and t.requires_grad for t in tensors)
                else:
                    for t in tensors:       # inputs requiring gradients: recorded or graph-free
                        if t is not None and t.requires_grad:
                            recorded = _AUTOGRAD.recording      # (then noted for autograd.get_symbol)
                            run = run_recording if recorded else run_without_graph
                            res = (run(impl, *tensors, **attrs) if bound is None or shares
                                   else run(bound, *tensors))
                            break
                    else:
                        recorded = False
                        if bound is None:
                            res = impl(*tensors, **attrs)
                        else:
                            res = bound(*tensors)
                            if shares:
                                res = owned_results(res, tensors)
            except MXNetError:
                raise
            except IMPL_ERRORS as err:
                raise op_error(spec, arrays, err) from None
            if errors_live[0]:
                async_errors.carry(tensors, res)
            if type(res) is _Tensor:
                if out is None:
                    arr = _object_new(array_class)      # _new, inlined: this is every call's result
                    arr._t = res
                    arr._ctx = ctx
                    arr._grad = None
                    if recorded:
                        note_new(op_name, kwargs, arrays, arr)
                    return arr
                ret = write_out(out, (res,))
            else:
                nvis = fixed_visible if fixed_visible is not None else (
                    fixed_outputs if spec.num_visible_outputs is None and fixed_outputs is not None
                    else count_visible(attrs))
                ret = results(res, out, ctx, nvis, new)
            if recorded:
                note_recorded(op_name, kwargs, arrays, ret)
            return ret
        return general
    general = build(None, _NEVER)
    if spec.storage is not None:        # sparse inputs go through the operator's storage rule
        # once a sparse array exists; cast_storage's output storage comes from its attributes
        general = build(storage_dispatch(spec, general),
                        _ALWAYS if getattr(spec, 'storage_by_attrs', False) else SPARSE_MADE)
    general.__signature__ = _GENERAL_SIGNATURE
    nd_function = fast_entries.entry(spec, general, remember, array_class)     # general itself where no entry fits
    nd_function.__name__ = func_name
    nd_function.__qualname__ = func_name
    nd_function.__doc__ = _docstring(spec, arg_names)
    nd_function.spec = spec
    return nd_function


def _check_input_count(spec, attrs, arrays):
    """MXNetError where more arrays are given than these attributes have inputs: MXNet
    refuses ``Convolution(x, w, b, no_bias=True)`` rather than drop the bias."""
    given = sum(a is not None for a in arrays)
    present = spec.input_names(attrs)
    if given > len(present):
        raise MXNetError('%s: expects %d inputs for these attributes (%s), but got %d'
                         % (spec.name, len(present), ', '.join(present), given))


def _out_and_name_by_position(spec, args, count, out, name):
    """``(args, out, name)`` of a call passing more than the ``count`` inputs and attributes
    by position: the next two are ``out`` and ``name``, as in MXNet's generated functions
    (``nd.relu(x, y)`` writes into ``y``)."""
    extra = args[count:]
    if len(extra) > 2:
        raise TypeError('%s() takes from 0 to %d positional arguments but %d were given'
                        % (spec.name, count + 2, len(args)))
    if out is not None:
        raise TypeError("%s() got multiple values for argument 'out'" % spec.name)
    if len(extra) == 2 and name is not None:
        raise TypeError("%s() got multiple values for argument 'name'" % spec.name)
    return args[:count], extra[0], extra[1] if len(extra) == 2 else name


def _to_present_inputs(spec, attrs, arrays):
    """Give the arrays passed, in order, to the inputs present for these attributes.

    MXNet drops absent (None) arguments first: ``RNN(x, params, h, lengths, mode='gru',
    use_sequence_length=True)`` passes ``lengths`` as sequence_length (a GRU has no
    state_cell), and ``ctc_loss(x, label, label_lengths, use_label_lengths=True)`` likewise.
    """
    given = [a for a in arrays if a is not None]
    present = spec.input_names(attrs)
    if len(given) > len(present):
        return arrays
    placed = dict(zip(present, given))
    return [placed.get(n) for n in spec.inputs]


def _docstring(spec, arg_names):
    lines = [(spec.doc or spec.name).strip(), '', 'Parameters', '----------']
    for n in arg_names:
        lines.append('%s : NDArray' % n)
    for k, a in spec.attrs.items():
        default = '' if a.default is registry.REQUIRED else ', default=%r' % (a.default,)
        lines.append('%s : %s%s' % (k, a.kind, default))
    lines += ['out : NDArray, optional', '    The output array to write into.']
    return '\n'.join(lines)


_NAMESPACE_PREFIXES = (('_contrib_', 'contrib'), ('_linalg_', 'linalg'), ('_image_', 'image'),
                       ('_random_', 'random_internal'), ('_sample_', 'random_internal'),
                       ('_sparse_', 'sparse'))


def populate(modules, make=make_function):
    """Put a function for every registered operator name into ``modules``.

    ``modules`` maps 'op', '_internal', 'contrib', 'linalg', 'image', 'random_internal',
    'sparse' to module objects; '_contrib_X' goes to contrib as X, '_X' to _internal, and
    plain names to op (the caller re-exports op into ``mx.nd``). ``make(spec, name)`` builds
    each function (``mx.sym`` passes its own).
    """
    for fname, spec in registry.all_ops().items():
        func = make(spec, fname)
        for prefix, mod in _NAMESPACE_PREFIXES:
            if fname.startswith(prefix):
                setattr(modules[mod], fname[len(prefix):], func)
                setattr(modules['_internal'], fname, func)
                break
        else:
            if fname.startswith('_'):
                setattr(modules['_internal'], fname, func)
            setattr(modules['op'], fname, func)


def __getattr__(name):
    # MXNet's register module re-exports the contrib AdamW updates, generated after it loads
    if name in ('adamw_update', 'mp_adamw_update'):
        from . import contrib   # pylint: disable=import-outside-toplevel
        return getattr(contrib, name)
    raise AttributeError("module %r has no attribute %r" % (__name__, name))
