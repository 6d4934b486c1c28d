"""``Test``: the trivial optimizer MXNet's own tests use (``mx.optimizer.create('test')``).

``weight += rescale_grad * grad``, and the state holds the new weight: results are exact
sums, which is what distributed tests compare with equality.
"""
from ..ndarray.ndarray import wrap_tensor
from .optimizer import Optimizer, register

__all__ = ['Test']


@register
class Test(Optimizer):
    """``weight += rescale_grad * grad``; the state is a copy of the updated weight.

    Example
    -------
    >>> opt = mx.optimizer.create('test', rescale_grad=0.5)
    >>> weight = mx.nd.ones(2)
    >>> state = opt.create_state(0, weight)
    >>> opt.update(0, weight, mx.nd.array([2, 4]), state)     # w += 0.5 * g
    >>> weight, state
    (
    [2. 3.]
    <NDArray 2 @cpu(0)>,
    [2. 3.]
    <NDArray 2 @cpu(0)>)
    """

    def create_state(self, index, weight):
        return wrap_tensor(weight._t.new_zeros(weight._t.shape), weight.context)

    def _step(self, indices, weights, grads, states, lrs, wds):
        for w, g, s in zip(weights, grads, states):
            w.add_(g.to(w.dtype), alpha=self.rescale_grad)
            s.copy_(w)
