"""Shape operators: layout, join/split, slicing, repeats, padding, broadcasting, metadata.

Expected values come from numpy references or, where MXNet differs from numpy, from literals
recorded with MXNet 1.9.1.
"""
import numpy as np
import pytest
import torch

import neomx as mx
from neomx.operator import registry
from neomx.test_utils import check_numeric_gradient


def _a(*shape):
    return np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape)


def _eq(got, want):
    np.testing.assert_array_equal(got.asnumpy(), want)


def _nd(*shape):
    return mx.nd.array(_a(*shape))


# ------------------------------------------------------------ layout ops
def test_transpose_and_swapaxes():
    x = _nd(2, 3, 4)
    _eq(mx.nd.transpose(x), _a(2, 3, 4).T)
    _eq(mx.nd.transpose(x, axes=(1, -1, 0)),
                                  _a(2, 3, 4).transpose(1, 2, 0))
    _eq(mx.nd.swapaxes(x, 0, -1), np.swapaxes(_a(2, 3, 4), 0, 2))
    _eq(mx.nd.SwapAxis(x), _a(2, 3, 4))
    assert mx.nd.transpose(x.astype('int64')).dtype == np.int64
    with pytest.raises(mx.base.MXNetError, match='transpose'):
        mx.nd.transpose(x, axes=(0, 0, 1))


def test_transposed_results_are_new_arrays():
    v = mx.nd.array([1, 2])
    t = mx.nd.transpose(v)
    t[:] = 0
    _eq(v, [1, 2])


def test_expand_dims_squeeze_flatten():
    x = _nd(3, 4)
    assert mx.nd.expand_dims(x, axis=-3).shape == (1, 3, 4)
    assert mx.nd.expand_dims(x, axis=2).shape == (3, 4, 1)
    with pytest.raises(mx.base.MXNetError, match='expand_dims'):
        mx.nd.expand_dims(x, axis=3)
    assert mx.nd.squeeze(mx.nd.zeros((1, 2, 1)), axis=(0, 2)).shape == (2,)
    assert mx.nd.squeeze(mx.nd.zeros((2, 1)), axis=-1).shape == (2,)
    assert mx.nd.squeeze(mx.nd.zeros((1, 1))).shape == (1,)      # MXNet keeps one dim
    with pytest.raises(mx.base.MXNetError, match='squeeze'):
        mx.nd.squeeze(mx.nd.zeros((2, 1)), axis=0)
    assert mx.nd.Flatten(mx.nd.zeros((2, 3, 4))).shape == (2, 12)
    _eq(mx.nd.flatten(mx.nd.array([1, 2])), [[1], [2]])


def test_reshape_codes_and_views():
    x = mx.nd.zeros((2, 3, 4))
    assert mx.nd.Reshape(x, shape=(0, -3)).shape == (2, 12)
    assert mx.nd.reshape(x, shape=(-4, 1, 2, -2)).shape == (1, 2, 3, 4)
    assert x.reshape((-1, 0), reverse=True).shape == (6, 4)
    # Deprecated target_shape: its 0 is inferred; keep_highest keeps the input's first dim.
    assert mx.nd.Reshape(x, target_shape=(4, 0)).shape == (4, 6)
    assert mx.nd.Reshape(x, target_shape=(5, 0, 4), keep_highest=True).shape == (2, 3, 4)
    y = x.reshape((24,))
    y[:] = 3
    assert x.asnumpy().sum() == 72
    with pytest.raises(mx.base.MXNetError, match='reshape'):
        x.reshape((5, -1))


def test_depth_to_space_order_and_roundtrip():
    x = mx.nd.array(np.arange(16).reshape(1, 8, 1, 2))
    d2s = mx.nd.depth_to_space(x, 2)
    # MXNet 1.9.1 (DCR order: block row, block column, then channel).
    _eq(d2s, [[[[0, 4, 1, 5], [8, 12, 9, 13]],
                                                   [[2, 6, 3, 7], [10, 14, 11, 15]]]])
    _eq(mx.nd.space_to_depth(d2s, 2), x.asnumpy())
    with pytest.raises(mx.base.MXNetError, match='depth_to_space'):
        mx.nd.depth_to_space(mx.nd.zeros((1, 3, 2, 2)), 2)
    with pytest.raises(mx.base.MXNetError, match='space_to_depth'):
        mx.nd.space_to_depth(mx.nd.zeros((1, 1, 3, 4)), 2)


def test_flip_reverse():
    x = _nd(2, 3)
    _eq(mx.nd.flip(x, axis=1), _a(2, 3)[:, ::-1])
    _eq(mx.nd.reverse(x, axis=(0, 1)), _a(2, 3)[::-1, ::-1])
    _eq(mx.nd.flip(x, axis=()), _a(2, 3))


# ------------------------------------------------------------ join/split
def test_concat_and_stack():
    a, b = _nd(2, 2), _nd(2, 3)
    _eq(mx.nd.concat(a, b), np.concatenate([_a(2, 2), _a(2, 3)], 1))
    _eq(mx.nd.Concat(a, a, dim=-2), np.concatenate([_a(2, 2)] * 2))
    assert mx.nd.concat(a.astype('int32'), a.astype('int32')).dtype == np.int32
    _eq(mx.nd.stack(a, a, axis=2), np.stack([_a(2, 2)] * 2, 2))
    assert mx.nd.stack(a).shape == (1, 2, 2)
    with pytest.raises(mx.base.MXNetError, match='Concat'):
        mx.nd.concat(a, b, dim=0)
    with pytest.raises(mx.base.MXNetError, match='dtype'):
        mx.nd.concat(a, a.astype('int32'))
    with pytest.raises(mx.base.MXNetError, match='stack'):
        mx.nd.stack(a, b)


def test_split_and_slice_channel():
    x = _nd(3, 4)
    parts = mx.nd.split(x, 2, axis=-1)
    assert len(parts) == 2
    for got, want in zip(parts, np.split(_a(3, 4), 2, axis=1)):
        _eq(got, want)
    one = mx.nd.SliceChannel(x, num_outputs=1)
    assert isinstance(one, mx.nd.NDArray) and one.shape == (3, 4)
    rows = mx.nd.split(x, num_outputs=3, axis=0, squeeze_axis=True)
    assert [r.shape for r in rows] == [(4,)] * 3
    rows[0][:] = -1                                   # parts are new arrays, not views
    assert x.asnumpy().min() == 0
    with pytest.raises(mx.base.MXNetError, match='SliceChannel'):
        mx.nd.split(x, 3, axis=1)
    with pytest.raises(mx.base.MXNetError, match='squeeze_axis'):
        mx.nd.split(x, 2, axis=1, squeeze_axis=True)


def test_split_v2():
    x = _nd(3, 4)
    by_idx = mx.nd.split_v2(x, (1, 3), axis=1)
    for got, want in zip(by_idx, np.split(_a(3, 4), (1, 3), axis=1)):
        _eq(got, want)
    assert [p.shape for p in x.split_v2(3, axis=0, squeeze_axis=True)] == [(4,)] * 3
    assert mx.nd.split_v2(x, 1).shape == (3, 4)
    assert [p.shape for p in mx.nd._internal._split_v2(x, (), axis=1, sections=2)] == [(3, 2)] * 2
    with pytest.raises(ValueError, match='equal division'):
        mx.nd.split_v2(x, 3, axis=1)
    with pytest.raises(ValueError, match='tuple'):
        mx.nd.split_v2(x, [1], axis=1)
    with pytest.raises(mx.base.MXNetError, match='increasing'):
        mx.nd._internal._split_v2(x, (0, 3, 1), axis=1)


# ---------------------------------------------------------------- slicing
def test_slice_op():
    x = _nd(3, 4)
    a = _a(3, 4)
    _eq(mx.nd.slice(x, begin=(-2,), end=(None,)), a[-2:])
    _eq(mx.nd.slice(x, begin=(2, 3), end=(0, None), step=(-1, -2)),
                                  a[2:0:-1, 3::-2])
    _eq(mx.nd.crop(x, begin=(0, 1), end=(10, 3)), a[0:10, 1:3])
    assert mx.nd.slice(x, begin=(2,), end=(1,)).shape == (0, 4)
    with pytest.raises(mx.base.MXNetError, match='step'):
        mx.nd.slice(x, begin=(0,), end=(2,), step=(0,))


def test_slice_axis_and_slice_like():
    x = _nd(3, 4)
    a = _a(3, 4)
    _eq(mx.nd.slice_axis(x, axis=-1, begin=-3, end=-1), a[:, -3:-1])
    _eq(mx.nd.slice_axis(x, axis=0, begin=1, end=None), a[1:])
    for begin, end in ((1, 1), (2, 1), (0, 10)):
        with pytest.raises(mx.base.MXNetError, match='slice_axis'):
            mx.nd.slice_axis(x, axis=0, begin=begin, end=end)
    _eq(mx.nd.slice_like(x, mx.nd.zeros((2, 2)), axes=(-1,)), a[:, :2])
    _eq(mx.nd.slice_like(x, mx.nd.zeros((2, 3))), a[:2, :3])
    with pytest.raises(mx.base.MXNetError, match='slice_like'):
        mx.nd.slice_like(x, mx.nd.zeros((5, 2)))


def test_diag():
    x3 = _a(2, 3, 4)
    _eq(mx.nd.diag(mx.nd.array(x3)), np.diagonal(x3, 0, 0, 1))
    _eq(mx.nd.diag(mx.nd.array(x3), k=1, axis1=1, axis2=2),
                                  np.diagonal(x3, 1, 1, 2))
    _eq(mx.nd.diag(_nd(3, 4), k=-1), np.diag(_a(3, 4), -1))
    built = mx.nd.diag(mx.nd.array([1, 2], dtype='int32'), k=1)
    assert built.dtype == np.int32
    _eq(built, np.diag([1, 2], 1))
    with pytest.raises(mx.base.MXNetError, match='does not exist'):
        mx.nd.diag(_nd(3, 4), k=5)


# ---------------------------------------------------------------- repeats
def test_tile_and_repeat():
    x = mx.nd.array([[1, 2], [3, 4]])
    _eq(mx.nd.tile(x, reps=(2, 3)), np.tile(x.asnumpy(), (2, 3)))
    _eq(mx.nd.tile(x, reps=(2,)), np.tile(x.asnumpy(), 2))
    assert mx.nd.tile(x, reps=()).shape == (2, 2)
    _eq(mx.nd.repeat(x, repeats=2), np.repeat(x.asnumpy(), 2))
    _eq(x.repeat(repeats=3, axis=-1), np.repeat(x.asnumpy(), 3, -1))
    with pytest.raises(mx.base.MXNetError, match='repeat'):
        mx.nd.repeat(x, repeats=-1, axis=0)


@pytest.mark.parametrize('mode,np_mode', [('constant', 'constant'), ('edge', 'edge'),
                                          ('reflect', 'reflect')])
def test_pad_modes_4d_and_5d(mode, np_mode):
    fill = {'constant_value': -1} if mode == 'constant' else {}
    np_fill = {'constant_values': -1} if mode == 'constant' else {}
    for shape, width in (((1, 2, 3, 4), (0, 0, 0, 0, 2, 1, 1, 3)),
                         ((1, 1, 3, 3, 3), (0, 0, 0, 0, 1, 0, 0, 2, 1, 1))):
        x = _a(*shape)
        got = mx.nd.pad(mx.nd.array(x), mode=mode, pad_width=width, **fill)
        _eq(got, np.pad(x, np.reshape(width, (-1, 2)), np_mode, **np_fill))


def test_pad_errors():
    x = mx.nd.zeros((1, 1, 2, 3))
    with pytest.raises(mx.base.MXNetError, match='4-D and 5-D'):
        mx.nd.Pad(mx.nd.zeros((1, 2, 3)), mode='constant', pad_width=(0, 0, 0, 0, 1, 1))
    with pytest.raises(mx.base.MXNetError, match='first two axes'):
        mx.nd.pad(x, mode='constant', pad_width=(1, 0, 0, 0, 1, 1, 1, 1))
    with pytest.raises(mx.base.MXNetError, match='2 entries per dim'):
        mx.nd.pad(x, mode='constant', pad_width=(0, 0, 0, 0, 1, 1))
    with pytest.raises(mx.base.MXNetError, match='smaller than the input'):
        mx.nd.pad(x, mode='reflect', pad_width=(0, 0, 0, 0, 2, 2, 0, 0))
    with pytest.raises(mx.base.MXNetError, match='mode'):
        mx.nd.pad(x, mode='wrap', pad_width=(0,) * 8)


# ------------------------------------------------------------ broadcasting
def test_broadcast_to_like_axis():
    x = mx.nd.array([[1], [2]])
    _eq(mx.nd.broadcast_to(x, shape=(0, 3)), [[1, 1, 1], [2, 2, 2]])
    _eq(x.broadcast_to((2, 2)), [[1, 1], [2, 2]])
    assert mx.nd.broadcast_like(mx.nd.ones((1, 3)), mx.nd.zeros((4, 5, 6)), lhs_axes=(0,),
                                rhs_axes=(2,)).shape == (6, 3)
    assert mx.nd.broadcast_like(x, mx.nd.zeros((2, 5))).shape == (2, 5)
    assert mx.nd.broadcast_axes(mx.nd.ones((1, 2, 1)), axis=(0, 2), size=(2, 3)).shape == (2, 2, 3)
    assert mx.nd.broadcast_axis(mx.nd.ones((1, 3)), axis=0, size=2).shape == (2, 3)
    for bad in (lambda: mx.nd.broadcast_to(mx.nd.ones((2, 3)), shape=(4, 3)),
                lambda: mx.nd.broadcast_to(mx.nd.ones((3,)), shape=(2, 3)),
                lambda: mx.nd.broadcast_like(mx.nd.ones((2, 3)), mx.nd.zeros((4, 3))),
                lambda: mx.nd.broadcast_axis(mx.nd.ones((2, 3)), axis=0, size=4)):
        with pytest.raises(mx.base.MXNetError, match='broadcast'):
            bad()


def test_broadcast_like_axes_as_mxnet():
    lhs, rhs = mx.nd.ones((1, 1)), mx.nd.zeros((3, 4))
    # one of the axes tuples missing: the whole shape of rhs (MXNet 1.9.1)
    assert mx.nd.broadcast_like(lhs, rhs, lhs_axes=(0,)).shape == (3, 4)
    assert mx.nd.broadcast_like(lhs, rhs, rhs_axes=(1,)).shape == (3, 4)
    assert mx.nd.broadcast_like(lhs, rhs, lhs_axes=(-1,), rhs_axes=(1,)).shape == (1, 4)
    with pytest.raises(mx.base.MXNetError, match='broadcast_like.*empty axes'):
        mx.nd.broadcast_like(lhs, rhs, lhs_axes=(), rhs_axes=())
    with pytest.raises(mx.base.MXNetError, match='broadcast_like.*same length'):
        mx.nd.broadcast_like(lhs, rhs, lhs_axes=(0, 1), rhs_axes=(1,))


def test_shape_and_size_array():
    x = mx.nd.zeros((2, 5, 3))
    shape, size = mx.nd.shape_array(x), mx.nd.size_array(x)
    assert shape.dtype == np.int64 and size.dtype == np.int64
    _eq(shape, [2, 5, 3])
    _eq(size, [30])


# -------------------------------------------------------------- gradients
GRADIENT_CASES = {
    'transpose': (lambda x: mx.nd.transpose(x, axes=(1, 0, 2)), [(2, 3, 2)]),
    'swapaxes': (lambda x: mx.nd.swapaxes(x, 0, 2), [(2, 3, 2)]),
    'expand_squeeze': (lambda x: mx.nd.squeeze(mx.nd.expand_dims(x, axis=1)) * x, [(2, 3)]),
    'flatten': (mx.nd.flatten, [(2, 2, 2)]),
    'reshape': (lambda x: mx.nd.reshape(x, shape=(-1,)), [(2, 3)]),
    'concat': (lambda a, b: mx.nd.concat(a, b * b, dim=0), [(1, 3), (2, 3)]),
    'stack': (lambda a, b: mx.nd.stack(a, b * b, axis=1), [(2, 3), (2, 3)]),
    'split': (lambda x: mx.nd.split(x * x, num_outputs=2, axis=1), [(2, 4)]),
    'split_v2': (lambda x: mx.nd.split_v2(x * x, (1,), axis=0, squeeze_axis=False), [(3, 2)]),
    'slice': (lambda x: mx.nd.slice(x, begin=(2, None), end=(0, None), step=(-1, 2)), [(3, 4)]),
    'slice_axis': (lambda x: mx.nd.slice_axis(x, axis=1, begin=1, end=3), [(2, 4)]),
    'slice_like': (lambda x, like: mx.nd.slice_like(x, like), [(3, 4), (2, 2)]),
    'diag_extract': (lambda x: mx.nd.diag(x, k=1), [(3, 3)]),
    'diag_build': (lambda x: mx.nd.diag(x, k=-1), [(3,)]),
    'tile': (lambda x: mx.nd.tile(x, reps=(2, 2)), [(2, 2)]),
    'repeat': (lambda x: mx.nd.repeat(x, repeats=2, axis=0), [(2, 2)]),
    'pad_constant': (lambda x: mx.nd.pad(x, mode='constant', pad_width=(0, 0, 0, 0, 1, 0, 0, 1)),
                     [(1, 1, 2, 2)]),
    'pad_edge': (lambda x: mx.nd.pad(x, mode='edge', pad_width=(0, 0, 0, 0, 1, 2, 2, 1)), [(1, 1, 2, 3)]),
    'pad_reflect': (lambda x: mx.nd.pad(x, mode='reflect', pad_width=(0, 0, 0, 0, 1, 1, 2, 0)),
                    [(1, 1, 3, 3)]),
    'flip': (lambda x: mx.nd.flip(x, axis=(0, 1)) * x, [(2, 3)]),
    'broadcast_to': (lambda x: mx.nd.broadcast_to(x, shape=(2, 3)), [(1, 3)]),
    'broadcast_like': (lambda x, y: mx.nd.broadcast_like(x, y), [(2, 1), (2, 3)]),
    'broadcast_axis': (lambda x: mx.nd.broadcast_axis(x, axis=(0, 2), size=(2, 2)), [(1, 2, 1)]),
    'depth_to_space': (lambda x: mx.nd.depth_to_space(x, 2) ** 2, [(1, 4, 1, 2)]),
    'space_to_depth': (lambda x: mx.nd.space_to_depth(x, 2) ** 2, [(1, 1, 2, 4)]),
}


@pytest.mark.parametrize('name', sorted(GRADIENT_CASES))
def test_numeric_gradient(name):
    fn, shapes = GRADIENT_CASES[name]
    rng = np.random.RandomState(0)
    check_numeric_gradient(fn, [rng.uniform(-1, 1, size=s) for s in shapes])


# ------------------------------------------------------- shape inference
META_CASES = [
    ('transpose', [(2, 3, 4)], {}), ('SwapAxis', [(2, 3, 4)], {'dim1': 0, 'dim2': 2}),
    ('squeeze', [(2, 1, 3)], {}), ('Concat', [(2, 3), (2, 2)], {'num_args': 2}),
    ('SliceChannel', [(2, 6)], {'num_outputs': 3}), ('_split_v2', [(2, 6)], {'indices': (0, 2)}),
    ('slice', [(3, 4)], {'begin': (0, None), 'end': (2, None), 'step': (1, -1)}),
    ('slice_like', [(3, 4), (2, 2)], {}), ('diag', [(3, 4)], {}), ('tile', [(2, 3)], {'reps': (2, 2)}),
    ('repeat', [(2, 3)], {'repeats': 2}),
    ('Pad', [(1, 1, 3, 3)], {'mode': 'reflect', 'pad_width': (0, 0, 0, 0, 1, 1, 1, 1)}),
    ('broadcast_axis', [(1, 3)], {'axis': 0, 'size': 2}),
    ('depth_to_space', [(1, 4, 2, 2)], {'block_size': 2}),
    ('shape_array', [(1, 3)], {}),
]


@pytest.mark.parametrize('name,shapes,attrs', META_CASES, ids=[c[0] for c in META_CASES])
def test_runs_on_meta_tensors(name, shapes, attrs):
    spec = registry.get(name)
    parsed = spec.parse_attrs(attrs)
    real = spec.impl(*[torch.zeros(s) for s in shapes], **parsed)
    meta = spec.impl(*[torch.zeros(s, device='meta') for s in shapes], **parsed)
    real, meta = (real, meta) if isinstance(real, tuple) else ((real,), (meta,))
    assert [m.shape for m in meta] == [r.shape for r in real]


def test_depth_space_refuse_zero_block_and_zero_dims():
    for op in (mx.nd.depth_to_space, mx.nd.space_to_depth):
        with pytest.raises(mx.base.MXNetError, match='block_size must be positive'):
            op(mx.nd.ones((1, 4, 2, 2)), 0)
        with pytest.raises(mx.base.MXNetError, match='zero dimension'):
            op(mx.nd.array(np.zeros((1, 4, 0, 2))), 2)


def test_tile_refuses_negative_and_legacy_zero_reps():
    d = mx.nd.arange(16).reshape((4, 4))
    for reps in ((1, 2, -3), (1, 0, 3)):
        with pytest.raises(mx.base.MXNetError, match='tile'):
            mx.nd.tile(d, reps)
    with mx.np_shape():
        assert mx.nd.tile(d, (1, 0, 3)).shape == (1, 0, 12)    # as MXNet 1.9.1
