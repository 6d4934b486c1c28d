"""Devices: ``mx.cpu(i)``, ``mx.gpu(i)``, ``with ctx:`` default-context scopes.

Several CPU contexts (``cpu(0)``, ``cpu(1)``...) all compute on torch's CPU device, but an
NDArray remembers which one it lives on and copies between them are real copies, so
multi-device code (KVStore aggregation, ``split_and_load``) behaves the same on a laptop
as on a GPU server.
"""
import re
import threading
import warnings

import torch

from .base import MXNetError

__all__ = ['Context', 'cpu', 'gpu', 'cpu_pinned', 'current_context', 'num_gpus', 'gpu_memory_info']

# names MXNet's module also holds (imported from its base module)
from .base import check_call, classproperty, with_metaclass, ClassPropertyMeta  # noqa: E402,F401

# MXNet's string form of a context, as its creation operators parse it: 'cpu(0)', 'gpu(1)'.
_DEFAULT_CTX_DEPRECATED = ('Context.default_ctx has been deprecated. Please use Context.current_context() '
                           'instead. Please use test_utils.set_default_context to set a default context')
_CONTEXT_STRING = re.compile(r'(cpu|gpu|cpu_pinned|cpu_shared)\((\d+)\)')


class Context(with_metaclass(ClassPropertyMeta, object)):
    """A device: type ('cpu', 'gpu', 'cpu_pinned', 'cpu_shared') and id.

    Parameters
    ----------
    device_type : str or Context
        Device kind, or another Context to copy.
    device_id : int, default 0
        Device ordinal.

    Example
    -------
    >>> ctx = mx.Context('cpu', 1)
    >>> ctx, ctx.device_type, ctx.device_id, ctx == mx.cpu(1)
    (cpu(1), 'cpu', 1, True)
    >>> with mx.cpu(1):                         # the default context inside the block
    ...     mx.nd.zeros(2).context
    cpu(1)
    """
    __slots__ = ('device_typeid', 'device_id', '_old_ctx', '_torch_device')
    devtype2str = {1: 'cpu', 2: 'gpu', 3: 'cpu_pinned', 5: 'cpu_shared'}
    devstr2type = {v: k for k, v in devtype2str.items()}
    _default = threading.local()

    @classproperty
    def default_ctx(cls):
        """This thread's default context (MXNet 1.x's deprecated spelling of
        :func:`current_context`; assigning it sets this thread's default)."""
        warnings.warn(_DEFAULT_CTX_DEPRECATED, DeprecationWarning)
        return current_context()

    @default_ctx.setter
    def default_ctx(cls, ctx):
        warnings.warn(_DEFAULT_CTX_DEPRECATED, DeprecationWarning)
        Context._default.value = ctx

    def __init__(self, device_type, device_id=0):
        if isinstance(device_type, Context):
            self.device_typeid, self.device_id = device_type.device_typeid, device_type.device_id
        else:
            if device_type not in self.devstr2type:
                raise MXNetError('unknown device type %r; expected one of %s'
                                 % (device_type, sorted(self.devstr2type)))
            self.device_typeid, self.device_id = self.devstr2type[device_type], int(device_id)
        self._old_ctx = None
        self._torch_device = None

    @property
    def device_type(self):
        return self.devtype2str[self.device_typeid]

    @property
    def torch_device(self):
        """The torch device this context computes on (checked on first use)."""
        dev = self._torch_device
        if dev is None:
            if self.device_typeid == 2:
                if self.device_id >= num_gpus():
                    raise MXNetError('gpu(%d) is not available: this machine has %d GPU(s) visible to '
                                     'torch' % (self.device_id, num_gpus()))
                dev = torch.device('cuda', self.device_id)
            else:
                dev = _CPU
            self._torch_device = dev
        return dev

    def __hash__(self):
        return hash((self.device_typeid, self.device_id))

    def __eq__(self, other):
        return (isinstance(other, Context) and self.device_typeid == other.device_typeid
                and self.device_id == other.device_id)

    def __ne__(self, other):
        return not self.__eq__(other)

    def __str__(self):
        return '%s(%d)' % (self.device_type, self.device_id)

    __repr__ = __str__

    def __enter__(self):
        self._old_ctx = current_context()
        Context._default.value = self
        return self

    def __exit__(self, *exc):
        Context._default.value = self._old_ctx

    def empty_cache(self):
        """Release cached GPU memory of this device back to the driver."""
        if self.device_typeid == 2 and torch.cuda.is_available():
            with torch.cuda.device(self.device_id):
                torch.cuda.empty_cache()


_CPU = torch.device('cpu')


def cpu(device_id=0):
    """CPU context ``cpu(device_id)``; distinct ids are distinct logical devices."""
    return Context('cpu', device_id)


def cpu_pinned(device_id=0):
    """Page-locked host memory context (computes on the CPU)."""
    return Context('cpu_pinned', device_id)


def gpu(device_id=0):
    """GPU context ``gpu(device_id)``; using it on a machine without that GPU raises MXNetError."""
    return Context('gpu', device_id)


def num_gpus():
    """Number of CUDA devices torch can see."""
    return torch.cuda.device_count() if torch.cuda.is_available() else 0


def gpu_memory_info(device_id=0):
    """(free, total) bytes of a GPU."""
    if device_id >= num_gpus():
        raise MXNetError('gpu(%d) is not available' % device_id)
    return torch.cuda.mem_get_info(device_id)


def current_context():
    """The default context of this thread: ``cpu(0)`` unless inside ``with ctx:``."""
    ctx = getattr(Context._default, 'value', None)
    if ctx is None:
        ctx = Context._default.value = Context('cpu', 0)
    return ctx


def as_context(ctx, argument='ctx'):
    """``ctx`` as a Context: a Context itself, MXNet's string form (``'cpu(0)'``,
    ``'gpu(1)'``), or None for the current context.

    Raises
    ------
    MXNetError
        For anything else, naming ``argument`` and the accepted forms.

    Example
    -------
    >>> as_context('gpu(1)')
    gpu(1)
    """
    if ctx is None:
        return current_context()
    if isinstance(ctx, Context):
        return ctx
    if isinstance(ctx, str):
        match = _CONTEXT_STRING.fullmatch(ctx.strip())
        if match:
            return Context(match.group(1), int(match.group(2)))
    raise MXNetError("%s=%r is not a context: use mx.cpu(), mx.gpu(i) or MXNet's string form "
                     "such as 'cpu(0)' or 'gpu(1)'" % (argument, ctx))


def as_context_list(ctx, argument='ctx'):
    """``ctx`` (None, a context or a list of them, in any form :func:`as_context` takes) as a
    list of Contexts; None gives ``[current_context()]``."""
    if ctx is None or isinstance(ctx, (Context, str)):
        return [as_context(ctx, argument)]
    if isinstance(ctx, (list, tuple)):
        return [as_context(c, argument) for c in ctx]
    raise MXNetError("%s=%r is not a context or a list of contexts: use mx.cpu(), mx.gpu(i) or "
                     "lists of them" % (argument, ctx))


def context_of_device(device):
    """The Context naming a torch device (cuda:i -> gpu(i), cpu -> cpu(0))."""
    if device.type == 'cuda':
        return Context('gpu', device.index or 0)
    return Context('cpu', 0)


def context_naming(tensor):
    """The context an array wrapping ``tensor`` is on when none is given: the current one
    where ``tensor`` lives on its device (cpu(3) names CPU tensors too), else the context of
    the tensor's own device (a CPU tensor wrapped inside ``with mx.gpu():`` is on cpu(0)).

    Example
    -------
    >>> import torch
    >>> from neomx.context import context_naming
    >>> with mx.cpu(3):
    ...     context_naming(torch.zeros(2))
    cpu(3)
    """
    ctx = current_context()
    device = tensor.device
    if device.type == 'cuda':
        if ctx.device_typeid != 2 or ctx.device_id != (device.index or 0):
            return context_of_device(device)
    elif device.type == 'cpu' and ctx.device_typeid == 2:
        return Context('cpu', 0)
    return ctx
