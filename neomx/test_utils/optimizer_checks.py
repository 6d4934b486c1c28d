"""``compare_optimizer``: two optimizers given the same weights and gradients must agree."""
from .. import random as mx_random
from .assertions import assert_almost_equal, compare_ndarray_tuple
from .env import default_context
from .random_data import rand_ndarray

__all__ = ['compare_optimizer']


def _pair(shape, stype, dtype, density):
    """(array for opt2, dense copy for opt1) of uniform values, or of ``stype`` storage."""
    if stype == 'default':
        second = mx_random.uniform(shape=shape, ctx=default_context(), dtype=dtype)
        return second.copyto(default_context()), second
    if stype in ('row_sparse', 'csr'):
        second = rand_ndarray(shape, stype, density=density, dtype=dtype)
        return second.copyto(default_context()).tostype('default'), second
    raise ValueError('storage type %r not supported' % (stype,))


def compare_optimizer(opt1, opt2, shape, dtype, w_stype='default', g_stype='default', rtol=1e-4,
                      atol=1e-5, compare_states=True, ntensors=1):
    """Run one update of ``opt1`` and ``opt2`` from identical states; compare states and weights.

    With ``ntensors`` > 1, ``shape`` is a list of shapes updated together (multi-tensor update).
    """
    shapes = list(shape) if ntensors > 1 else [shape]
    w1, w2, g1, g2 = [], [], [], []
    for s in shapes:
        a, b = _pair(s, w_stype, dtype, density=1)
        w1.append(a)
        w2.append(b)
        a, b = _pair(s, g_stype, dtype, density=None)
        g1.append(a)
        g2.append(b)
    state1 = [opt1.create_state_multi_precision(i, w) for i, w in enumerate(w1)]
    state2 = [opt2.create_state_multi_precision(i, w) for i, w in enumerate(w2)]
    if compare_states:
        for s1, s2 in zip(state1, state2):
            compare_ndarray_tuple(s1, s2)
    if ntensors > 1:
        indices = list(range(ntensors))
        opt1.update_multi_precision(indices, w1, g1, state1)
        opt2.update_multi_precision(indices, w2, g2, state2)
    else:
        opt1.update_multi_precision(0, w1[0], g1[0], state1[0])
        opt2.update_multi_precision(0, w2[0], g2[0], state2[0])
    for s1, s2, a, b in zip(state1, state2, w1, w2):
        if compare_states:
            compare_ndarray_tuple(s1, s2, rtol=rtol, atol=atol)
        assert_almost_equal(a.asnumpy(), b.asnumpy(), rtol=rtol, atol=atol)
