"""A torch module's forward as an MXNet Symbol graph, for :class:`~neomx.bridge.TorchBlock`'s
``hybridize``: ``torch.fx`` traces the module, and each traced operation (a leaf layer such as
``nn.Conv2d``, a function such as ``torch.cat``, a tensor method such as ``x.view``) becomes
the registry's MXNet operator computing the same values. The first operation without one
stops the translation with an MXNetError naming it, as does an in-place write into a
parameter or buffer (an alias of Gluon's array that a graph cannot express).
"""
import operator

import torch
from torch import nn
from torch.nn import functional as F

from ..base import MXNetError
from .. import symbol as S

__all__ = ['trace', 'to_symbol', 'first_in_place_write', 'in_place_error']


def trace(module):
    """``module`` traced by ``torch.fx`` (a GraphModule), or an MXNetError saying why not."""
    if type(module) in _MODULES:    # a layer of its own: traced as the leaf it is inside a network
        module = nn.Sequential(module)
    try:
        return torch.fx.symbolic_trace(module)
    except Exception as err:  # fx raises TraceError, TypeError... on data-dependent control flow
        raise MXNetError("from_torch: %s cannot be hybridized: torch.fx cannot trace its forward "
                         "(%s: %s); run it without hybridize()" % (type(module).__name__, type(err).__name__,
                                                                    err)) from err


class _Dim:
    """``x.size(i)`` / ``x.shape[i]`` while translating: MXNet graphs have no shape values, but
    ``reshape`` reads a kept dimension as 0."""

    def __init__(self, source, axis):
        self.source, self.axis = source, axis


class _Shape:
    """``x.shape`` / ``x.size()`` while translating (indexed into :class:`_Dim`)."""

    def __init__(self, source):
        self.source = source


class _Unsupported(Exception):
    """Raised by a translation rule for an argument value MXNet's operator cannot express."""


def _pair(value, n):
    return tuple(value) if isinstance(value, (tuple, list)) else (value,) * n


# ----------------------------------------------------------------------------- leaf layers
_CONV_TRANSPOSE = (nn.ConvTranspose1d, nn.ConvTranspose2d, nn.ConvTranspose3d)
_MAX_POOL = (nn.MaxPool1d, nn.MaxPool2d, nn.MaxPool3d)


def _linear(m, x, p):
    return S.FullyConnected(x, p('weight'), *([p('bias')] if m.bias is not None else []),
                            num_hidden=m.out_features, no_bias=m.bias is None, flatten=False)


def _conv_padding(m, n):
    if m.padding_mode != 'zeros':
        raise _Unsupported("padding_mode=%r" % m.padding_mode)
    if m.padding == 'valid':
        return (0,) * n
    if m.padding == 'same':
        total = [d * (k - 1) for d, k in zip(_pair(m.dilation, n), _pair(m.kernel_size, n))]
        if any(t % 2 for t in total):
            raise _Unsupported("padding='same' with an even kernel (asymmetric padding)")
        return tuple(t // 2 for t in total)
    return _pair(m.padding, n)


def _conv(m, x, p):
    n = len(m.kernel_size)
    kwargs = dict(kernel=tuple(m.kernel_size), stride=_pair(m.stride, n), dilate=_pair(m.dilation, n),
                  pad=_conv_padding(m, n), num_filter=m.out_channels, num_group=m.groups,
                  no_bias=m.bias is None)
    bias = [p('bias')] if m.bias is not None else []
    if isinstance(m, _CONV_TRANSPOSE):
        return S.Deconvolution(x, p('weight'), *bias, adj=_pair(m.output_padding, n), **kwargs)
    return S.Convolution(x, p('weight'), *bias, **kwargs)


def _batch_norm(m, x, p):
    if not m.affine or not m.track_running_stats or m.momentum is None:
        raise _Unsupported('affine=%s, track_running_stats=%s, momentum=%s (MXNet BatchNorm has scale, shift '
                           'and a running average)' % (m.affine, m.track_running_stats, m.momentum))
    return S.BatchNorm(x, p('weight'), p('bias'), p('running_mean'), p('running_var'), eps=m.eps,
                       momentum=1.0 - m.momentum, fix_gamma=False, axis=1)


def _layer_norm(m, x, p):
    if len(m.normalized_shape) != 1 or not m.elementwise_affine or m.bias is None:
        raise _Unsupported('normalized_shape=%s, elementwise_affine=%s (MXNet LayerNorm normalizes the '
                           'last axis, with scale and shift)' % (tuple(m.normalized_shape), m.elementwise_affine))
    return S.LayerNorm(x, p('weight'), p('bias'), axis=-1, eps=m.eps)


def _pool(m, x, p):  # pylint: disable=unused-argument
    n = {'1d': 1, '2d': 2, '3d': 3}[type(m).__name__[-2:]]
    if getattr(m, 'dilation', 1) not in (1, (1,) * n) or getattr(m, 'return_indices', False) \
            or getattr(m, 'divisor_override', None) is not None:
        raise _Unsupported('dilation, return_indices or divisor_override')
    kernel = _pair(m.kernel_size, n)
    is_max = isinstance(m, _MAX_POOL)
    return S.Pooling(x, kernel=kernel, stride=_pair(m.stride or kernel, n), pad=_pair(m.padding, n),
                     pool_type='max' if is_max else 'avg',
                     pooling_convention='full' if m.ceil_mode else 'valid',
                     **({} if is_max else {'count_include_pad': m.count_include_pad}))


def _global_pool(pool_type):
    def convert(m, x, p):  # pylint: disable=unused-argument
        if set(_pair(m.output_size, 1)) != {1}:
            raise _Unsupported('output_size=%s (MXNet pools adaptively to 1 only)' % (m.output_size,))
        return S.Pooling(x, kernel=(1, 1), global_pool=True, pool_type=pool_type)
    return convert


def _flatten_module(m, x, p):  # pylint: disable=unused-argument
    return _flatten(x, m.start_dim, m.end_dim)


def _flatten(x, start_dim=0, end_dim=-1):
    if (start_dim, end_dim) != (1, -1):
        raise _Unsupported('start_dim=%s, end_dim=%s (MXNet Flatten keeps axis 0 only)' % (start_dim, end_dim))
    return S.Flatten(x)


def _embedding(m, x, p):
    if m.padding_idx is not None or m.max_norm is not None:
        raise _Unsupported('padding_idx or max_norm')
    return S.Embedding(x, p('weight'), input_dim=m.num_embeddings, output_dim=m.embedding_dim)


def _gelu(approximate):
    if approximate != 'none':
        raise _Unsupported("approximate=%r (MXNet's gelu is erf's)" % approximate)
    return 'gelu'


def _softplus(beta, threshold):  # pylint: disable=unused-argument
    if beta != 1:
        raise _Unsupported('beta=%s' % beta)


def _act(act_type):
    return lambda m, x, p: S.Activation(x, act_type=act_type)


_MODULES = {
    nn.Linear: _linear, nn.Conv1d: _conv, nn.Conv2d: _conv, nn.Conv3d: _conv,
    nn.ConvTranspose1d: _conv, nn.ConvTranspose2d: _conv, nn.ConvTranspose3d: _conv,
    nn.BatchNorm1d: _batch_norm, nn.BatchNorm2d: _batch_norm, nn.BatchNorm3d: _batch_norm,
    nn.LayerNorm: _layer_norm, nn.Embedding: _embedding,
    nn.MaxPool1d: _pool, nn.MaxPool2d: _pool, nn.MaxPool3d: _pool,
    nn.AvgPool1d: _pool, nn.AvgPool2d: _pool, nn.AvgPool3d: _pool,
    nn.AdaptiveAvgPool2d: _global_pool('avg'), nn.AdaptiveMaxPool2d: _global_pool('max'),
    nn.Flatten: _flatten_module,
    nn.ReLU: _act('relu'), nn.Sigmoid: _act('sigmoid'), nn.Tanh: _act('tanh'),
    nn.Softplus: lambda m, x, p: _softplus(m.beta, m.threshold) or S.Activation(x, act_type='softrelu'),
    nn.LeakyReLU: lambda m, x, p: S.LeakyReLU(x, act_type='leaky', slope=m.negative_slope),
    nn.ELU: lambda m, x, p: S.LeakyReLU(x, act_type='elu', slope=m.alpha),
    nn.SELU: lambda m, x, p: S.LeakyReLU(x, act_type='selu'),
    nn.GELU: lambda m, x, p: S.LeakyReLU(x, act_type=_gelu(m.approximate)),
    nn.PReLU: lambda m, x, p: S.LeakyReLU(x, p('weight'), act_type='prelu'),
    nn.Softmax: lambda m, x, p: S.softmax(x, axis=-1 if m.dim is None else m.dim),
    nn.LogSoftmax: lambda m, x, p: S.log_softmax(x, axis=-1 if m.dim is None else m.dim),
    nn.Dropout: lambda m, x, p: S.Dropout(x, p=m.p),
    nn.Identity: lambda m, x, p: x,
}


# ----------------------------------------------------------------------------- functions and methods
def _is_sym(value):
    return isinstance(value, S.Symbol)


def _binary(broadcast_op, scalar_op, reflected_op):
    def convert(a, b, alpha=1):
        if alpha != 1:
            b = b * alpha
        if _is_sym(a) and _is_sym(b):
            return broadcast_op(a, b)
        if _is_sym(a):
            return scalar_op(a, b)
        if _is_sym(b):
            return reflected_op(b, a)
        raise _Unsupported('no tensor operand')
    return convert


_add = _binary(S.broadcast_add, operator.add, operator.add)
_sub = _binary(S.broadcast_sub, operator.sub, lambda s, c: c - s)
_mul = _binary(S.broadcast_mul, operator.mul, operator.mul)
_div = _binary(S.broadcast_div, operator.truediv, lambda s, c: c / s)
_pow = _binary(S.broadcast_power, operator.pow, lambda s, c: c ** s)


def _reshape(x, *shape):
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = tuple(shape[0])
    target = []
    for axis, dim in enumerate(shape):
        if isinstance(dim, _Dim):
            if dim.source is not x or dim.axis != axis:
                raise _Unsupported('a size taken from another tensor or axis')
            target.append(0)                # MXNet reshape: keep this input dimension
        elif isinstance(dim, int):
            target.append(dim)
        else:
            raise _Unsupported('shape %r' % (shape,))
    return S.reshape(x, shape=tuple(target))


def _axes(dim):
    return tuple(dim) if isinstance(dim, (tuple, list)) else dim


def _reduce(op):
    def convert(x, dim=None, keepdim=False, dtype=None):
        if dtype is not None:
            raise _Unsupported('dtype=%s' % dtype)
        return op(x, **({} if dim is None else {'axis': _axes(dim)}), keepdims=keepdim)
    return convert


def _permute(x, *dims):
    return S.transpose(x, axes=tuple(dims[0]) if len(dims) == 1 and isinstance(dims[0], (tuple, list)) else dims)


def _size(x, dim=None):
    return _Shape(x) if dim is None else _Dim(x, dim)


def _getitem(value, index):
    if isinstance(value, _Shape) and isinstance(index, int):
        return _Dim(value.source, index)
    if isinstance(value, (tuple, list)):
        return value[index]
    if _is_sym(value) and isinstance(index, int) and len(value.list_outputs()) > 1:
        return value[index]
    raise _Unsupported('indexing with %r' % (index,))


def _cat(tensors, dim=0):
    return S.concat(*tensors, dim=dim)


def _stack(tensors, dim=0):
    return S.stack(*tensors, axis=dim)


def _softmax(op):
    def convert(x, dim=None, _stacklevel=3, dtype=None):  # pylint: disable=unused-argument
        if dim is None or dtype is not None:
            raise _Unsupported('dim=None or dtype')
        return op(x, axis=dim)
    return convert


def _clamp(x, min=None, max=None):  # pylint: disable=redefined-builtin
    if _is_sym(min) or _is_sym(max):
        raise _Unsupported('tensor bounds')
    return S.clip(x, a_min=-float('inf') if min is None else min, a_max=float('inf') if max is None else max)


def _dropout(x, p=0.5, training=True, inplace=False):  # pylint: disable=unused-argument
    return S.Dropout(x, p=p) if training else x


def _adaptive_pool(pool_type):
    def convert(x, output_size):
        if set(_pair(output_size, 1)) != {1}:
            raise _Unsupported('output_size=%s' % (output_size,))
        return S.Pooling(x, kernel=(1, 1), global_pool=True, pool_type=pool_type)
    return convert


def _matmul(a, b):
    if not (_is_sym(a) and _is_sym(b)):
        raise _Unsupported('a non-tensor operand')
    # NumPy's matmul (broadcasting batch axes), as MXNet's _npi_matmul: legacy graphs hold it too
    return S.np.matmul(a.as_np_ndarray(), b.as_np_ndarray()).as_nd_ndarray()


def _functional_pool(pool_type, n):
    def convert(x, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, count_include_pad=True,
                divisor_override=None, return_indices=False):
        if dilation not in (1, (1,) * n) or divisor_override is not None or return_indices:
            raise _Unsupported('dilation, divisor_override or return_indices')
        kernel = _pair(kernel_size, n)
        extra = {'count_include_pad': count_include_pad} if pool_type == 'avg' else {}
        return S.Pooling(x, kernel=kernel, stride=_pair(stride or kernel, n), pad=_pair(padding, n),
                         pool_type=pool_type, pooling_convention='full' if ceil_mode else 'valid', **extra)
    return convert


def _chunk(x, chunks, dim=0):
    out = S.split(x, num_outputs=chunks, axis=dim)
    return [out[i] for i in range(chunks)] if chunks > 1 else [out]


def _interpolate(x, size=None, scale_factor=None, mode='nearest', align_corners=None, recompute_scale_factor=None,
                 antialias=False):  # pylint: disable=unused-argument
    scale = scale_factor[0] if isinstance(scale_factor, (tuple, list)) and len(set(scale_factor)) == 1 \
        else scale_factor
    if size is not None or mode != 'nearest' or scale is None or int(scale) != scale or antialias:
        raise _Unsupported("size=%s, scale_factor=%s, mode=%r (MXNet's UpSampling scales by an integer, nearest)"
                           % (size, scale_factor, mode))
    return S.UpSampling(x, scale=int(scale), sample_type='nearest')


_FLOAT_DTYPES = {torch.float32: 'float32', torch.float64: 'float64', torch.float16: 'float16'}


def _to(x, *args, **kwargs):
    dtype = kwargs.get('dtype', args[0] if args else None)
    if dtype not in _FLOAT_DTYPES:
        raise _Unsupported('to(%s)' % (dtype,))
    return S.Cast(x, dtype=_FLOAT_DTYPES[dtype])


def _unary(op):
    return lambda x, inplace=False: op(x)


_FUNCTIONS = {
    operator.add: _add, operator.sub: _sub, operator.mul: _mul, operator.truediv: _div, operator.pow: _pow,
    operator.iadd: _add, operator.isub: _sub, operator.imul: _mul, operator.itruediv: _div,
    operator.neg: S.negative, operator.getitem: _getitem, operator.matmul: _matmul, torch.matmul: _matmul,
    torch.bmm: lambda a, b: S.batch_dot(a, b),
    torch.add: _add, torch.sub: _sub, torch.mul: _mul, torch.div: _div, torch.pow: _pow,
    torch.relu: S.relu, F.relu: _unary(S.relu), torch.sigmoid: S.sigmoid, F.sigmoid: S.sigmoid,
    torch.tanh: S.tanh, F.tanh: S.tanh, F.gelu: lambda x, approximate='none': S.LeakyReLU(
        x, act_type=_gelu(approximate)),
    F.leaky_relu: lambda x, negative_slope=0.01, inplace=False: S.LeakyReLU(x, act_type='leaky',
                                                                            slope=negative_slope),
    torch.exp: S.exp, torch.log: S.log, torch.sqrt: S.sqrt, torch.rsqrt: S.rsqrt, torch.abs: S.abs,
    torch.sin: S.sin, torch.cos: S.cos, torch.erf: S.erf, torch.square: S.square, torch.neg: S.negative,
    torch.reciprocal: S.reciprocal,
    torch.cat: _cat, torch.concat: _cat, torch.stack: _stack, torch.flatten: _flatten,
    torch.reshape: _reshape, torch.permute: _permute, torch.transpose: lambda x, a, b: S.swapaxes(x, dim1=a, dim2=b),
    torch.mean: _reduce(S.mean), torch.sum: _reduce(S.sum), torch.clamp: _clamp, torch.clip: _clamp,
    torch.maximum: S.broadcast_maximum, torch.minimum: S.broadcast_minimum,
    torch.unsqueeze: lambda x, dim: S.expand_dims(x, axis=dim), torch.squeeze: lambda x, dim: S.squeeze(x, axis=dim),
    F.softmax: _softmax(S.softmax), F.log_softmax: _softmax(S.log_softmax), torch.softmax: _softmax(S.softmax),
    F.dropout: _dropout, F.max_pool1d: _functional_pool('max', 1), F.max_pool2d: _functional_pool('max', 2),
    F.avg_pool1d: _functional_pool('avg', 1), F.avg_pool2d: _functional_pool('avg', 2), torch.chunk: _chunk,
    F.interpolate: _interpolate, F.adaptive_avg_pool2d: _adaptive_pool('avg'), F.adaptive_max_pool2d: _adaptive_pool('max'),
    getattr: lambda value, name: _size(value) if name == 'shape' and _is_sym(value) else _unsupported_attr(name),
}


def _unsupported_attr(name):
    raise _Unsupported('attribute %r' % name)


_METHODS = {
    'add': _add, 'sub': _sub, 'mul': _mul, 'div': _div, 'pow': _pow,
    'relu': S.relu, 'sigmoid': S.sigmoid, 'tanh': S.tanh, 'exp': S.exp, 'log': S.log, 'sqrt': S.sqrt,
    'abs': S.abs, 'neg': S.negative, 'square': S.square,
    'view': _reshape, 'reshape': _reshape, 'flatten': _flatten, 'permute': _permute,
    'transpose': lambda x, a, b: S.swapaxes(x, dim1=a, dim2=b),
    'mean': _reduce(S.mean), 'sum': _reduce(S.sum), 'clamp': _clamp, 'clip': _clamp,
    'unsqueeze': lambda x, dim: S.expand_dims(x, axis=dim), 'squeeze': lambda x, dim: S.squeeze(x, axis=dim),
    'softmax': _softmax(S.softmax), 'log_softmax': _softmax(S.log_softmax),
    'chunk': _chunk, 'to': _to, 'float': lambda x: S.Cast(x, dtype='float32'),
    'contiguous': lambda x, *a, **k: x, 'size': _size, 'matmul': _matmul, 'bmm': lambda a, b: S.batch_dot(a, b),
}


def _describe(node, module):
    if node.op == 'call_module':
        return "layer '%s' (%s)" % (node.target, type(module.get_submodule(node.target)).__name__)
    if node.op == 'call_method':
        return "method 'Tensor.%s' (node '%s')" % (node.target, node.name)
    target = getattr(node.target, '__module__', None), getattr(node.target, '__name__', str(node.target))
    return "function '%s' (node '%s')" % ('.'.join(t for t in target if t), node.name)


def _writes_in_place(node):
    if node.op == 'call_method':
        return node.target.endswith('_') and not node.target.endswith('__')
    if node.op == 'call_function':
        name = getattr(node.target, '__name__', '')
        return node.target in (operator.iadd, operator.isub, operator.imul, operator.itruediv) or \
            (name.endswith('_') and not name.endswith('__'))
    return False


def _aliased_parameter(node, graph_module):
    """The parameter or buffer name whose memory ``node`` writes in place, if any."""
    if not (_writes_in_place(node) or node.kwargs.get('out') is not None) or not node.args:
        return None
    target = node.args[0] if node.kwargs.get('out') is None else node.kwargs['out']
    seen = set()
    while isinstance(target, torch.fx.Node) and target not in seen:   # through views of it
        seen.add(target)
        if target.op == 'get_attr':
            return target.target
        if target.op == 'call_method' and target.target in ('view', 'reshape', 'view_as', 'flatten', 'transpose',
                                                           'permute', 'unsqueeze', 'squeeze', 'detach', 'data'):
            target = target.args[0]
        elif target.op == 'call_function' and target.target in (operator.getitem, getattr, torch.flatten,
                                                               torch.reshape, torch.transpose):
            target = target.args[0]
        else:
            return None
    return None


def first_in_place_write(graph_module):
    """``(operation, tensor name)`` of the first operation of the trace that writes in place
    into a parameter or buffer of the module, or None."""
    for node in graph_module.graph.nodes:
        aliased = _aliased_parameter(node, graph_module)
        if aliased is not None:
            return _describe(node, graph_module), aliased
    return None


def in_place_error(owner, operation, tensor_name):
    """The MXNetError for a write into a module's own tensor."""
    return MXNetError("from_torch: %s: %s writes in place into the module's tensor '%s', an alias of Gluon's "
                      "Parameter that Gluon cannot track (autograd and hybridize() need the Parameter "
                      "unchanged during forward); compute a new tensor instead" % (owner, operation, tensor_name))


def to_symbol(graph_module, inputs, variable_of):
    """The Symbol computing ``graph_module``'s forward on the Symbols ``inputs``;
    ``variable_of(tensor_name)`` gives the variable of a parameter or buffer (by its torch name)."""
    env = {}
    placeholders = iter(inputs)
    owner = type(graph_module).__name__

    def fetch(value):
        return torch.fx.node.map_arg(value, lambda n: env[n])

    for node in graph_module.graph.nodes:
        aliased = _aliased_parameter(node, graph_module)
        if aliased is not None:
            raise in_place_error(owner + ' cannot be hybridized', _describe(node, graph_module), aliased)
        if node.op == 'placeholder':
            try:
                env[node] = next(placeholders)
            except StopIteration:
                env[node] = node.args[0] if node.args else None   # a defaulted argument
            continue
        if node.op == 'get_attr':
            env[node] = variable_of(node.target)
            continue
        if node.op == 'output':
            out = fetch(node.args[0])
            if isinstance(out, (tuple, list)):
                return S.Group(list(out)) if len(out) > 1 else out[0]
            return out
        args, kwargs = fetch(node.args), fetch(node.kwargs)
        try:
            env[node] = _convert(node, graph_module, args, kwargs, variable_of)
        except _Unsupported as err:
            raise MXNetError("from_torch: %s cannot be hybridized: %s maps to no MXNet operator%s"
                             % (owner, _describe(node, graph_module), ' with %s' % err if str(err) else '')) from None
        if env[node] is _NO_OPERATOR:
            raise MXNetError("from_torch: %s cannot be hybridized: %s maps to no MXNet operator; run it "
                             "without hybridize()" % (owner, _describe(node, graph_module)))
    raise MXNetError('from_torch: the traced graph of %s has no output' % owner)


_NO_OPERATOR = object()


def _convert(node, graph_module, args, kwargs, variable_of):
    if node.op == 'call_module':
        module = graph_module.get_submodule(node.target)
        rule = _MODULES.get(type(module))
        if rule is None:
            return _NO_OPERATOR
        if kwargs or len(args) != 1:
            raise _Unsupported('%d arguments' % (len(args) + len(kwargs)))
        return rule(module, args[0], lambda name: variable_of('%s.%s' % (node.target, name)))
    if node.op == 'call_method':
        name = node.target[:-1] if _writes_in_place(node) else node.target   # on a fresh tensor: out of place
        rule = _METHODS.get(name)
    else:
        rule = _FUNCTIONS.get(node.target)
        if node.target is F.linear:
            rule = _functional_linear(node, graph_module)
    if rule is None:
        return _NO_OPERATOR
    try:
        return rule(*args, **kwargs)
    except TypeError as err:        # an argument the rule does not take
        raise _Unsupported(str(err)) from None


def _functional_linear(node, graph_module):
    weight = node.args[1] if len(node.args) > 1 else node.kwargs.get('weight')
    if not (isinstance(weight, torch.fx.Node) and weight.op == 'get_attr'):
        return None
    try:
        num_hidden = graph_module.get_parameter(weight.target).shape[0]
    except AttributeError:
        return None

    def convert(x, w, bias=None):
        return S.FullyConnected(x, w, *([bias] if bias is not None else []), num_hidden=num_hidden,
                                no_bias=bias is None, flatten=False)
    return convert
