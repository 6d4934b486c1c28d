"""The source of a compiled graph's function, generated from a :class:`~neomx.symbol.plan.Plan`.

The function makes one call per operator, inputs by position, so running it costs no
dispatch, parsing or graph walk, and torch autograd (and ``torch.compile``) see plain
Python over torch tensors::

    def graph(x0, x1, x2):
        v0 = op0(x0, x1, x2)
        v1 = op1(v0)
        return (v1,)

Graphs come from files that anyone may have written, so nothing of a graph reaches the
source but its shape: every identifier is one the generator makes (``x3``, ``v7``,
``op2``, ``seg1``, ``c5``), and everything else -- the bound implementations, the node
names a monitor reports -- lives in the namespace the source runs in. Node and operator
names are kept beside the source, by line number, for error messages. :func:`check_source`
proves the property on every generated text before it is compiled.
"""
import functools
import inspect
import itertools
import re

from ..base import MXNetError
from .inference import input_slots
from .mirroring import mirror_segments, recompute
from .monitor_names import input_labels

__all__ = ['generate', 'check_source']

# What the generator writes: these characters only (no quote, '#', '.', backslash, operator
# or non-ASCII character), and as words only keywords and fixed names, and numbered values.
_TEXT = re.compile(r'[A-Za-z0-9_(),=:\[\] \n]*')
_WORD = re.compile(r'[A-Za-z_][A-Za-z0-9_]*')
_FIXED_NAMES = frozenset(('def', 'return', 'None', 'graph', 'recompute', 'monitor'))
_NUMBERED_NAME = re.compile(r'(x|v|op|seg|c)[0-9]+\Z')


def check_source(source):
    """Raise ``MXNetError`` unless ``source`` is made only of the generator's own tokens:
    the fixed names, numbered identifiers, decimal indices and ``(),=:[]`` -- no string,
    comment, attribute access, operator or any other name, whatever the graph held. What
    passes can only call, index and return the objects of its namespace."""
    text = _TEXT.match(source)
    if text.end() != len(source):
        raise MXNetError('generated graph source holds the unexpected token %r at offset %d'
                         % (source[text.end()], text.end()))
    for word in set(_WORD.findall(source)):
        if word not in _FIXED_NAMES and not _NUMBERED_NAME.match(word):
            raise MXNetError('generated graph source holds the unexpected token %r' % word)


def _text(ref):
    name, index = ref
    return name if index is None else '%s[%d]' % (name, index)


def _positional_attributes(fn, num_inputs):
    """``(function, attribute values)`` to call ``fn`` (an implementation with its
    attributes bound by ``functools.partial``) as ``function(*inputs, *values)``, or None
    when its attributes cannot all be passed by position.

    A partial merges its keywords into a new dict at every call, which costs several
    times a plain call (about 0.3 against 0.05 us): more than some operators of a small
    graph take. Passed by position instead, the values are the next parameters after the
    inputs, so only plain functions whose keywords are exactly those qualify.
    """
    if type(fn) is not functools.partial or fn.args:
        return None
    try:
        names = _ATTRIBUTE_ORDER[(fn.func, num_inputs, frozenset(fn.keywords))]
    except KeyError:
        if len(_ATTRIBUTE_ORDER) >= 4096:   # functions made on the fly (Custom's) must not pile up
            _ATTRIBUTE_ORDER.clear()
        names = _ATTRIBUTE_ORDER[(fn.func, num_inputs, frozenset(fn.keywords))] = \
            _attribute_order(fn.func, num_inputs, fn.keywords.keys())
    except TypeError:                   # an unhashable callable
        names = _attribute_order(fn.func, num_inputs, fn.keywords.keys())
    return None if names is None else (fn.func, [fn.keywords[name] for name in names])


# (function, number of inputs, attribute names) -> _attribute_order's answer: reading a
# signature costs more than generating the rest of a call's line
_ATTRIBUTE_ORDER = {}


def _attribute_order(func, num_inputs, keywords):
    """The names of ``keywords`` in the order of ``func``'s parameters after its
    ``num_inputs`` inputs, or None when they cannot all be passed by position."""
    try:
        parameters = list(inspect.signature(func, follow_wrapped=False).parameters.values())
    except (TypeError, ValueError):     # a builtin without a signature
        return None
    attributes = parameters[num_inputs:num_inputs + len(keywords)]
    positional = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    if (len(parameters) < num_inputs + len(keywords)
            or any(p.kind not in positional for p in parameters[:num_inputs])
            or any(p.kind is not inspect.Parameter.POSITIONAL_OR_KEYWORD for p in attributes)
            or {p.name for p in attributes} != keywords):
        return None
    return tuple(p.name for p in attributes)


def _runs(plan, mirror):
    """The calls in runs ``(calls, inputs, outputs)``: the value names a recomputed run
    takes and returns, both None for a run executed in place."""
    segments = mirror_segments(plan.calls) if mirror else [(False, plan.calls)]
    used_later = {name for name, _ in plan.heads}
    runs = []
    for recomputed, calls in reversed(segments):
        defined = {c.out for c in calls}
        inputs = list(dict.fromkeys(a[0] for c in calls for a in c.args
                                    if a is not None and a[0] not in defined))
        outputs = [c.out for c in calls if c.out in used_later]
        used_later.update(inputs)
        runs.append((calls, inputs, outputs) if recomputed and outputs else (calls, None, None))
    return runs[::-1]


class _Generator:
    """The lines of one function and the namespace they run in."""

    def __init__(self, monitor):
        self.monitor = monitor
        self.namespace = {'recompute': recompute}
        self._operators = itertools.count()
        self._constants = itertools.count()

    def constant(self, value):
        """A generated name bound to ``value`` in the namespace: how data reaches the code."""
        name = 'c%d' % next(self._constants)
        self.namespace[name] = value
        return name

    def call_lines(self, calls):
        """``(line, (op, node name) or None)`` for each call, and its monitor reports."""
        lines = []
        for call in calls:
            j = next(self._operators)
            args = ['None' if a is None else _text(a) for a in call.args]
            positional = _positional_attributes(call.fn, len(args))
            if positional is None:
                self.namespace['op%d' % j] = call.fn
            else:
                self.namespace['op%d' % j] = positional[0]
                args.extend(self.constant(value) for value in positional[1])
            args = ', '.join(args)
            lines.append(('    %s = op%d(%s)' % (call.out, j, args), (call.node.op, call.node.name)))
            if self.monitor:
                lines.extend((line, None) for line in self._monitor_lines(call))
        return lines

    def _monitor_lines(self, call):
        """Lines reporting the call's inputs (``monitor`` 'all' or 'all+variables') or outputs
        to ``monitor``, named like MXNet's monitors (see :mod:`.monitor_names`)."""
        node, lines = call.node, []
        op = self.constant(node.op.encode())
        if self.monitor in ('all', 'executor_all'):
            args = {slot: arg for slot, arg in zip(input_slots(node), call.args) if slot is not None}
            for slot, labels in enumerate(input_labels(node, self.monitor == 'executor_all')):
                for label in labels:
                    lines.append('    monitor(%s, %s, %s)' % (self.constant(label.encode()), op, _text(args[slot])))
        for i in range(node.num_outputs()):     # MXNet reports every output, hidden ones too
            value = call.out if node.num_outputs() == 1 else '%s[%d]' % (call.out, i)
            lines.append('    monitor(%s, %s, %s)' % (self.constant(node.output_name(i).encode()), op, value))
        return lines


def generate(plan, mirror, monitor=None):
    """Source of ``graph(x0, x1, ...)``, the namespace it runs in (bound implementations,
    :func:`~neomx.symbol.mirroring.recompute`, constants) and ``{line number: (op, node
    name)}`` of the lines that call operators.

    With ``mirror`` the recomputed runs become functions ``seg<k>`` that ``graph`` calls
    through ``recompute``. With ``monitor`` (``'outputs'``, ``'all'`` or ``'executor_all'``)
    the function takes a last argument ``monitor(name, op_name, tensor)``, called after each
    operator with its outputs (and, for the others, its inputs before; ``'executor_all'``
    also reports variable inputs under their own names, as MXNet's executors do).

    Raises
    ------
    MXNetError
        If the source would hold anything but the generator's own tokens (see
        :func:`check_source`).
    """
    gen = _Generator(monitor)
    functions, body = [], []            # (source line, (op, name) or None)
    for k, (calls, inputs, outputs) in enumerate(_runs(plan, mirror)):
        if inputs is None:
            body.extend(gen.call_lines(calls))
            continue
        functions.append(('def seg%d(%s):' % (k, ', '.join(inputs)), None))
        functions.extend(gen.call_lines(calls))
        functions.append(('    return (%s,)' % ', '.join(outputs), None))
        body.append(('    %s, = recompute(seg%d, %s)' % (', '.join(outputs), k, ', '.join(inputs)), None))
    arguments = plan.inputs + (['monitor'] if monitor else [])
    lines = (functions + [('def graph(%s):' % ', '.join(arguments), None)] + body
             + [('    return (%s,)' % ', '.join(_text(h) for h in plan.heads), None)])
    source = '\n'.join(line for line, _ in lines) + '\n'
    check_source(source)
    line_nodes = {number: label for number, (_, label) in enumerate(lines, 1) if label}
    return source, gen.namespace, line_nodes
