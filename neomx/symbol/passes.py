"""Graph-level optimisations for inference: rewrites of a compiled graph's Plan.

A pass takes a :class:`~neomx.symbol.plan.Plan` and returns a rewritten one, or the same
object when nothing applies. The rewritten calls compute the original result whenever
they run recorded (``autograd.record()``) or in training mode, so an inference plan is
correct everywhere and only faster where the rewrite applies: hybridized blocks run it for
calls outside ``autograd.record()`` in predict mode, executors for ``forward(is_train=False)``.
"""
import functools

import torch

from .. import autograd
from .._torch_private import onednn_ops
from ..operator.nn_conv import conv_geometry
from .plan import Call, Plan

__all__ = ['InferenceConvolution', 'fuse_convolutions', 'version_stamp', 'INFERENCE_PASSES']

# Layouts with channels on axis 1, where BatchNorm(axis=1) scales the convolution's filters.
_CHANNELS_FIRST = (None, 'NCW', 'NCHW', 'NCDHW')
_FOLDABLE_DTYPES = (torch.float32, torch.float64)
_PACKED_SHAPES = 4          # input shapes whose packed filters a convolution keeps


def version_stamp(tensors):
    """Identifies the values of ``tensors``: the storage and in-place update counter of each,
    and the count of writes those counters miss (autograd.write_untracked)."""
    return (autograd.UNTRACKED_WRITES[0],) + tuple((t.data_ptr(), t._version) for t in tensors)


class InferenceConvolution:
    """``Convolution`` followed by any of ``BatchNorm``, ``+ other`` and relu, run as one
    call when not training and not recording (the original operators otherwise).

    In inference BatchNorm is the affine map ``(x - mean) * gamma / sqrt(var + eps) + beta``
    per channel, so it folds into the filters and bias:
    ``weight * s`` and ``(bias - mean) * s + beta`` with ``s = gamma / sqrt(var + eps)``
    (``gamma`` read as 1 under ``fix_gamma``). On CPUs, 2-D float32 convolutions then run
    as oneDNN convolutions with the sum and relu fused in (what MXNet's oneDNN build does),
    on channels-last data, with the filters reordered once into oneDNN's blocked layout for
    each input shape. Folded and reordered filters are kept until one of the arrays they
    come from changes (new storage or an in-place update). The outputs are channels-last
    then (same values).

    The call takes the convolution's arguments (data, weight, bias), then BatchNorm's
    (gamma, beta, moving_mean, moving_var) and the other addend, as far as present.

    Parameters
    ----------
    convolution : functools.partial
        The Convolution implementation with its attributes bound.
    batch_norm, add, relu : functools.partial or None
        The following operators, each reading the previous one's output.
    other_first : bool
        Whether the other addend is ``add``'s first argument.
    multicast : functools.partial or None
        Mixed precision's ``amp_multicast`` of the BatchNorm's (or convolution's) output and
        the other addend before ``add``: run when their dtypes differ (the operators one by
        one then), a no-op otherwise.
    multicast_order : (int, (int, int)) or None
        The position of the convolution's value among the multicast's inputs, and the
        multicast outputs ``add`` reads, in order.
    """

    def __init__(self, convolution, batch_norm=None, add=None, relu=None, other_first=False, multicast=None,
                 multicast_order=None):
        self._convolution, self._batch_norm, self._add, self._relu = convolution, batch_norm, add, relu
        self._other_first = other_first
        self._multicast, self._multicast_order = multicast, multicast_order
        keywords = convolution.keywords
        self._biased_convolution = functools.partial(convolution.func, **dict(keywords, no_bias=False))
        stride, dilate, pad = conv_geometry('Convolution', keywords['kernel'], keywords['stride'],
                                             keywords['dilate'], keywords['pad'])
        self._geometry = (list(pad), list(stride), list(dilate), keywords['num_group'])
        self._onednn = len(keywords['kernel']) == 2 and onednn_ops() is not None
        self._stamp = self._filters = None
        self._packed = {}               # input shape -> oneDNN filters
        num_arrays = 2 + (4 if batch_norm is not None else 0)
        self._split = (num_arrays + 1, num_arrays + 1 + (add is not None))

    def __call__(self, data, *args):
        """The last operator's output (BatchNorm's as a tuple)."""
        arrays, other = args[:self._split[0] - 1], args[self._split[0] - 1:self._split[1] - 1]
        if (torch.is_grad_enabled() or autograd.is_training() or arrays[0].dtype != data.dtype
                or (other and other[0].dtype != data.dtype)):
            return self._unfused(data, arrays, other)
        # mixed precision: bfloat16 data and filters (amp_cast), float32 BatchNorm statistics;
        # folded in float32, run by oneDNN in bfloat16
        half = data.dtype is torch.bfloat16 and self._onednn and data.device.type == 'cpu'
        if data.dtype not in _FOLDABLE_DTYPES and not half:
            return self._unfused(data, arrays, other)
        stamp = version_stamp([a for a in arrays if a is not None])
        if stamp != self._stamp:
            if half:
                folded = self._fold(*[None if a is None else a.float() for a in arrays])
                self._filters = tuple(None if f is None else f.to(torch.bfloat16) for f in folded)
            else:
                self._filters = self._fold(*arrays)
            self._stamp = stamp
            self._packed.clear()
        if half and self._filters[1] is None:
            self._filters = (self._filters[0], data.new_zeros(self._filters[0].shape[0]))
        if self._onednn and data.device.type == 'cpu' and data.dtype in (torch.float32, torch.bfloat16):
            out = self._run_onednn(data, other)
        else:
            out = self._biased_convolution(data, *self._filters)
            if other:
                out = self._add(other[0], out) if self._other_first else self._add(out, other[0])
            if self._relu is not None:
                out = torch.relu(out)
        return (out,) if self._returns_tuple else out

    @property
    def _returns_tuple(self):
        return self._batch_norm is not None and self._add is None and self._relu is None

    def _unfused(self, data, arrays, other):
        out = self._convolution(data, *arrays[:2])
        if self._batch_norm is not None:
            out = self._batch_norm(out, *arrays[2:])
            if self._returns_tuple:
                return out
            out = out[0]
        if other and self._multicast is not None:     # mixed precision: the widest type
            mine, order = self._multicast_order
            inputs = [other[0], other[0]]
            inputs[mine] = out
            casted = self._multicast(*inputs)
            out = self._add(casted[order[0]], casted[order[1]])
        elif other:
            out = self._add(other[0], out) if self._other_first else self._add(out, other[0])
        return out if self._relu is None else self._relu(out)

    def _fold(self, weight, bias, gamma=None, beta=None, moving_mean=None, moving_var=None):
        if self._batch_norm is None:
            return weight, bias
        keywords = self._batch_norm.keywords
        scale = torch.rsqrt(moving_var + keywords['eps'])
        if not keywords['fix_gamma']:
            scale = scale * gamma
        folded_bias = beta - moving_mean * scale
        if bias is not None:
            folded_bias = folded_bias + bias * scale
        folded = weight * scale.reshape((-1,) + (1,) * (weight.dim() - 1))
        if folded.dim() == 4:       # oneDNN runs 2-D convolutions faster on channels-last filters
            folded = folded.contiguous(memory_format=torch.channels_last)
        return folded, folded_bias

    def _run_onednn(self, data, other):
        ops = onednn_ops()
        pad, stride, dilate, groups = self._geometry
        packed = self._packed.get(data.shape)
        if packed is None:
            if len(self._packed) >= _PACKED_SHAPES:
                self._packed.clear()
            packed = self._packed[data.shape] = ops._reorder_convolution_weight(
                self._filters[0], pad, stride, dilate, groups, list(data.shape))
        data = data.contiguous(memory_format=torch.channels_last)
        unary = 'relu' if self._relu is not None else 'none'
        if not other:
            return ops._convolution_pointwise(data, packed, self._filters[1], pad, stride, dilate, groups,
                                              unary, [], '')
        return ops._convolution_pointwise.binary(
            data, other[0].contiguous(memory_format=torch.channels_last), packed, self._filters[1],
            pad, stride, dilate, groups, 'add', 1.0, None if unary == 'none' else unary, [], '')


# relu's operators: the legacy one and mx.npx's (npx.relu records _npx_relu)
_RELU_OPS = ('relu', '_npx_relu')


def _is_relu(call):
    return call.node.op in _RELU_OPS or (call.node.op == 'Activation'
                                         and call.node.params['act_type'] == 'relu')


def _position_of(value, args):
    """The position among ``args`` of the (first) output of ``value``, or None."""
    for i, arg in enumerate(args):
        if arg is not None and arg[0] == value and arg[1] in (None, 0):
            return i
    return None


def _is_bound(*calls):
    return all(isinstance(c.fn, functools.partial) for c in calls)


class _Chains:
    """The plan's values, who reads them, and which BatchNorm side outputs are read."""

    def __init__(self, plan):
        self.uses = plan.use_counts()
        self.readers = {}
        for call in plan.calls:
            for arg in call.args:
                if arg is not None:
                    self.readers.setdefault(arg[0], []).append(call)
        self.side_outputs = {name for c in plan.calls for name, index in
                             [a for a in c.args if a is not None] + plan.heads if index}

        self.claimed = set()        # outputs of calls already in a chain
        self.heads = plan.heads

    def sole_reader(self, call):
        """The unclaimed call that alone reads ``call``'s output once (through output 0), or None."""
        readers = self.readers.get(call.out, ())
        if self.uses.get(call.out) != 1 or len(readers) != 1 or call.out in self.side_outputs:
            return None
        reader = readers[0]
        return reader if _is_bound(reader) and reader.out not in self.claimed else None

    def chain(self, conv):
        """``conv`` and the BatchNorm, addition and relu that follow it, as present; claims them."""
        calls = self._links(conv)
        self.claimed.update(c.out for c in calls)
        return calls

    def _add_after_multicast(self, multicast, previous):
        """[multicast, addition] where mixed precision's ``amp_multicast`` of ``previous``'s
        output and one other value feeds an ``elemwise_add`` of its two outputs alone, else None."""
        readers = self.readers.get(multicast.out, ())
        if (len(multicast.args) != 2 or _position_of(previous.out, multicast.args) is None
                or multicast.args[0] == multicast.args[1] or len(readers) != 2 or readers[0] is not readers[1]
                or self.uses.get(multicast.out) != 2 or multicast.out in {h for h, _ in self.heads}):
            return None
        add = readers[0]
        if add.node.op != 'elemwise_add' or add.args[0] == add.args[1] or not _is_bound(add) \
                or add.out in self.claimed:
            return None
        return [multicast, add]

    def _links(self, conv):
        calls = [conv]
        reader = self.sole_reader(conv)
        if (reader is not None and reader.node.op == 'BatchNorm' and reader.node.params['axis'] == 1
                and reader.args[0] == (conv.out, None) and reader.out not in self.side_outputs):
            calls.append(reader)
            reader = self.sole_reader(reader)
        if reader is not None and reader.node.op == 'amp_multicast':
            reader = self._add_after_multicast(reader, calls[-1])
            if reader is not None:
                calls.extend(reader)
                reader = self.sole_reader(reader[-1])
        elif reader is not None and reader.node.op == 'elemwise_add' and reader.args[0] != reader.args[1]:
            calls.append(reader)
            reader = self.sole_reader(reader)
        if reader is not None and _is_relu(reader):
            calls.append(reader)
        return calls


def fuse_convolutions(plan):
    """Fuse each channels-first Convolution with the BatchNorm, addition and relu that
    follow it (as far as present, and read by nothing else) into an
    :class:`InferenceConvolution`.

    Parameters
    ----------
    plan : Plan

    Returns
    -------
    Plan
        ``plan`` itself when it has no such convolution.
    """
    chains = _Chains(plan)
    fused, dropped = {}, set()
    for call in plan.calls:
        if (call.node.op != 'Convolution' or not _is_bound(call)
                or call.node.params['layout'] not in _CHANNELS_FIRST):
            continue
        calls = chains.chain(call)
        parts = {'BatchNorm': None, 'elemwise_add': None, 'relu': None, 'amp_multicast': None}
        args = list(call.args)
        previous, other_first, multicast_order = call.out, False, None
        for link in calls[1:]:
            kind = 'relu' if _is_relu(link) else link.node.op
            parts[kind] = link.fn
            if kind == 'BatchNorm':
                args.extend(link.args[1:])
            elif kind == 'amp_multicast':
                mine = _position_of(previous, link.args)
                args.append(link.args[1 - mine])
            elif kind == 'elemwise_add' and parts['amp_multicast'] is not None:
                # the addition reads the multicast's outputs: (which is the convolution's, order)
                order = (link.args[0][1], link.args[1][1])
                other_first = order[0] == 1 - mine
                multicast_order = (mine, order)
            elif kind == 'elemwise_add':
                other_first = link.args[0][0] != previous
                args.append(link.args[0] if other_first else link.args[1])
            previous = link.out
        last = calls[-1]
        fused[last.out] = Call(InferenceConvolution(call.fn, parts['BatchNorm'], parts['elemwise_add'],
                                                    parts['relu'], other_first, parts['amp_multicast'],
                                                    multicast_order), args, last.out, last.node)
        dropped.update(c.out for c in calls[:-1])
    if not fused:
        return plan
    calls = [fused.get(c.out, c) for c in plan.calls if c.out not in dropped]
    return Plan(plan.inputs, calls, plan.heads)


INFERENCE_PASSES = (fuse_convolutions,)
