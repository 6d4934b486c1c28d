"""Bad ``dtype`` and numpy-array ``shape`` arguments, refused as MXNet 1.9.1 refuses them.

MXNet raises numpy's ``TypeError`` for an unknown dtype name on its Python paths and
``MXNetError`` for a numpy dtype it lacks; neomx raises one ``MXNetTypeError`` (both) naming
the function and the value. MXNet's operators read a shape from its text, so a numpy array
of one entry works and one of several ('[2 3]') does not; ``empty``, ``full`` and
``NDArray.broadcast_to`` turn it into a tuple first, in MXNet and here.
"""
import numpy as np
import pytest

import neomx as mx
from neomx.base import MXNetError


def _dense():
    net = mx.gluon.nn.Dense(2, in_units=2)
    net.initialize()
    return net


DTYPE_TAKERS = {
    'zeros': lambda dt: mx.nd.zeros((2, 3), dtype=dt),
    'ones': lambda dt: mx.nd.ones((2, 3), dtype=dt),
    'full': lambda dt: mx.nd.full((2, 3), 1.0, dtype=dt),
    'empty': lambda dt: mx.nd.empty((2, 3), dtype=dt),
    'array': lambda dt: mx.nd.array([1, 2], dtype=dt),
    'arange': lambda dt: mx.nd.arange(3, dtype=dt),
    'astype': lambda dt: mx.nd.ones((2,)).astype(dt),
    'Cast': lambda dt: mx.nd.cast(mx.nd.ones((2,)), dtype=dt),
    'var': lambda dt: mx.sym.var('x', dtype=dt),
    "Parameter 'w'": lambda dt: mx.gluon.Parameter('w', shape=(2,), dtype=dt),
    'Dense.cast': lambda dt: _dense().cast(dt),
}


@pytest.mark.parametrize('where', sorted(DTYPE_TAKERS))
@pytest.mark.parametrize('bad', ['float33', 'complex64', np.uint16])
def test_a_bad_dtype_names_the_function_the_argument_and_the_value(where, bad):
    with pytest.raises(MXNetError, match=r"^%s: invalid value .*%s.* for argument 'dtype'"
                       % (where, np.dtype(bad).name if not isinstance(bad, str) else bad)) as info:
        DTYPE_TAKERS[where](bad)
    # MXNet raised numpy's TypeError on these paths for unknown names: both kinds of except work
    assert isinstance(info.value, TypeError)


def test_symbol_cast_refuses_a_bad_dtype_when_built():
    with pytest.raises(TypeError, match=r"^Cast: invalid value 'float33' for argument 'dtype'"):
        mx.sym.cast(mx.sym.var('x'), dtype='float33')


def test_block_cast_with_a_bad_dtype_changes_no_parameter():
    net = mx.gluon.nn.HybridSequential()
    net.add(mx.gluon.nn.Dense(2, in_units=2), mx.gluon.nn.Dense(2, in_units=2))
    net.initialize()
    with pytest.raises(MXNetError, match='float33'):
        net.cast('float33')
    assert [np.dtype(p.dtype) for p in net.collect_params().values()] == [np.float32] * 4
    assert all(p.data().dtype == np.float32 for p in net.collect_params().values())


def test_good_dtype_spellings_still_work():
    for dt in ('float16', np.float64, np.dtype('int32'), 'bfloat16', None):
        x = mx.nd.zeros((2,), dtype=dt)
        assert x.dtype == (np.float32 if dt is None else mx.base.np_dtype(mx.base.torch_dtype(dt)))
    assert mx.gluon.Parameter('w', shape=(2,), dtype='float16').dtype == 'float16'


SEVERAL = np.array([2, 3])


@pytest.mark.parametrize('where, call', [
    ('zeros', lambda: mx.nd.zeros(SEVERAL)),
    ('ones', lambda: mx.nd.ones(shape=SEVERAL)),
    ('reshape', lambda: mx.nd.ones(6).reshape(SEVERAL)),
    ('reshape', lambda: mx.nd.ones(6).reshape(shape=SEVERAL)),
    ('Reshape', lambda: mx.nd.reshape(mx.nd.ones(6), shape=SEVERAL)),
    ('broadcast_to', lambda: mx.nd.broadcast_to(mx.nd.ones((1, 3)), shape=SEVERAL)),
    ('_random_uniform', lambda: mx.nd.random.uniform(shape=SEVERAL)),
    ('var', lambda: mx.sym.var('x', shape=SEVERAL)),
    ('Reshape', lambda: mx.sym.reshape(mx.sym.var('x'), shape=SEVERAL)),
    ('_zeros', lambda: mx.sym.zeros(shape=SEVERAL)),
])
def test_a_numpy_array_of_several_entries_is_not_a_shape(where, call):
    with pytest.raises(MXNetError, match=r"^%s: invalid value array\(\[2, 3\]\) for argument 'shape'" % where):
        call()


def test_numpy_shapes_that_mxnet_takes():
    # empty, full and the broadcast_to method make a tuple of it first
    assert mx.nd.empty(SEVERAL).shape == (2, 3)
    assert mx.nd.full(SEVERAL, 2.0).asnumpy().tolist() == [[2.0] * 3] * 2
    assert mx.nd.ones((1, 3)).broadcast_to(SEVERAL).shape == (2, 3)
    # one entry or none prints as '3' or '[3]', which MXNet's shape parser reads
    for one in (np.array(6), np.array([6]), np.int64(6)):
        assert mx.nd.zeros(one).shape == (6,)
        assert mx.nd.ones((2, 3)).reshape(one).shape == (6,)
        assert mx.sym.var('x', shape=one).infer_shape()[1] == [(6,)]
        assert mx.sym.reshape(mx.sym.var('x'), shape=one).infer_shape(x=(2, 3))[1] == [(6,)]
    assert mx.nd.ones((2, 3)).sum(axis=np.array([1])).shape == (2,)
