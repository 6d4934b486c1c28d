"""The operators of MXNet's NumPy extension (``mx.npx``) that the legacy families lack, and
the table naming the operator behind each ``npx`` function.

Most ``npx`` functions are legacy operators taking and returning ``mx.np`` arrays
(``npx.convolution`` is ``Convolution``; graphs record the legacy name, as MXNet's do).
The few with a name of their own in MXNet's graphs are registered here: ``_npx_relu``,
``_npx_sigmoid``, ``_npx_reshape`` (MXNet's NumPy-extension reshape codes),
``_npx_nonzero`` and ``_npx_constraint_check``.
"""
import math

import torch

from ..base import MXNetError, torch_dtype
from .elemwise import UNARY
from .np_creation import device_of
from .registry import BOOL, CTX, OPT_FLOAT, OPT_SHAPE, SHAPE, STR, Attr, all_ops, check, choice, register

__all__ = ['NPX_FUNCTIONS', 'NPX_IMAGE_FUNCTIONS', 'npx_reshape_shape', 'registered']

# npx function name -> registry operator (MXNet 1.9.1's numpy_extension, in its order).
NPX_FUNCTIONS = {
    'activation': 'Activation', 'arange_like': '_contrib_arange_like', 'batch_dot': 'batch_dot',
    'batch_flatten': 'Flatten', 'batch_norm': 'BatchNorm', 'cast': 'Cast',
    'constraint_check': '_npx_constraint_check', 'convolution': 'Convolution',
    'deconvolution': 'Deconvolution', 'dropout': 'Dropout', 'embedding': 'Embedding', 'erf': 'erf',
    'erfinv': 'erfinv', 'fully_connected': 'FullyConnected', 'gamma': 'gamma', 'gammaln': 'gammaln',
    'gather_nd': 'gather_nd', 'layer_norm': 'LayerNorm', 'leaky_relu': 'LeakyReLU',
    'multibox_detection': '_contrib_MultiBoxDetection', 'multibox_prior': '_contrib_MultiBoxPrior',
    'multibox_target': '_contrib_MultiBoxTarget', 'nonzero': '_npx_nonzero', 'one_hot': 'one_hot',
    'pick': 'pick', 'pooling': 'Pooling', 'relu': '_npx_relu', 'reshape': '_npx_reshape',
    'reshape_like': 'reshape_like', 'rnn': 'RNN', 'roi_pooling': 'ROIPooling',
    'sequence_mask': 'SequenceMask', 'shape_array': 'shape_array', 'sigmoid': '_npx_sigmoid',
    'slice': 'slice', 'smooth_l1': 'smooth_l1', 'softmax': 'softmax', 'log_softmax': 'log_softmax',
    'topk': 'topk',
}



def registered(table):
    """The entries of ``table`` (function name -> operator) whose operator is registered:
    the frontends make functions for those only."""
    ops = all_ops()     # called once neomx.operator has registered every family
    return {name: op for name, op in table.items() if op in ops}


# npx.image function name -> registry operator (``_image_<name>``).
NPX_IMAGE_FUNCTIONS = {name: '_image_' + name for name in (
    'adjust_lighting', 'crop', 'flip_left_right', 'flip_top_bottom', 'normalize', 'random_brightness',
    'random_color_jitter', 'random_contrast', 'random_flip_left_right', 'random_flip_top_bottom',
    'random_hue', 'random_lighting', 'random_saturation', 'resize', 'to_tensor')}


def _unary(fn, doc):
    def impl(data):
        return fn(data)
    impl.__doc__ = doc
    return impl


register('_npx_relu', inputs=('data',), same_shape=True)(
    _unary(UNARY['relu'], 'Rectified linear unit, max(x, 0), of an mx.np array.'))
register('_npx_sigmoid', inputs=('data',), same_shape=True)(
    _unary(UNARY['sigmoid'], 'Logistic sigmoid, 1 / (1 + exp(-x)), of an mx.np array.'))


def npx_reshape_shape(src, newshape, reverse=False):
    """The shape ``npx.reshape`` gives an array of shape ``src`` for ``newshape``.

    Codes: ``-1`` infers one dim, ``-2`` copies the input dim, ``-3`` drops an input dim of
    size 1, ``-4`` copies all remaining input dims, ``-5`` merges two input dims, ``-6, a, b``
    splits one input dim into ``a x b`` (one may be -1). ``reverse`` reads both right to left.

    >>> npx_reshape_shape((2, 3, 8), (-2, -2, 2, -1))
    (2, 3, 2, 4)
    >>> npx_reshape_shape((8, 3, 3, 3, 4, 4), (-6, 2, -1, -4))
    (2, 4, 3, 3, 3, 4, 4)
    """
    src, codes = list(src), list(newshape)
    if reverse:
        src, codes = src[::-1], codes[::-1]
    out, i, j, infer = [], 0, 0, None

    def need(count, code):
        if i + count > len(src):
            raise MXNetError('_npx_reshape: code %d at position %d has no input dim left (input %s, '
                             'newshape %s)' % (code, j, tuple(src), tuple(newshape)))
    while j < len(codes):
        code = codes[j]
        if code >= 0:
            out.append(code)
            i += 1
        elif code == -1:
            if infer is not None:
                raise MXNetError('_npx_reshape: one and only one dim can be inferred (-1) in newshape %s'
                                 % (tuple(newshape),))
            infer = len(out)
            out.append(1)
            i += 1
        elif code == -2:
            need(1, code)
            out.append(src[i])
            i += 1
        elif code == -3:
            need(1, code)
            if src[i] != 1:
                raise MXNetError('_npx_reshape: code -3 skips an input dim of size 1, got size %d at '
                                 'position %d (input %s)' % (src[i], i, tuple(src)))
            i += 1
        elif code == -4:
            out.extend(src[i:])
            i = len(src)
        elif code == -5:
            need(2, code)
            out.append(src[i] * src[i + 1])
            i += 2
        elif code == -6:
            need(1, code)
            if j + 2 >= len(codes):
                raise MXNetError('_npx_reshape: code -6 must be followed by two dims (newshape %s)'
                                 % (tuple(newshape),))
            a, b, d = codes[j + 1], codes[j + 2], src[i]
            if a == -1:
                a = d // b if b else 0
            if b == -1:
                b = d // a if a else 0
            if a * b != d:
                raise MXNetError('_npx_reshape: code -6 cannot split dim %d into %d x %d (input %s)'
                                 % (d, codes[j + 1], codes[j + 2], tuple(src)))
            out.extend([a, b])
            i += 1
            j += 2
        else:
            raise MXNetError('_npx_reshape: invalid code %d in newshape %s' % (code, tuple(newshape)))
        j += 1
    total = math.prod(src)
    if infer is not None:
        known = math.prod(out)
        if known == 0 or total % known:
            raise MXNetError('_npx_reshape: cannot infer the -1 dim reshaping %s to %s'
                             % (tuple(src), tuple(newshape)))
        out[infer] = total // known
    if math.prod(out) != total:
        raise MXNetError('_npx_reshape: cannot reshape %s (size %d) to %s (size %d)'
                         % (tuple(src), total, tuple(newshape), math.prod(out)))
    return tuple(out[::-1]) if reverse else tuple(out)


@register('_npx_reshape', shares_input=True, inputs=('a',),
          attrs=[('newshape', SHAPE), ('reverse', BOOL, False), ('order', choice('C'), 'C')])
def npx_reshape(a, newshape, reverse, order):
    """Reshape with MXNet's NumPy-extension codes (see :func:`npx_reshape_shape`)."""
    check(order == 'C', '_npx_reshape', "only order='C' is supported, got %r", order)
    return a.reshape(npx_reshape_shape(tuple(a.shape), newshape, reverse))


@register('_npx_nonzero', inputs=('x',), differentiable=False)
def npx_nonzero(x):
    """The indices of the non-zero elements, one row per element: int64 of shape (N, ndim)."""
    return torch.nonzero(x).to(torch.int64)


class ConstraintViolated(MXNetError, ValueError):
    """``npx.constraint_check`` found a false element: a ValueError, as MXNet raises it."""


@register('_npx_constraint_check', inputs=('input',), attrs=[('msg', STR, 'Constraint violated.')],
          differentiable=False)
def npx_constraint_check(input, msg):  # pylint: disable=redefined-builtin
    """A true boolean scalar when every element of ``input`` is true; ValueError with ``msg``
    otherwise."""
    if not bool(torch.all(input)):
        raise ConstraintViolated(msg)
    return torch.ones((), dtype=torch.bool, device=input.device)


# ------------------------------------------------------------------ samplers with batch shapes
OPT_DTYPE_NAME = Attr("{'float16', 'float32', 'float64'} or None",
                      lambda v: None if v is None or v == 'None' else str(v), None)


def _batched_sample(op, draw, names, input1, input2, p1, p2, size, ctx, dtype):
    """Samples of shape ``size`` (the batch shape) + the parameters' broadcast shape. A
    parameter is an input array where its attribute is None, else that number.
    ``draw(shape, dtype, device, first, second)`` gives the samples, shifting and scaling
    standard ones with differentiable torch operations (gradients reach parameter arrays)."""
    out_dtype = torch.float32 if dtype is None else torch_dtype(dtype, op)
    params, shapes, device = [], [], device_of(ctx)
    for pname, tensor, value in zip(names, (input1, input2), (p1, p2)):
        if value is None:
            check(tensor is not None, op, 'parameter %s is missing', pname)
            params.append(tensor)
            shapes.append(tuple(tensor.shape))
            device = tensor.device
        else:
            params.append(value)
    batch = () if size is None else ((size,) if isinstance(size, int) else tuple(size))
    shape = batch + tuple(torch.broadcast_shapes(*shapes)) if shapes else batch
    gen_dtype = torch.float64 if out_dtype is torch.float64 else torch.float32
    first, second = (p.to(gen_dtype) if isinstance(p, torch.Tensor) else p for p in params)
    return draw(shape, gen_dtype, device, first, second).to(out_dtype)


def _normal_n(shape, dtype, device, loc, scale):
    return torch.randn(shape, dtype=dtype, device=device) * scale + loc


def _uniform_n(shape, dtype, device, low, high):
    return torch.rand(shape, dtype=dtype, device=device) * (high - low) + low


def _absent_parameters(names):
    def absent(attrs):
        return tuple(i for i, n in zip(('input1', 'input2'), names) if attrs.get(n) is not None)
    return absent


def _sampler_attrs(names):
    return [(names[0], OPT_FLOAT), (names[1], OPT_FLOAT), ('size', OPT_SHAPE, None), ('ctx', CTX, None),
            ('dtype', OPT_DTYPE_NAME, None)]


@register('_npi_normal_n', inputs=('input1', 'input2'), optional_inputs=_absent_parameters(('loc', 'scale')),
          attrs=_sampler_attrs(('loc', 'scale')))
def normal_n(input1, input2, loc, scale, size, ctx, dtype):
    """Normal samples of shape size + broadcast(loc, scale).shape."""
    return _batched_sample('_npi_normal_n', _normal_n, ('loc', 'scale'), input1, input2, loc, scale, size, ctx,
                           dtype)


@register('_npi_uniform_n', inputs=('input1', 'input2'), optional_inputs=_absent_parameters(('low', 'high')),
          attrs=_sampler_attrs(('low', 'high')))
def uniform_n(input1, input2, low, high, size, ctx, dtype):
    """Uniform samples in [low, high) of shape size + broadcast(low, high).shape."""
    return _batched_sample('_npi_uniform_n', _uniform_n, ('low', 'high'), input1, input2, low, high, size, ctx,
                           dtype)
