"""Model parallelism: where each operator of a bound graph runs (``bind(group2ctx=...)``).

Operators created inside ``mx.AttrScope(ctx_group='dev1')`` carry the attribute
``__ctx_group__``; binding with ``group2ctx={'dev1': mx.gpu(1), ...}`` runs each of them on
its group's context, as MXNet's executors do. The others are placed as MXNet's
``PlaceDevice`` pass places them: an operator takes the context of its first placed input,
otherwise of its first placed consumer, otherwise the context the graph is bound to.
Tensors cross devices where a placed operator reads a value that lives elsewhere (MXNet
inserts ``_CrossDeviceCopy`` nodes there); torch's autograd carries the gradients back
across the same borders.
"""
import functools

from ..context import as_context
from .plan import Call, Plan

__all__ = ['placement', 'argument_contexts', 'DevicePass']


def _group_context(node, group2ctx):
    group = node.attrs.get('__ctx_group__')
    if group is not None and group in group2ctx:
        return as_context(group2ctx[group], 'group2ctx')
    return None


def placement(symbol, ctx, group2ctx):
    """``{operator node: Context}`` of every operator node of ``symbol`` bound on ``ctx``
    with ``group2ctx`` (a dict of ``ctx_group`` name -> Context; None or empty places
    everything on ``ctx``).

    Example
    -------
    >>> a, b = mx.sym.var('a'), mx.sym.var('b')
    >>> with mx.AttrScope(ctx_group='dev1'):
    ...     c = a * 2
    >>> with mx.AttrScope(ctx_group='dev2'):
    ...     d = c + b
    >>> e = mx.sym.relu(d)
    >>> from neomx.symbol.placement import placement
    >>> [str(ctx) for ctx in placement(e, mx.cpu(0), {'dev1': mx.cpu(1), 'dev2': mx.cpu(2)}).values()]
    ['cpu(1)', 'cpu(2)', 'cpu(2)']
    """
    operators = [n for n in symbol._nodes() if not n.is_variable]
    if not group2ctx:
        return {n: ctx for n in operators}
    devices = {}
    for node in operators:
        placed = _group_context(node, group2ctx)
        if placed is not None:
            devices[node] = placed
    for node in operators:          # forwards: from the first placed input
        if node not in devices:
            for source, _ in node.inputs:
                if source in devices:
                    devices[node] = devices[source]
                    break
    consumers = {}
    for node in operators:
        for source, _ in node.inputs:
            consumers.setdefault(source, []).append(node)
    for node in reversed(operators):     # backwards: from the first placed consumer
        if node not in devices:
            for user in consumers.get(node, ()):
                if user in devices:
                    devices[node] = devices[user]
                    break
    return {n: devices.get(n, ctx) for n in operators}


def argument_contexts(symbol, ctx, group2ctx):
    """``{variable name: Context}`` where ``simple_bind`` allocates each argument and
    auxiliary state, as MXNet's: on its own ``ctx_group``'s context, else on ``ctx``."""
    return {node.name: _group_context(node, group2ctx or {}) or ctx
            for node in symbol._nodes() if node.is_variable}


def _on_device(fn, device):
    """``fn`` with its input tensors moved to ``device`` first (a differentiable copy)."""
    def run(*tensors):
        return fn(*[t.to(device) if t is not None and t.device != device else t for t in tensors])
    return run


class DevicePass:
    """A plan pass running each call on its node's context from ``devices`` (see
    :func:`placement`); operators creating arrays create them there. Passes with the same
    placement are equal, so a graph bound twice the same way is compiled once (passes are
    part of the compiled-graph cache key).

    Example
    -------
    >>> from neomx.symbol.placement import DevicePass, placement
    >>> with mx.AttrScope(ctx_group='dev1'):
    ...     sym = mx.sym.exp(mx.sym.var('a'))
    >>> devices = placement(sym, mx.cpu(0), {'dev1': mx.cpu(1)})
    >>> DevicePass(devices) == DevicePass(dict(devices))
    True
    >>> exe = sym.bind(mx.cpu(0), {'a': mx.nd.zeros(2)}, group2ctx={'dev1': mx.cpu(1)})
    >>> exe.forward()[0].context
    cpu(1)
    """

    def __init__(self, devices):
        self.devices = devices
        self._key = frozenset(devices.items())

    def __eq__(self, other):
        return isinstance(other, DevicePass) and self._key == other._key

    def __hash__(self):
        return hash(self._key)

    def __call__(self, plan):
        calls = []
        for call in plan.calls:
            ctx = self.devices.get(call.node)
            if ctx is None:
                calls.append(call)
                continue
            fn = functools.partial(call.fn, ctx=ctx) if call.node.spec.ctx_attrs else call.fn
            calls.append(Call(_on_device(fn, ctx.torch_device), call.args, call.out, call.node))
        return Plan(plan.inputs, calls, plan.heads)
