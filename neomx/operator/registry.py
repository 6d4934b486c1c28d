"""The operator registry: every operator is defined once, here, and every frontend reads it.

An :class:`OpSpec` holds what MXNet knows about an operator -- input names (``data``,
``weight``, ``bias``), auxiliary states, typed attributes with defaults, the number of
outputs, argument-shape inference -- together with its torch implementation. From one
spec neomx generates ``mx.nd.<Op>`` (see ``neomx/ndarray/register.py``), ``mx.sym.<Op>``
and the calls that compiled graphs make.

Writing an operator::

    @register('FullyConnected', inputs=('data', 'weight', 'bias'),
              attrs=[('num_hidden', INT), ('no_bias', BOOL, False), ('flatten', BOOL, True)],
              optional_inputs=lambda a: ('bias',) if a['no_bias'] else ())
    def fully_connected(data, weight, bias, num_hidden, no_bias, flatten):
        ...

The implementation receives torch tensors (``None`` for an absent optional input) and the
parsed attributes as keyword arguments, and returns a tensor or a tuple of tensors.
"""
import functools

import numpy as np
import torch

from .._parsing import literal_eval
from ..base import C_LIBRARY, MXNetError, MXNetTypeError, invalid_dtype, refuse_numpy_shape, torch_dtype
from .dtype_rules import SAME_DTYPE

__all__ = ['Attr', 'OpSpec', 'register', 'variadic_name', 'get', 'all_ops', 'REQUIRED', 'check',
           'INT', 'FLOAT', 'BOOL', 'STR', 'SHAPE', 'OPT_INT', 'OPT_FLOAT', 'OPT_SHAPE', 'OPT_FLOATS', 'DTYPE',
           'OPT_DTYPE', 'FLOATS', 'CTX', 'ANY', 'OPT_BOOL', 'choice', 'memoized', 'lazy']


class _Required:
    def __repr__(self):
        return 'required'


REQUIRED = _Required()
_Size = torch.Size


# Attribute text parsed as a Python literal: longer text (files are data from anywhere) is
# refused rather than parsed, and so is deeper nesting, which only a crafted file has.
_MAX_LITERAL_CHARS = 1 << 16
_MAX_LITERAL_DEPTH = 32


def _nesting(s):
    depth = deepest = 0
    for c in s:
        if c in '([{':
            depth += 1
            deepest = max(deepest, depth)
        elif c in ')]}':
            depth -= 1
    return deepest


def _literal(value):
    """Parse MXNet's string form of an attribute ('(2, 2)', 'True', 'None', '1e-3').

    Raises ``ValueError`` for text longer than 64 KiB or nested deeper than 32 brackets.
    """
    s = value.strip()
    if s in ('None', ''):
        return None
    low = s.lower()
    if low == 'true':
        return True
    if low == 'false':
        return False
    if len(s) > _MAX_LITERAL_CHARS:
        raise ValueError('attribute text of %d characters is longer than %d' % (len(s), _MAX_LITERAL_CHARS))
    if len(s) > _MAX_LITERAL_DEPTH and _nesting(s) > _MAX_LITERAL_DEPTH:
        raise ValueError('attribute text nests brackets deeper than %d' % _MAX_LITERAL_DEPTH)
    try:
        return literal_eval(s)
    except (MemoryError, RecursionError):
        raise ValueError('attribute text %.40r... is too complex to parse' % s) from None
    except (ValueError, SyntaxError):
        if s.startswith('[') or s.startswith('('):    # '(2,2L)' or '[2 2]' from old files
            return tuple(int(float(x)) for x in s.strip('[]()').replace(',', ' ').replace('L', '').split())
        return s


def _to_int(v):
    if type(v) is int:          # the common case first: every nd call parses its attributes
        return v
    if isinstance(v, str):
        v = _literal(v)
    if isinstance(v, (bool, np.bool_)):
        return int(v)
    if isinstance(v, (int, np.integer)):
        return int(v)
    if isinstance(v, (float, np.floating)) and float(v).is_integer():
        return int(v)
    raise ValueError('expected an integer, got %r' % (v,))


def _to_float(v):
    if isinstance(v, str):
        v = _literal(v)
    return float(v)


def _to_bool(v):
    if isinstance(v, str):
        v = _literal(v)
    if isinstance(v, (bool, np.bool_, int, np.integer)):
        return bool(v)
    raise ValueError('expected a boolean, got %r' % (v,))


def _to_dim(x):
    """One dimension of a shape: an integer (2.5 or 2.0 is refused, as MXNet does)."""
    if isinstance(x, (int, np.integer)) and not isinstance(x, (bool, np.bool_)):
        return int(x)
    raise ValueError('a shape holds integers, got %r' % (x,))


def _to_shape(v):
    if type(v) is tuple and all(type(x) is int for x in v):     # fast path: kernel=(3, 3)
        return v
    if isinstance(v, str):
        v = _literal(v)
    if isinstance(v, (int, np.integer)):
        return (int(v),)
    if isinstance(v, (float, np.floating)):
        raise ValueError('a shape holds integers, got %r' % (v,))
    if isinstance(v, np.ndarray):
        v = refuse_numpy_shape(v)
        if isinstance(v, int):
            return (v,)
    return tuple(None if x is None else _to_dim(x) for x in v)


def _to_floats(v):
    if isinstance(v, str):
        v = _literal(v)
    if isinstance(v, (int, float, np.number)):
        return (float(v),)
    return tuple(float(x) for x in v)


def _to_str(v):
    return str(v)


def _to_dtype(v):
    if isinstance(v, str) and v == 'None':
        return None
    return torch_dtype(v)


def _optional(parse):
    def parse_opt(v):
        if v is None or (isinstance(v, str) and v.strip() in ('None', '')):
            return None
        return parse(v)
    return parse_opt


def _to_any(v):
    return _literal(v) if isinstance(v, str) else v


def _identity(v):
    return v


class Attr:
    """One typed operator attribute: how to parse it and its default.

    Parameters
    ----------
    parse : callable
        Converts a Python value or MXNet's string form to the typed value; raises
        ``ValueError``/``TypeError`` on bad input.
    default : object
        The default, or ``REQUIRED``.
    choices : tuple of str, optional
        Allowed values for enumerations (``act_type``...).
    """
    __slots__ = ('parse', 'default', 'choices', 'kind')

    def __init__(self, kind, parse, default=REQUIRED, choices=None):
        self.kind, self.parse, self.default, self.choices = kind, parse, default, choices

    def __call__(self, default=REQUIRED):
        return Attr(self.kind, self.parse, default, self.choices)


INT = Attr('int', _to_int)
FLOAT = Attr('float', _to_float)
BOOL = Attr('boolean', _to_bool)
STR = Attr('string', _to_str)
SHAPE = Attr('Shape(tuple)', _to_shape)
FLOATS = Attr('tuple of float', _to_floats)
OPT_INT = Attr('int or None', _optional(_to_int))
OPT_FLOAT = Attr('float or None', _optional(_to_float))
OPT_BOOL = Attr('boolean or None', _optional(_to_bool))
OPT_SHAPE = Attr('Shape or None', _optional(_to_shape))
OPT_FLOATS = Attr('tuple of float or None', _optional(_to_floats))
DTYPE = Attr('dtype', _to_dtype)
OPT_DTYPE = Attr('dtype or None', _optional(_to_dtype))
CTX = Attr('Context', _identity)
ANY = Attr('any', _to_any)


def choice(*values):
    """An enumeration attribute ('relu', 'sigmoid'...)."""
    return Attr("{%s}" % ', '.join("'%s'" % v for v in values), _to_str, REQUIRED, tuple(values))


class lazy:
    """Text for an error message, computed only if the message is: ``lazy(fn, *args)`` shows
    as ``fn(*args)``. For :func:`check` arguments that cost more than the check itself."""
    __slots__ = ('fn', 'args')

    def __init__(self, fn, *args):
        self.fn, self.args = fn, args

    def __str__(self):
        return str(self.fn(*self.args))


def _shown(value):
    """An argument of :func:`check`'s message as the message shows it."""
    if type(value) is _Size:
        return tuple(value)
    if type(value) is lazy:
        return str(value)
    return value


def check(condition, op, message, *fmt):
    """Raise ``MXNetError`` naming operator ``op`` unless ``condition`` holds.

    ``message % fmt`` is formatted only when the check fails: every operator call runs its
    checks, so pass shapes as they are (``t.shape``; shown as tuples, ``(2, 3)``) and costly
    text as :class:`lazy`.
    """
    if not condition:
        if fmt:
            message = message % tuple(_shown(v) for v in fmt)
        raise MXNetError('%s: %s' % (op, message))


def memoized(maxsize):
    """Cache a pure function of hashable arguments, for implementations' per-call helpers.

    A plain dict, emptied when it reaches ``maxsize`` entries: unlike ``functools``' caches,
    ``torch.compile`` traces through it without a warning.
    """
    def wrap(fn):
        cache = {}

        @functools.wraps(fn)
        def cached(*args):
            try:
                return cache[args]
            except KeyError:
                if len(cache) >= maxsize:
                    cache.clear()
                result = cache[args] = fn(*args)
                return result
        return cached
    return wrap


def _shares_memory(result, args):
    """Whether tensor ``result`` may lie in the memory of a tensor among ``args``: it is a
    view (these implementations make views of their inputs only) or starts where one of
    them does (the tensor itself, ``detach``)."""
    if result._base is not None:
        return True
    start = result.data_ptr()
    for arg in args:
        if type(arg) is torch.Tensor and arg.data_ptr() == start:
            return True
    return False


def owned_results(res, args):
    """An implementation's result ``res`` (a tensor or a sequence) with each tensor that may
    share memory with a tensor among ``args`` (see :func:`_shares_memory`) copied."""
    if type(res) is torch.Tensor:
        return res.clone() if _shares_memory(res, args) else res
    return type(res)(r.clone() if type(r) is torch.Tensor and _shares_memory(r, args) else r for r in res)


def _owning_results(impl):
    """``impl`` returning copies of the results that share memory with a tensor argument."""
    def run(*args, **kwargs):
        return owned_results(impl(*args, **kwargs), args)
    functools.update_wrapper(run, impl)
    return run


class OpSpec:
    """Everything neomx knows about one operator.

    Attributes
    ----------
    name : str
        MXNet's operator name (``FullyConnected``).
    impl : callable
        ``impl(*input_tensors, **attrs) -> Tensor or tuple of Tensors``.
    inputs : tuple of str
        Input names in order; auxiliary states included, at the end.
    aux : tuple of str, or callable(attrs) -> tuple of str
        The inputs that are auxiliary states: updated in place by the operator, not learned
        (BatchNorm's ``moving_mean``, an optimizer update's ``mom``); ``arg<i>`` names for
        variadic operators.
    attrs : dict of str -> Attr
        Attributes in MXNet's declaration order (positional arguments follow the inputs).
    variadic : str or True or None
        For operators taking any number of inputs (``concat``), the attribute that counts
        them (``num_args``); the inputs are named ``arg0, arg1...`` then. ``True`` where no
        attribute counts them and :meth:`input_names` names them (``Custom``).
    num_outputs : int or callable(attrs) -> int
        Number of outputs the implementation returns.
    num_visible_outputs : int or callable(attrs) -> int or None
        How many of those the user sees (BatchNorm hides its batch statistics).
    output_names : tuple of str or callable(attrs) -> tuple
        Names of the outputs (``output``; ``mean``/``var``...) used by Symbol.
    optional_inputs : callable(attrs) -> iterable of str
        Inputs absent for these attributes (``bias`` when ``no_bias``).
    infer_args : callable(shapes, attrs) -> dict
        Given known input shapes (a dict; unknown ones are None), the shapes of the other
        inputs (weights from data): how deferred initialization and ``infer_shape`` work.
    same_shape : bool or callable(attrs) -> bool
        Whether every present input and output 0 have one shape (MXNet's element-wise shape
        rule: relu, ``_plus_scalar``, ``elemwise_add``...). ``infer_shape`` then fills any of
        them from any other, backwards from the output included. Set it only where MXNet 1.9.1
        infers backwards too (not for ``Dropout`` or ``BatchNorm``, whose output has their
        data's shape but whose shape rules only run forwards).
    dtype_inputs : tuple of str
        Inputs whose dtype is the ``dtype`` attribute, like the output's (Embedding's
        ``weight``): ``infer_type`` gives them that type whatever the data's is.
    dtypes : DTypeRule
        How the other inputs' and the output's dtypes relate (:mod:`.dtype_rules`); by
        default all share one, as for most MXNet operators.
    hidden_outputs : callable(attrs) -> int, optional
        Outputs MXNet's graph records for the operator but never shows (oneDNN's max-pooling
        workspace); neomx does not compute them, it only counts them in Symbol JSON's
        ``node_row_ptr`` so exported files match MXNet's.
    ctx_attrs : bool
        The operator creates arrays (``ctx``/``dtype``/``shape`` attributes, no inputs).
    num_inputs : callable(attrs) -> int, optional
        How many inputs a variadic operator takes, where its counting attribute does not
        say it alone (``UpSampling``'s bilinear weight, ``multi_sgd_update``'s gradients).
    differentiable : bool
        False for the few operators MXNet registers no gradient for (``batch_take``): an
        executor asked for gradients through one refuses to bind, as MXNet does.
    shares_input : bool
        The implementation may return an input's own memory (a view, as ``reshape``'s, or the
        tensor itself, as a cast to its own dtype). Graphs run it as it is; ``mx.nd`` calls
        run ``nd_impl``, which copies such a result: an MXNet operator writes a new array, so
        writing to its result never changes its input.
    nd_impl : callable
        ``impl``, or for ``shares_input`` operators ``impl`` whose results own their memory.
    storage : (rule, sparse_impl) or None
        The operator's storage-type rule and its implementation on sparse tensors, for the
        operators MXNet keeps sparse inputs sparse in (see :mod:`.storage`, which sets it).
    dtype_casts : bool
        Whether an integer ``dtype`` attribute casts a result that may carry a gradient
        (``Cast``, ``topk``): while recording, such calls run twice (see :mod:`neomx._int_grad`).
        False where ``dtype`` is only that of drawn samples (``_sample_multinomial``): a random
        operator must run once, or its gradient would belong to other draws.
    """

    def __init__(self, name, impl, inputs=(), aux=(), attrs=(), variadic=None, num_outputs=1,
                 num_visible_outputs=None, output_names=None, optional_inputs=None,
                 infer_args=None, same_shape=False, dtype_inputs=(), dtypes=SAME_DTYPE, hidden_outputs=None,
                 num_inputs=None, differentiable=True, shares_input=False, dtype_casts=True, doc=None):
        self.name = name
        self.impl = impl
        self.nd_impl = _owning_results(impl) if shares_input and impl is not None else impl
        self.inputs = tuple(inputs)
        self.aux = aux if callable(aux) else tuple(aux)
        self.attrs = {}
        for entry in attrs:
            aname, attr = entry[0], entry[1]
            self.attrs[aname] = attr(entry[2]) if len(entry) > 2 else attr
        self.attr_names = tuple(self.attrs)
        self.defaults = {k: a.default for k, a in self.attrs.items() if a.default is not REQUIRED}
        self.required = tuple(k for k, a in self.attrs.items() if a.default is REQUIRED)
        self.variadic = variadic
        self.num_outputs = num_outputs
        self.num_visible_outputs = num_visible_outputs
        self.output_names = output_names
        self.optional_inputs = optional_inputs
        self.infer_args = infer_args
        self.same_shape = same_shape
        self.dtype_inputs = tuple(dtype_inputs)
        self.dtypes = dtypes
        self.hidden_outputs = hidden_outputs
        self.num_inputs = num_inputs
        self.differentiable = differentiable
        self.dtype_casts = dtype_casts
        self.ctx_attrs = 'ctx' in self.attrs
        # (rule, sparse_impl) where MXNet keeps sparse inputs sparse: set by .storage
        self.storage = None
        self.doc = doc or (impl.__doc__ if impl is not None else None)

    # ------------------------------------------------------------ attributes
    def parse_attrs(self, kwargs):
        """Typed attributes from user keywords (Python values or MXNet strings), defaults filled.

        Raises ``MXNetError`` for unknown or missing attributes and unparsable values, naming
        the operator and the argument. An operator without attributes ignores any keyword,
        as MXNet's operators without a parameter parser do (a Symbol still records them).
        """
        attrs = dict(self.defaults)
        spec_attrs = self.attrs
        for key, value in kwargs.items():
            attr = spec_attrs.get(key)
            if attr is None:
                if not spec_attrs or (key.startswith('__') and key.endswith('__')):  # '__shape__'...
                    continue
                raise MXNetError("%s: cannot find argument '%s'; possible arguments are: %s"
                                 % (self.name, key, ', '.join(self.attr_names) or '(none)'))
            attrs[key] = self._parse_value(attr, key, value)
        if len(attrs) != len(spec_attrs):
            missing = [k for k in self.required if k not in attrs]
            if missing:
                raise MXNetError("%s: required argument '%s' is missing" % (self.name, missing[0]))
        return attrs

    def _parse_value(self, attr, key, value):
        try:
            parsed = attr.parse(value)
        except MXNetTypeError:      # a bad dtype: TypeError where MXNet's front end was numpy
            raise invalid_dtype(value, self.name, key) from None
        except (ValueError, TypeError, SyntaxError) as err:
            raise MXNetError("%s: invalid value %.100r for argument '%s' (expected %s): %.200s"
                             % (self.name, value, key, attr.kind, err)) from None
        if attr.choices is not None and parsed not in attr.choices:
            raise MXNetError("%s: invalid value %.100r for argument '%s'; expected one of %s"
                             % (self.name, parsed, key, ', '.join(map(str, attr.choices))))
        return parsed

    def check_value(self, key, value):
        """Refuse, as :meth:`parse_attrs` would, one attribute value as the user gave it.

        A Symbol stores attributes as text, and some values lose what makes them wrong there
        (``str(np.array([2, 3]))`` is ``'[2 3]'``, which old files' shapes also look like)."""
        attr = self.attrs.get(key)
        if attr is not None:
            self._parse_value(attr, key, value)

    def format_attrs(self, attrs):
        """Attributes as MXNet's JSON strings (only those given, as MXNet stores them)."""
        out = {}
        for k, v in attrs.items():
            if v is None:
                out[k] = 'None'
            elif isinstance(v, tuple):
                out[k] = '(' + ', '.join(str(x) for x in v) + (',)' if len(v) == 1 else ')')
            elif hasattr(v, 'is_floating_point') or type(v).__name__ == 'dtype':
                from ..base import dtype_name
                out[k] = dtype_name(v)
            else:
                out[k] = str(v)
        return out

    # --------------------------------------------------------------- inputs
    def input_names(self, attrs, num_args=None):
        """The inputs present for these attributes (variadic ones named ``arg0..``)."""
        if self.variadic:
            n = attrs.get(self.variadic, num_args) if num_args is None else num_args
            return tuple(variadic_name(i) for i in range(n))
        if self.optional_inputs is None:
            return self.inputs
        drop = set(self.optional_inputs(attrs))
        return tuple(n for n in self.inputs if n not in drop)

    def count_inputs(self, attrs):
        """How many inputs the operator takes with these attributes (what a Symbol file's
        node must give)."""
        if self.num_inputs is not None:
            return self.num_inputs(attrs)
        return len(self.input_names(attrs))

    def aux_names(self, attrs):
        """The inputs that are auxiliary states, for these attributes (:attr:`aux`)."""
        return self.aux(attrs) if callable(self.aux) else self.aux

    def shares_shape(self, attrs):
        """Whether, for these attributes, the inputs and output 0 share one shape (:attr:`same_shape`)."""
        same = self.same_shape
        return same(attrs) if callable(same) else same

    def count_outputs(self, attrs):
        n = self.num_outputs
        return n(attrs) if callable(n) else n

    def count_recorded(self, attrs):
        """Outputs MXNet's graph records: computed ones plus :attr:`hidden_outputs`."""
        hidden = self.hidden_outputs
        return self.count_outputs(attrs) + (hidden(attrs) if hidden else 0)

    def count_visible(self, attrs):
        n = self.num_visible_outputs
        if n is None:
            return self.count_outputs(attrs)
        return n(attrs) if callable(n) else n

    def list_outputs(self, attrs):
        names = self.output_names
        if names is None:
            n = self.count_outputs(attrs)
            return ('output',) if n == 1 else tuple('output%d' % i for i in range(n))
        return names(attrs) if callable(names) else names

    def __repr__(self):
        return '<OpSpec %s(%s)>' % (self.name, ', '.join(self.inputs + self.attr_names))


_REGISTRY = {}
_ALIASES = {}


def variadic_name(index):
    """The name of input ``index`` of a variadic operator (``arg0``...)."""
    return 'arg%d' % index


def register(name, aliases=(), spec_class=OpSpec, **spec_kwargs):
    """Decorator: register the decorated torch implementation as operator ``name``.

    ``aliases`` are further names (``elemwise_add`` for ``_plus``) under which the same
    spec is reachable. ``spec_class`` is an :class:`OpSpec` subclass for operators whose
    inputs and attributes depend on the attributes given (``Custom``). Returns the
    implementation unchanged, with ``.spec`` attached.
    """
    def deco(impl):
        if name in _REGISTRY:
            raise MXNetError('operator %s is registered twice' % name)
        spec = spec_class(name, impl, **spec_kwargs)
        _REGISTRY[name] = spec
        for alias in aliases:
            _ALIASES[alias] = name
        impl.spec = spec
        return impl
    return deco


def alias(name, *aliases):
    """Add further names for an already registered operator."""
    for a in aliases:
        _ALIASES[a] = name


def get(name):
    """The OpSpec of ``name`` (or of an alias); MXNetError if unknown."""
    spec = _REGISTRY.get(name) or _REGISTRY.get(_ALIASES.get(name, ''))
    if spec is None:
        raise MXNetError('operator %s is not registered' % name)
    return spec


def all_ops():
    """{name: OpSpec} including aliases (alias -> the spec it names)."""
    out = dict(_REGISTRY)
    for a, target in _ALIASES.items():
        out.setdefault(a, _REGISTRY[target])
    return out


C_LIBRARY.provide_operator_names(lambda: list(all_ops()))    # mx.base._LIB.MXListAllOpNames
