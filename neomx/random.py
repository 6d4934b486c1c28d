"""``mx.random``: seeding and the samplers of ``mx.nd.random``."""
import random as _pyrandom

import numpy as np
import torch

from .ndarray.random import *  # noqa: F401,F403


def seed(seed_state, ctx='all'):
    """Seed the random number generators (all devices, or the one of ``ctx``).

    The same seed gives the same samples on the same device and torch version.
    """
    seed_state = int(seed_state)
    if ctx == 'all' or getattr(ctx, 'device_type', 'cpu') != 'gpu':
        torch.manual_seed(seed_state)
    if torch.cuda.is_available() and (ctx == 'all' or getattr(ctx, 'device_type', None) == 'gpu'):
        if ctx == 'all':
            torch.cuda.manual_seed_all(seed_state)
        else:
            with torch.cuda.device(ctx.device_id):
                torch.cuda.manual_seed(seed_state)
    _pyrandom.seed(seed_state)
    np.random.seed(seed_state % (2 ** 32))
