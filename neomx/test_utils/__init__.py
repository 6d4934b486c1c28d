"""``mx.test_utils``: MXNet's helpers for testing code written against its API.

Comparing arrays with tolerances by dtype, random shapes and arrays, checking Symbols forward,
backward and against finite differences, comparing optimizers, checking random generators, and
getting test data sets. Like MXNet's module it has no ``__all__``: ``from mxnet.test_utils
import *`` also brings in the modules and names it uses (``mx``, ``np``, ``rnd``, ``NDArray``...),
which MXNet's own test files rely on.
"""
# pylint: disable=unused-import,wildcard-import
import bz2
import errno
import gzip
import json
import logging
import numbers
import os
import platform
import struct
import sys
import time
import traceback
import zipfile
from collections import OrderedDict
from contextlib import contextmanager

import numpy as np
import numpy.random as rnd
import numpy.testing as npt

from ..context import Context, current_context
from ..ndarray.ndarray import NDArray, array
from ..symbol import Symbol
from ..symbol.numpy import NumpySymbol as np_symbol  # noqa: F401  (MXNet's test_utils holds it)
from ..util import get_cuda_compute_capability, getenv, setenv
from .assertions import *
from .assertions import _find_max_violation
from .datasets import *
from .env import *
from .generator_checks import *
from .gluon_checks import *
from ..runtime import Features  # noqa: F401  (MXNet's test_utils holds it)
from .optimizer_checks import *
from .random_data import *
from .symbolic_checks import *
from .symbolic_checks import _parse_aux_states, _parse_location
from .tolerances import (default_atols, default_dtype, default_numeric_eps, default_rtols,
                         effective_dtype, get_atol, get_etol, get_rtol, get_tolerance, get_tols)

# MXNet's module holds the whole package as ``mx`` (which ``import *`` hands on); neomx's
# __init__, which imports this module, sets it, so that this module imports nothing above it.
mx = None


def __getattr__(name):
    # scipy is optional for neomx: MXNet's ``test_utils.ss`` (scipy.stats) loads on first use
    if name == 'ss':
        import scipy.stats
        return scipy.stats
    raise AttributeError("module 'neomx.test_utils' has no attribute %r" % (name,))
