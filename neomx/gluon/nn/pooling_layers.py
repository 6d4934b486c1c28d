"""Pooling layers: MaxPool1D/2D/3D, AvgPool1D/2D/3D, GlobalMaxPool1D/2D/3D, GlobalAvgPool1D/2D/3D.

Shapes (channel-first layouts): ``(batch, channels, *spatial)`` -> ``(batch, channels,
*out_spatial)`` with ``out = floor((in + 2 * padding - pool_size) / strides) + 1`` per axis
(``ceil`` with ``ceil_mode=True``); global pooling gives size 1 on every spatial axis.
"""
from ..block import HybridBlock
from .conv_layers import _LAYOUTS, _tuple, _window

__all__ = ['MaxPool1D', 'MaxPool2D', 'MaxPool3D', 'AvgPool1D', 'AvgPool2D', 'AvgPool3D',
           'GlobalMaxPool1D', 'GlobalMaxPool2D', 'GlobalMaxPool3D', 'GlobalAvgPool1D',
           'GlobalAvgPool2D', 'GlobalAvgPool3D']


class _Pooling(HybridBlock):
    """A ``Pooling`` operator with fixed attributes.

    Parameters
    ----------
    pool_size : tuple of int
    strides : int, tuple of int or None
        ``None`` means ``pool_size``.
    padding : int or tuple of int
    ceil_mode : bool
        Round the output size up ('full' convention) instead of down ('valid').
    global_pool : bool
    pool_type : {'max', 'avg'}
    layout : str
    count_include_pad : bool, optional
        Average pooling: whether padded zeros count in the denominator.
    """

    def __init__(self, pool_size, strides, padding, ceil_mode, global_pool, pool_type, layout,
                 count_include_pad=None, **kwargs):
        super().__init__(**kwargs)
        ndim = len(pool_size)
        strides = _tuple(pool_size if strides is None else strides, ndim)
        padding = _tuple(padding, ndim)
        self._kwargs = {'kernel': pool_size, 'stride': strides, 'pad': padding,
                        'global_pool': global_pool, 'pool_type': pool_type, 'layout': layout,
                        'pooling_convention': 'full' if ceil_mode else 'valid'}
        if count_include_pad is not None:
            self._kwargs['count_include_pad'] = count_include_pad

    def _alias(self):
        return 'pool'

    def hybrid_forward(self, F, x):
        return F.Pooling(x, name='fwd', **self._kwargs)

    def __repr__(self):
        return ('{name}(size={kernel}, stride={stride}, padding={pad}, ceil_mode={ceil_mode}, '
                'global_pool={global_pool}, pool_type={pool_type}, layout={layout})').format(
                    name=self.__class__.__name__,
                    ceil_mode=self._kwargs['pooling_convention'] == 'full', **self._kwargs)


_SHAPE = """

Shape
-----
data : ``(batch, channels, *spatial)`` (layout %s).
out : ``(batch, channels, *out_spatial)``, %s.

Example
-------
>>> x = mx.nd.arange(%d).reshape((1, 1) + (4,) * %d)
>>> mx.gluon.nn.%s%dD()(x)%s
%s"""


def _shape_and_example(ndim, kind):
    """The Shape and Example sections of an ``ndim``-D pooling layer of ``kind`` (class name
    without the dimension); the example pools a 4-wide ``arange`` (shape only beyond 2-D)."""
    if kind.startswith('Global'):
        size, out = 'size 1 per axis', (1, 1) + (1,) * ndim
    else:
        size, out = 'per axis ``out = floor((in + 2 * padding - pool_size) / strides) + 1``', (1, 1) + (2,) * ndim
    values = {(1, 'MaxPool'): '[[[1. 3.]]]', (1, 'AvgPool'): '[[[0.5 2.5]]]',
              (1, 'GlobalMaxPool'): '[[[3.]]]', (1, 'GlobalAvgPool'): '[[[1.5]]]',
              (2, 'MaxPool'): '[[[[ 5.  7.] [13. 15.]]]]', (2, 'AvgPool'): '[[[[ 2.5  4.5] [10.5 12.5]]]]',
              (2, 'GlobalMaxPool'): '[[[[15.]]]]', (2, 'GlobalAvgPool'): '[[[[7.5]]]]'}
    shown = values.get((ndim, kind))
    if shown is None:
        return _SHAPE % (_LAYOUTS[ndim][0], size, 4 ** ndim, ndim, kind, ndim, '.shape', out)
    return _SHAPE % (_LAYOUTS[ndim][0], size, 4 ** ndim, ndim, kind, ndim, '', '<BLANKLINE>\n%s\n<NDArray %s @cpu(0)>' % (
        shown, 'x'.join(map(str, out))))


def _make_max_pool(ndim):
    def __init__(self, pool_size=(2,) * ndim, strides=None, padding=0, layout=_LAYOUTS[ndim][0],
                 ceil_mode=False, **kwargs):
        _Pooling.__init__(self, _window(ndim, pool_size, layout), strides, padding, ceil_mode,
                          False, 'max', layout, **kwargs)
    doc = ('%dD max pooling: the maximum of each window.\n\nParameters: ``pool_size=2, '
           'strides=None (= pool_size), padding=0, layout, ceil_mode=False``.' % ndim) + _shape_and_example(
               ndim, 'MaxPool')
    return type('MaxPool%dD' % ndim, (_Pooling,), {'__init__': __init__, '__doc__': doc})


def _make_avg_pool(ndim):
    def __init__(self, pool_size=(2,) * ndim, strides=None, padding=0, layout=_LAYOUTS[ndim][0],
                 ceil_mode=False, count_include_pad=True, **kwargs):
        _Pooling.__init__(self, _window(ndim, pool_size, layout), strides, padding, ceil_mode,
                          False, 'avg', layout, count_include_pad, **kwargs)
    doc = ('%dD average pooling: the mean of each window.\n\nParameters: ``pool_size=2, '
           'strides=None (= pool_size), padding=0, layout, ceil_mode=False, '
           'count_include_pad=True`` (padded zeros count in the mean).' % ndim) + _shape_and_example(
               ndim, 'AvgPool')
    return type('AvgPool%dD' % ndim, (_Pooling,), {'__init__': __init__, '__doc__': doc})


def _make_global_pool(ndim, pool_type):
    def __init__(self, layout=_LAYOUTS[ndim][0], **kwargs):
        _Pooling.__init__(self, _window(ndim, 1, layout), None, 0, True, True, pool_type, layout, **kwargs)
    kind = {'max': 'Max', 'avg': 'Avg'}[pool_type]
    doc = '%dD global %s pooling over all spatial positions (output size 1 per axis).' % (
        ndim, {'max': 'maximum', 'avg': 'average'}[pool_type]) + _shape_and_example(ndim, 'Global%sPool' % kind)
    return type('Global%sPool%dD' % (kind, ndim), (_Pooling,), {'__init__': __init__, '__doc__': doc})


MaxPool1D, MaxPool2D, MaxPool3D = (_make_max_pool(n) for n in (1, 2, 3))
AvgPool1D, AvgPool2D, AvgPool3D = (_make_avg_pool(n) for n in (1, 2, 3))
GlobalMaxPool1D, GlobalMaxPool2D, GlobalMaxPool3D = (_make_global_pool(n, 'max') for n in (1, 2, 3))
GlobalAvgPool1D, GlobalAvgPool2D, GlobalAvgPool3D = (_make_global_pool(n, 'avg') for n in (1, 2, 3))
