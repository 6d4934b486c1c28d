"""Whether this process ever made a sparse tensor: a sparse array, or a sparse gradient (an
``Embedding`` with ``sparse_grad``, ``dot(csr, w)``'s rows). Until then the hot paths skip
their sparsity checks -- the operators' storage entries, optimizers, cached graphs, the
gradient hooks -- for one list read each (reading a tensor's ``layout`` costs far more).
Below every layer that reads or sets it."""

__all__ = ['SPARSE_MADE']

SPARSE_MADE = [False]
