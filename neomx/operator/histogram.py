"""``_histogram``: counts of values in bins, behind ``mx.nd.histogram`` and ``mx.sym.histogram``.

MXNet semantics kept here, which are numpy's: bins are half open ``[left, right)`` except the
last, which includes its right edge; values outside the edges are not counted. Equal-width
edges are ``low + i * (high - low) / bin_cnt`` with the last one exactly ``high``. Counts are
int64; the edges have the data's dtype.
"""
import torch

from .dtype_rules import DTypeRule
from .registry import OPT_FLOATS, OPT_INT, check, register

_OP = '_histogram'


def _equal_width_edges(low, high, bin_cnt, dtype, device):
    step = (high - low) / bin_cnt
    edges = low + torch.arange(bin_cnt + 1, dtype=torch.float64, device=device) * step
    edges[-1] = high
    return edges.to(dtype)


@register(_OP, inputs=('data', 'bins'), attrs=[('bin_cnt', OPT_INT, None), ('range', OPT_FLOATS, None)],
          optional_inputs=lambda a: ('bins',) if a['bin_cnt'] is not None else (),
          num_outputs=2, dtypes=DTypeRule(free=('bins',), output='int64', later_outputs=lambda dtypes, attrs: dtypes[0]))
def histogram(data, bins, bin_cnt, range):  # pylint: disable=redefined-builtin
    """Counts of ``data``'s values in bins given by their edges ``bins`` or by ``bin_cnt``
    equal bins over ``range``.

    Parameters
    ----------
    data : Tensor, any shape
    bins : Tensor, shape (B + 1,), increasing edges (absent with ``bin_cnt``)

    Returns
    -------
    counts : int64 Tensor, shape (B,) (B = ``bin_cnt``)
    edges : Tensor, shape (B + 1,), data's dtype
    """
    if bin_cnt is not None:
        check(bin_cnt >= 1, _OP, 'bin_cnt must be positive, got %d', bin_cnt)
        check(range is not None and len(range) == 2 and range[0] <= range[1], _OP,
              'range must be (low, high) with low <= high when bin_cnt is given, got %s', range)
        edges = _equal_width_edges(range[0], range[1], bin_cnt, data.dtype, data.device)
    else:
        check(bins is not None and bins.dim() == 1 and bins.shape[0] >= 2, _OP,
              'bins must be a 1-D array of at least 2 edges, got shape %s',
              None if bins is None else tuple(bins.shape))
        edges = bins.to(data.dtype)
    num_bins = edges.shape[0] - 1
    if data.is_meta:
        return torch.empty(num_bins, dtype=torch.int64, device='meta'), edges
    values = data.detach().reshape(-1).to(torch.float64)
    search_edges = edges.detach().to(torch.float64)
    index = torch.bucketize(values, search_edges, right=True) - 1
    index = torch.where(values == search_edges[-1], num_bins - 1, index)      # the last edge is inside
    inside = (index >= 0) & (index < num_bins)
    counts = torch.bincount(index[inside], minlength=num_bins)
    return counts, edges.detach()
