"""``mx.nd.contrib``: operators generated from the registry (filled in by ``neomx.ndarray``)."""

import torch

from .contrib_control_flow import foreach, while_loop, cond  # noqa: F401,E402


def _elementwise_test(name, torch_test):
    def test(data):
        from .ndarray import _new
        return _new(torch_test(data._t).to(data._t.dtype), data.context)
    test.__name__ = name
    test.__doc__ = ('1 where ``data`` is %s, else 0 (in the dtype of ``data``).'
                    % {'isinf': 'infinite', 'isfinite': 'finite', 'isnan': 'NaN'}[name])
    return test


isinf = _elementwise_test('isinf', torch.isinf)
isfinite = _elementwise_test('isfinite', torch.isfinite)
isnan = _elementwise_test('isnan', torch.isnan)
