"""The lists a Trainer's step walks, derived once from its parameters and reused.

A training step of a static network touches the same parameters, arrays and contexts every
time; only the gradient buffers' contents change. Deriving the lists from the Parameters at
each step (which of them get gradients, their arrays per context) cost more than the fused
update itself on a small network, so :class:`TrainedLayout` builds them once, and the
Trainer rebuilds it only when some Parameter gets new arrays or a new ``grad_req``
(``parameter._layout_version`` changes).
"""

__all__ = ['TrainedLayout']


class TrainedLayout:
    """The parameters of a Trainer that get gradients (``grad_req`` other than ``'null'``).

    Parameters
    ----------
    params : list of Parameter
        The Trainer's parameters; a parameter's index in it is its optimizer key.

    Attributes
    ----------
    trained : list of (int, Parameter, list of NDArray)
        Index, parameter and its arrays (one per context) of each parameter that gets
        gradients, in index order.
    indices : list of int
        Their indices (optimizer and KVStore keys). Shared by every step: never modified.
    arrays : list of NDArray
        Every array of every trained parameter, parameter after parameter (the order of
        MXNet's stale-gradient check).
    per_context : list of list of NDArray
        ``per_context[c]``: the arrays on the c-th context, in the order of ``indices``;
        empty when the parameters do not all live on the same number of contexts (the
        Trainer refuses that before its first step).
    """

    def __init__(self, params):
        self.trained = [(i, p, p._list_arrays()) for i, p in enumerate(params) if p.grad_req != 'null']
        self.indices = [i for i, _, _ in self.trained]
        self.arrays = [arr for _, _, arrays in self.trained for arr in arrays]
        counts = {len(arrays) for _, _, arrays in self.trained}
        self.per_context = ([[arrays[c] for _, _, arrays in self.trained] for c in range(counts.pop())]
                            if len(counts) == 1 else [])

    def grad_slots(self):
        """The gradient slots of :attr:`arrays` (None for an array without one), read at
        each call: ``attach_grad`` on an array replaces its slot."""
        return [arr._grad for arr in self.arrays]
