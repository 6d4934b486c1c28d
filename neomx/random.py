"""``mx.random``: seeding and the samplers of ``mx.nd.random``."""
import torch

from .ndarray.random import *  # noqa: F401,F403
# names MXNet's module also holds
from .base import check_call, integer_types  # noqa: E402,F401
from .context import Context  # noqa: E402,F401


def seed(seed_state, ctx='all'):
    """Seed neomx's random number generators: all devices, or the one of ``ctx``.

    The same seed gives the same samples on the same device and torch version. Like
    MXNet, this leaves Python's ``random`` and NumPy's global generator alone.
    """
    seed_state = int(seed_state)
    if ctx == 'all' or ctx.device_type != 'gpu':
        torch.manual_seed(seed_state)          # the CPU generator (torch seeds every GPU too)
    else:
        with torch.cuda.device(ctx.device_id):
            torch.cuda.manual_seed(seed_state)
