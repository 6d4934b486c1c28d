"""mx.npx: the NumPy-extension operators (values, shapes, gradients, errors), the semantics
switches, save/load, random and image, and their mx.nd.npx / mx.sym.npx forms."""
import json
import os

import numpy as onp
import pytest

import neomx as mx
from neomx import autograd, np, npx
from neomx.base import MXNetError


@pytest.fixture
def numpy_mode():
    npx.set_np()
    yield
    npx.reset_np()


def test_operators_take_and_return_np_arrays():
    x = np.array([[-1.0, 2.0], [3.0, -4.0]])
    out = npx.relu(x)
    assert type(out) is np.ndarray and out.tolist() == [[0.0, 2.0], [3.0, 0.0]]
    assert onp.allclose(npx.sigmoid(x).asnumpy(), 1 / (1 + onp.exp(-x.asnumpy())))
    soft = npx.softmax(x, axis=-1).asnumpy()
    assert onp.allclose(soft.sum(axis=1), 1) and soft.dtype == onp.float32
    assert npx.activation(x, act_type='tanh').shape == (2, 2)
    assert npx.one_hot(np.array([1, 0]), 3).tolist() == [[0, 1, 0], [1, 0, 0]]
    assert npx.pick(x, np.array([1, 0]), axis=1).tolist() == [2.0, 3.0]
    assert npx.topk(x, k=1, ret_typ='value').tolist() == [[2.0], [3.0]]
    assert npx.batch_dot(np.ones((2, 3, 4)), np.ones((2, 4, 5))).shape == (2, 3, 5)
    assert npx.batch_flatten(np.ones((2, 3, 4))).shape == (2, 12)
    assert npx.fully_connected(np.ones((2, 3)), np.ones((4, 3)), np.zeros(4), num_hidden=4).tolist() == [[3.0] * 4] * 2
    assert npx.convolution(np.ones((1, 1, 5, 5)), np.ones((2, 1, 3, 3)), np.zeros(2), kernel=(3, 3),
                           num_filter=2).shape == (1, 2, 3, 3)
    assert npx.pooling(np.ones((1, 1, 4, 4)), kernel=(2, 2), stride=(2, 2), pool_type='avg').shape == (1, 1, 2, 2)
    assert npx.embedding(np.array([0, 2]), np.arange(6).reshape(3, 2), input_dim=3, output_dim=2).tolist() == \
        [[0, 1], [4, 5]]
    seq = npx.sequence_mask(np.ones((3, 2)), np.array([1, 3]), use_sequence_length=True, value=-1)
    assert seq.tolist() == [[1, 1], [-1, 1], [-1, 1]]
    assert npx.nonzero(np.array([[0, 1], [2, 0]])).tolist() == [[0, 1], [1, 0]]
    assert npx.arange_like(np.ones((2, 3)), axis=1).tolist() == [0, 1, 2]
    assert npx.gamma(np.array([5.0])).tolist() == [24.0]


def test_reshape_with_mxnet_codes():
    cases = [((2, 3, 5, 5), (-2, -1), False, (2, 75)), ((2, 1, 4, 5), (-2, -3, -2, -2), False, (2, 4, 5)),
             ((1, 1, 1, 1), (-3, -3, -3, -3), False, ()), ((2, 3, 5, 6), (6, 1, -4), False, (6, 1, 5, 6)),
             ((2, 3, 5, 6), (-5, -1), False, (6, 30)), ((64, 1, 2, 3), (-6, 16, -1, -4), False, (16, 4, 1, 2, 3)),
             ((8, 5, 4, 6), (-4, -1, 3, -6), True, (8, 5, 4, 2, 3))]
    for shape, newshape, reverse, expected in cases:
        a = np.arange(int(onp.prod(shape))).reshape(shape)
        out = npx.reshape(a, newshape, reverse=reverse)
        assert out.shape == expected
        assert out.asnumpy().ravel().tolist() == a.asnumpy().ravel().tolist()
    with pytest.raises(MXNetError, match='_npx_reshape: cannot reshape'):
        npx.reshape(np.ones((2, 3)), (4, -2))
    with pytest.raises(MXNetError, match='code -3 skips an input dim of size 1'):
        npx.reshape(np.ones((2, 3)), (-3, -2))


def test_gradients_flow_through_npx_operators():
    x = np.array([[-1.0, 2.0]])
    x.attach_grad()
    with autograd.record():
        y = (npx.relu(x) * 3 + npx.sigmoid(x)).sum()
    y.backward()
    s = 1 / (1 + onp.exp(-x.asnumpy()))
    assert onp.allclose(x.grad.asnumpy(), (x.asnumpy() > 0) * 3 + s * (1 - s))
    assert type(x.grad) is np.ndarray


def test_interfaces_refuse_each_others_arrays():
    with pytest.raises(TypeError, match='numpy operator which can only accept MXNet numpy ndarrays'):
        npx.relu(mx.nd.ones(2))
    with pytest.raises(TypeError, match='legacy operator which can only accept legacy ndarrays'):
        mx.nd.relu(np.ones(2))
    assert type(mx.nd.relu(np.ones(2).as_nd_ndarray())) is mx.nd.NDArray


def test_constraint_check():
    assert bool(npx.constraint_check(np.ones(3, dtype='bool'), 'fine'))
    with pytest.raises(ValueError, match='condition violated'):
        npx.constraint_check(np.array([True, False]), 'condition violated')


def test_semantics_switches_and_devices():
    assert not npx.is_np_array() and not npx.is_np_shape()
    npx.set_np()
    try:
        assert npx.is_np_array() and npx.is_np_shape()
    finally:
        npx.reset_np()
    assert npx.cpu() == mx.cpu() and npx.current_context() == mx.current_context()
    assert npx.num_gpus() == mx.context.num_gpus()
    npx.waitall()


def test_save_and_load(tmp_path, numpy_mode):
    path = str(tmp_path / 'arrays')
    npx.save(path, {'w': np.arange(3), 'b': np.ones((2, 2))})
    loaded = npx.load(path)
    assert sorted(loaded) == ['b', 'w'] and type(loaded['w']) is np.ndarray
    assert loaded['w'].tolist() == [0, 1, 2]
    npx.save(path, np.zeros(2))
    assert [a.tolist() for a in npx.load(path)] == [[0.0, 0.0]]
    assert mx.nd.load(path)[0].asnumpy().tolist() == [0.0, 0.0]      # MXNet's file format
    with pytest.raises(TypeError, match='Only accepts dict str->ndarray or list of ndarrays'):
        npx.save(path, [mx.nd.ones(2)])


def test_save_refused_outside_numpy_semantics(tmp_path):
    with pytest.raises(ValueError, match='Cannot save `mxnet.numpy.ndarray` in legacy mode'):
        npx.save(str(tmp_path / 'x'), np.ones(2))


def test_random_samplers():
    npx.random.seed(7)
    a = npx.random.normal_n(np.zeros((3,)), 1.0, batch_shape=(2,))
    npx.random.seed(7)
    b = npx.random.normal_n(np.zeros((3,)), 1.0, batch_shape=(2,))
    assert a.shape == (2, 3) and a.tolist() == b.tolist()
    u = npx.random.uniform_n(1.0, 2.0, batch_shape=1000, dtype='float64')
    assert u.dtype == onp.float64 and bool(((u >= 1) & (u < 2)).all())
    assert npx.random.bernoulli(prob=np.array([0.0, 1.0])).tolist() == [0.0, 1.0]
    assert npx.random.bernoulli(logit=0.0, size=(4, 5), dtype='bool').shape == (4, 5)
    with pytest.raises(ValueError, match='Either `prob` or `logit` must be specified'):
        npx.random.bernoulli(prob=0.5, logit=0.1)
    loc = np.zeros(3)
    loc.attach_grad()
    with autograd.record():
        y = npx.random.normal_n(loc, 2.0, batch_shape=(4,))
    y.backward()
    assert loc.grad.tolist() == [4.0, 4.0, 4.0]


def test_image_operators():
    img = np.array(onp.arange(2 * 2 * 3).reshape(2, 2, 3).astype('uint8'))
    t = npx.image.to_tensor(img)
    assert type(t) is np.ndarray and t.shape == (3, 2, 2) and t.dtype == onp.float32
    assert npx.image.normalize(t, mean=(0.5, 0.5, 0.5), std=(0.5, 0.5, 0.5)).shape == (3, 2, 2)
    assert npx.image.flip_left_right(img).asnumpy().tolist() == img.asnumpy()[:, ::-1].tolist()


def test_nd_and_sym_forms():
    x = np.array([[-1.0, 2.0]])
    assert mx.nd.npx.relu(x).tolist() == [[0.0, 2.0]]
    assert mx.nd.np.add(x, x).tolist() == [[-2.0, 4.0]]
    data = mx.sym.var('data').as_np_ndarray()
    out = mx.sym.npx.reshape(mx.sym.npx.relu(data) + 1, (-1,))
    assert type(out).__name__ == '_Symbol'
    ops = [n['op'] for n in json.loads(out.tojson())['nodes'] if n['op'] != 'null']
    assert ops == ['_npx_relu', '_npi_add_scalar', '_npx_reshape']
    result = out.as_nd_ndarray().eval(data=mx.nd.array([[-1, 2]]))[0]
    assert result.asnumpy().tolist() == [1.0, 3.0]


def test_remembered_string_attributes_keep_their_types_apart():
    """Calls whose string attributes are given as strings skip parsing the next time; 1, 1.0
    and True (equal as keys) still print as themselves."""
    false = np.array([True, False])
    for msg in ('bad', 'bad', 1, 1.0, True, 'bad'):
        with pytest.raises(ValueError, match='^%s$' % str(msg).replace('.', r'\.')):
            npx.constraint_check(false, msg=msg)
    assert bool(npx.constraint_check(np.array([True, True]), msg='fine'))
