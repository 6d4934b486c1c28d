"""Checks of Gluon blocks: hybridized and imperative runs agree."""
from .. import autograd, initializer
from .assertions import assert_almost_equal

__all__ = ['check_gluon_hybridize_consistency']


class _FromArrays(initializer.Initializer):
    """Initializes every parameter with the value recorded for its name."""

    def __init__(self, values):
        super().__init__()
        self._values = values

    def _init_weight(self, name, arr):
        arr[:] = self._values[name]


def check_gluon_hybridize_consistency(net_builder, data_l, numpy_func=None, test_grad=True, rtol=1E-4,
                                      atol=1E-4):
    """Check that a HybridBlock gives the same outputs (and input gradients, with
    ``test_grad``) imperatively and hybridized, inside and outside ``autograd.record()``.

    Parameters
    ----------
    net_builder : callable
        ``net_builder(prefix=...)`` builds the block (no random operators in it); every
        build gets the parameter values of the first.
    data_l : list of NDArray
        The inputs.
    numpy_func : callable, optional
        The expected function on the inputs as numpy arrays.
    test_grad : bool, default True
    rtol, atol : float, default 1e-4

    >>> from neomx.test_utils import check_gluon_hybridize_consistency
    >>> check_gluon_hybridize_consistency(lambda prefix: mx.gluon.nn.Dense(3, prefix=prefix),
    ...                                   [mx.nd.ones((2, 4))])
    """
    expected_out = expected_grads = params = None
    for hybridize in (False, True):
        for use_autograd in ((False, True) if test_grad else (False,)):
            net = net_builder(prefix='net_')
            if params is None:
                net.initialize()
            else:
                net.initialize(params)
            if hybridize:
                net.hybridize()
            inputs = [x.copy() for x in data_l]
            if use_autograd:
                for x in inputs:
                    x.attach_grad()
                with autograd.record():
                    out = net(*inputs)
                out.backward(out)
            else:
                out = net(*inputs)
            if params is None:
                params = _FromArrays({k: v.data().asnumpy() for k, v in net.collect_params().items()})
            if expected_out is None:
                expected_out = out.asnumpy()
            else:
                assert_almost_equal(out.asnumpy(), expected_out, rtol=rtol, atol=atol)
            if use_autograd:
                grads = [x.grad.asnumpy() for x in inputs]
                if expected_grads is None:
                    expected_grads = grads
                else:
                    for grad, expected in zip(grads, expected_grads):
                        assert_almost_equal(grad, expected, rtol=rtol, atol=atol)
    if numpy_func is not None:
        assert_almost_equal(expected_out, numpy_func(*[x.asnumpy() for x in data_l]), rtol=rtol, atol=atol)
