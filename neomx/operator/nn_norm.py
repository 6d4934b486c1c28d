"""Normalisation operators: BatchNorm, SyncBatchNorm, LayerNorm, InstanceNorm, GroupNorm,
L2Normalization, LRN.

MXNet semantics kept here:

* ``BatchNorm`` defaults to ``fix_gamma=True``: gamma is overwritten with ones (MXNet writes
  them into the array) and gets a zero gradient.
  In training it normalises with the batch mean and the biased batch variance, and updates
  ``moving_mean``/``moving_var`` in place during the *backward* pass, as MXNet 1.9.1 does:
  ``running = momentum * running + (1 - momentum) * batch``. Its hidden outputs are the mean
  used and the inverse standard deviation ``1 / sqrt(var + eps)`` (MXNet calls it ``var``).
* ``_contrib_SyncBatchNorm`` is BatchNorm on axis 1 whose training statistics cover every
  context of a parallel step (``neomx._parallel_step``); its hidden outputs are the mean
  and the biased variance.
* ``LayerNorm``/``GroupNorm`` with ``output_mean_var`` also return the mean and the standard
  deviation ``sqrt(var + eps)``; ``GroupNorm``'s gamma and beta hold one value per *group*.
* ``LRN`` sums squares over ``2 * ((nsize - 1) // 2) + 1`` channels but divides ``alpha`` by
  ``nsize``: the two differ for even sizes, where MXNet's window is the next smaller odd one.
"""
import torch
import torch.nn.functional as F

from .. import autograd
from .._parallel_step import current_step
from .dtype_rules import DTypeRule
from .registry import BOOL, FLOAT, INT, OPT_FLOAT, STR, check, choice, register


def _broadcast_shape(ndim, axis):
    """Shape that broadcasts a per-channel vector along ``axis`` of an ``ndim``-d array."""
    shape = [1] * ndim
    shape[axis] = -1
    return shape


def _check_channel_params(op, data, axis, params):
    channels = data.shape[axis]
    for name, tensor in params.items():
        check(tuple(tensor.shape) == (channels,), op,
              '%s must have shape (%d,) for data of shape %s on axis %d, got %s',
              name, channels, data.shape, axis, tensor.shape)


def _fix_gamma(gamma):
    """Set gamma to ones in place, as MXNet does with ``fix_gamma``; while recording, return
    ones that are still connected to gamma so that it receives a (zero) gradient."""
    if gamma.grad_fn is None:
        with torch.no_grad():
            gamma.fill_(1)
    return gamma.mul(0).add_(1) if gamma.requires_grad else gamma


def _non_channel_dims(data):
    """The axes BatchNorm reduces over for channels-first data."""
    return (0,) + tuple(range(2, data.dim()))


def _batch_moments(data):
    """Per-channel mean and biased variance of channels-first data, each of shape (C,)."""
    var, mean = torch.var_mean(data, _non_channel_dims(data), correction=0)
    return mean, var


def _moments_of_normalisation(mean, inv_std, eps):
    """The batch (mean, biased variance) from the statistics BatchNorm normalised with:
    ``var = 1 / inv_std ** 2 - eps``, in float64 (saves another pass over the data)."""
    return mean, inv_std.double().pow(-2).sub_(eps)


def _update_moving_stats_in_backward(out, batch_stats, moving_mean, moving_var, momentum):
    """Fold batch statistics into the moving ones when backward reaches ``out``.

    MXNet updates the moving statistics in backward, so forward-only passes leave them
    alone. ``batch_stats()`` returns the (mean, biased variance) to fold in; it runs only
    then, inside the hook.
    """
    def update(grad):
        with torch.no_grad():
            for moving, batch in zip((moving_mean, moving_var), batch_stats()):
                moving.mul_(momentum).add_(batch.to(moving.dtype), alpha=1 - momentum)
    out.register_hook(update)


def _batch_norm_channels_first(data, gamma, beta, moving_mean, moving_var, eps, momentum,
                               use_batch_stats, use_global_stats):
    """BatchNorm of ``(N, C, ...)`` data; returns (output, mean used, 1 / sqrt(var + eps))."""
    if use_batch_stats:
        out, mean, inv_std = torch.native_batch_norm(data, gamma, beta, None, None, True, 0.0, eps)
        if out.requires_grad:
            stats = mean.detach(), inv_std.detach()
            _update_moving_stats_in_backward(out, lambda: _moments_of_normalisation(*stats, eps),
                                             moving_mean, moving_var, momentum)
        return out, mean, inv_std
    if data.requires_grad and not use_global_stats:
        out = _moving_stats_norm_as_if_batch(data, gamma, beta, moving_mean, moving_var, eps)
    else:
        out = torch.batch_norm(data, gamma, beta, moving_mean, moving_var, False, 0.0, eps, False)
    return out, moving_mean, torch.rsqrt(moving_var + eps)


def _moving_stats_norm_as_if_batch(data, gamma, beta, moving_mean, moving_var, eps):
    """Normalise with the moving statistics but differentiate as MXNet 1.9.1 does.

    Unless ``use_global_stats``, MXNet's backward treats the statistics as functions of the
    batch even when forward used the moving ones: ``dx = gamma / std * (dy - mean(dy) -
    x_hat * mean(dy * x_hat))``, with x_hat and std from the moving statistics. Proxies
    whose values are the moving statistics and whose derivatives are those of the batch
    mean and of ``mean((x - moving_mean) ** 2)`` give exactly that gradient.
    """
    reduce_dims = _non_channel_dims(data)
    shape = _broadcast_shape(data.dim(), 1)
    mean_const = moving_mean.view(shape)
    batch_mean = data.mean(reduce_dims, keepdim=True)
    mean = batch_mean - batch_mean.detach() + mean_const
    spread = (data - mean_const).square().mean(reduce_dims, keepdim=True)
    var = spread - spread.detach() + moving_var.view(shape)
    out = (data - mean) * torch.rsqrt(var + eps)
    if gamma is not None:
        out = out * gamma.view(shape)
    # float32 statistics of bfloat16/float16 data (mixed precision): the data's dtype, as
    # torch's batch_norm gives it
    return (out + beta.view(shape)).to(data.dtype)


def _infer_batch_norm(shapes, attrs):
    data = shapes.get('data')
    if data is None:
        return {}
    channel = (data[attrs.get('axis', 1) % len(data)],)
    return {'gamma': channel, 'beta': channel, 'moving_mean': channel, 'moving_var': channel}


def _check_batch_norm_inputs(op, data, axis, gamma, beta, moving_mean, moving_var):
    """Check the shapes of a batch normalisation's inputs; the channel axis made positive."""
    check(data.dim() >= 2, op, 'data must be at least 2-D, got shape %s', data.shape)
    check(-data.dim() <= axis < data.dim(), op, 'axis %d out of range for data of shape %s',
          axis, data.shape)
    axis %= data.dim()
    _check_channel_params(op, data, axis, {'gamma': gamma, 'beta': beta,
                                           'moving_mean': moving_mean, 'moving_var': moving_var})
    return axis


_BATCH_NORM_INPUTS = dict(
    inputs=('data', 'gamma', 'beta', 'moving_mean', 'moving_var'),
    aux=('moving_mean', 'moving_var'), num_outputs=3,
    num_visible_outputs=lambda a: 3 if a['output_mean_var'] else 1,
    output_names=('output', 'mean', 'var'), infer_args=_infer_batch_norm,
    dtypes=DTypeRule(half_float32=('gamma', 'beta', 'moving_mean', 'moving_var')))


@register('BatchNorm',
          attrs=[('eps', FLOAT, 1e-3), ('momentum', FLOAT, 0.9), ('fix_gamma', BOOL, True),
                 ('use_global_stats', BOOL, False), ('output_mean_var', BOOL, False),
                 ('axis', INT, 1), ('cudnn_off', BOOL, False),
                 ('min_calib_range', OPT_FLOAT, None), ('max_calib_range', OPT_FLOAT, None)],
          **_BATCH_NORM_INPUTS)
def batch_norm(data, gamma, beta, moving_mean, moving_var, eps, momentum, fix_gamma,
               use_global_stats, output_mean_var, axis, cudnn_off, min_calib_range,
               max_calib_range):
    """Batch normalisation over every axis but ``axis``.

    Parameters
    ----------
    data : Tensor, shape (N, ..., C, ...), at least 2-D
    gamma, beta, moving_mean, moving_var : Tensor, shape (C,)
        C is ``data.shape[axis]``. The moving statistics are updated in place by the backward
        pass of a training-mode call.

    Returns
    -------
    (output, mean, inv_std) : output has data's shape; mean and ``1 / sqrt(var + eps)`` are (C,)
    """
    axis = _check_batch_norm_inputs('BatchNorm', data, axis, gamma, beta, moving_mean, moving_var)
    return _batch_norm(data, gamma, beta, moving_mean, moving_var, eps, momentum, fix_gamma,
                       use_global_stats, axis)


@register('_contrib_BatchNormWithReLU',
          attrs=[('eps', FLOAT, 1e-3), ('momentum', FLOAT, 0.9), ('fix_gamma', BOOL, True),
                 ('use_global_stats', BOOL, False), ('output_mean_var', BOOL, False),
                 ('axis', INT, 1), ('cudnn_off', BOOL, False),
                 ('min_calib_range', OPT_FLOAT, None), ('max_calib_range', OPT_FLOAT, None)],
          **_BATCH_NORM_INPUTS)
def batch_norm_with_relu(data, gamma, beta, moving_mean, moving_var, eps, momentum, fix_gamma,
                         use_global_stats, output_mean_var, axis, cudnn_off, min_calib_range,
                         max_calib_range):
    """``BatchNorm`` followed by ReLU on its output (MXNet's fused form, as quantization
    passes produce it); the same inputs, attributes and statistics outputs."""
    axis = _check_batch_norm_inputs('BatchNormWithReLU', data, axis, gamma, beta, moving_mean, moving_var)
    out, mean, inv_std = _batch_norm(data, gamma, beta, moving_mean, moving_var, eps, momentum, fix_gamma,
                                     use_global_stats, axis)
    return torch.relu(out), mean, inv_std


def _batch_norm(data, gamma, beta, moving_mean, moving_var, eps, momentum, fix_gamma,
                use_global_stats, axis):
    """BatchNorm of checked inputs with a non-negative ``axis``; see :func:`batch_norm`."""
    if fix_gamma:
        gamma = _fix_gamma(gamma)
    use_batch_stats = autograd.is_training() and not use_global_stats
    channels_first = data.movedim(axis, 1) if axis != 1 else data
    out, mean, inv_std = _batch_norm_channels_first(channels_first, gamma, beta, moving_mean,
                                                    moving_var, eps, momentum, use_batch_stats,
                                                    use_global_stats)
    return (out.movedim(1, axis) if axis != 1 else out), mean, inv_std


@register('BatchNorm_v1',
          attrs=[('eps', FLOAT, 1e-3), ('momentum', FLOAT, 0.9), ('fix_gamma', BOOL, True),
                 ('use_global_stats', BOOL, False), ('output_mean_var', BOOL, False)],
          **_BATCH_NORM_INPUTS)
def batch_norm_v1(data, gamma, beta, moving_mean, moving_var, eps, momentum, fix_gamma,
                  use_global_stats, output_mean_var):
    """MXNet's deprecated first BatchNorm: :func:`batch_norm` on axis 1 (no ``axis`` attribute)."""
    axis = _check_batch_norm_inputs('BatchNorm_v1', data, 1, gamma, beta, moving_mean, moving_var)
    return _batch_norm(data, gamma, beta, moving_mean, moving_var, eps, momentum, fix_gamma,
                       use_global_stats, axis)


# ---------------------------------------------------- synchronised BatchNorm
@register('_contrib_SyncBatchNorm',
          attrs=[('eps', FLOAT, 1e-3), ('momentum', FLOAT, 0.9), ('fix_gamma', BOOL, True),
                 ('use_global_stats', BOOL, False), ('output_mean_var', BOOL, False),
                 ('ndev', INT, 1), ('key', STR)],
          **_BATCH_NORM_INPUTS)
def sync_batch_norm(data, gamma, beta, moving_mean, moving_var, eps, momentum, fix_gamma,
                    use_global_stats, output_mean_var, ndev, key):
    """BatchNorm on axis 1 whose training statistics cover the whole parallel step.

    In training mode (without ``use_global_stats``) inside a parallel step of several
    contexts (see ``neomx._parallel_step``), each context shares the element count, mean
    and biased variance of its part with the others and normalises with those of the
    whole batch. The exchange is differentiable, so the gradients flow between contexts
    as through BatchNorm on the concatenated batch; backward folds the global statistics
    into each context's moving statistics. Everywhere else it is ``BatchNorm(axis=1)``.

    Parameters
    ----------
    data : Tensor, shape (N, C, ...), at least 2-D
    gamma, beta, moving_mean, moving_var : Tensor, shape (C,)
    ndev : int
        Number of contexts of the step; another number is an error, except 1 (the default,
        and Gluon's when no GPU is present), which accepts any step.
    key : str
        Names the layer: its calls meet across the contexts under this key.

    Returns
    -------
    (output, mean, var) : output has data's shape; the (C,) mean and biased variance used
    (the moving statistics when they are used).
    """
    _check_batch_norm_inputs('_contrib_SyncBatchNorm', data, 1, gamma, beta, moving_mean,
                             moving_var)
    step = current_step()
    # Shape inference runs implementations on meta tensors: that must not meet the others.
    if (step is None or step.num_devices == 1 or use_global_stats or data.is_meta
            or not autograd.is_training()):
        out, mean, inv_std = _batch_norm(data, gamma, beta, moving_mean, moving_var, eps,
                                         momentum, fix_gamma, use_global_stats, 1)
        # MXNet's SyncBatchNorm reports the variance where BatchNorm reports 1 / std
        return out, mean, inv_std.pow(-2) - eps
    check(ndev in (1, step.num_devices), '_contrib_SyncBatchNorm',
          "layer '%s' declares ndev=%d but runs in a parallel step of %d contexts",
          key, ndev, step.num_devices)
    mean, var = _step_moments(step, data, key)
    if fix_gamma:
        gamma = _fix_gamma(gamma)
    shape = _broadcast_shape(data.dim(), 1)
    scale = (torch.rsqrt(var + eps) * gamma).view(shape)
    out = (data - mean.view(shape)) * scale + beta.view(shape)
    if out.requires_grad:
        stats = (mean.detach(), var.detach())
        _update_moving_stats_in_backward(out, lambda: stats, moving_mean, moving_var, momentum)
    return out, mean, var


def _step_moments(step, data, key):
    """Per-channel mean and biased variance, shape (C,), of the batch of all the step's
    contexts, computed differentiably from the parts' own moments."""
    mean, var = _batch_moments(data)
    parts = step.allgather(key, (data.numel() // data.shape[1], mean, var),
                           "_contrib_SyncBatchNorm '%s'" % key)
    counts = torch.tensor([count for count, _, _ in parts], dtype=data.dtype, device=data.device)
    weights = (counts / counts.sum()).unsqueeze(1)
    means = torch.stack([part_mean.to(data.device) for _, part_mean, _ in parts])
    variances = torch.stack([part_var.to(data.device) for _, _, part_var in parts])
    mean = (weights * means).sum(0)
    # each part's spread around its own mean plus its mean's offset from the global mean
    var = (weights * (variances + (means - mean).square())).sum(0)
    return mean, var


# ------------------------------------------------------- per-sample norms
def _mean_std(data, dims, eps, keepdim):
    var, mean = torch.var_mean(data, dims, correction=0, keepdim=keepdim)
    return mean, torch.sqrt(var + eps)


def _infer_affine(size_of):
    """infer_args for a (gamma, beta) pair of shape ``(size_of(data_shape, attrs),)``."""
    def infer(shapes, attrs):
        data = shapes.get('data')
        if data is None:
            return {}
        size = (size_of(data, attrs),)
        return {'gamma': size, 'beta': size}
    return infer


def _mean_std_outputs(attrs):
    return 3 if attrs['output_mean_var'] else 1


def _hidden_mean_std(attrs):
    """MXNet's graphs always record the mean and deviation outputs, visible or not."""
    return 3 - _mean_std_outputs(attrs)


_MEAN_STD_NAMES = ('output', 'mean', 'std')


@register('LayerNorm', inputs=('data', 'gamma', 'beta'),
          attrs=[('axis', INT, -1), ('eps', FLOAT, 1e-5), ('output_mean_var', BOOL, False)],
          num_outputs=_mean_std_outputs, output_names=_MEAN_STD_NAMES, hidden_outputs=_hidden_mean_std,
          infer_args=_infer_affine(lambda shape, a: shape[a['axis'] % len(shape)]))
def layer_norm(data, gamma, beta, axis, eps, output_mean_var):
    """Normalise each sample over ``axis`` alone, then scale and shift.

    Parameters
    ----------
    data : Tensor, any shape with C = ``data.shape[axis]``
    gamma, beta : Tensor, shape (C,)

    Returns
    -------
    output, data's shape; with ``output_mean_var`` also mean and std, data's shape with
    ``axis`` reduced to 1.
    """
    check(-data.dim() <= axis < data.dim(), 'LayerNorm', 'axis %d out of range for data of shape %s',
          axis, data.shape)
    axis %= data.dim()
    _check_channel_params('LayerNorm', data, axis, {'gamma': gamma, 'beta': beta})
    last = data.movedim(axis, -1)
    if torch.is_grad_enabled() and (gamma.requires_grad or beta.requires_grad):
        # torch's fused CPU backward sums gamma's and beta's gradients over the rows in one
        # running float32 sum (1e-4 off after 4096 rows); the broadcast product's gradient
        # is a pairwise torch.sum, as accurate as MXNet's
        normalized = F.layer_norm(last, (last.shape[-1],), None, None, eps)
        out = torch.addcmul(beta, normalized, gamma).movedim(-1, axis)
    else:
        out = F.layer_norm(last, (last.shape[-1],), gamma, beta, eps).movedim(-1, axis)
    if not output_mean_var:
        return out
    return (out,) + _mean_std(data, axis, eps, keepdim=True)


@register('InstanceNorm', inputs=('data', 'gamma', 'beta'), attrs=[('eps', FLOAT, 1e-3)],
          hidden_outputs=lambda attrs: 2,   # the mean and variance, in MXNet's graphs
          infer_args=_infer_affine(lambda shape, a: shape[1]))
def instance_norm(data, gamma, beta, eps):
    """Normalise each (sample, channel) over the spatial axes, then scale and shift.

    Parameters
    ----------
    data : Tensor, shape (N, C, spatial...), at least 3-D
    gamma, beta : Tensor, shape (C,)
    """
    check(data.dim() >= 3, 'InstanceNorm', 'data must be at least 3-D (N, C, spatial...), got shape %s',
          data.shape)
    _check_channel_params('InstanceNorm', data, 1, {'gamma': gamma, 'beta': beta})
    if data.shape[2:].numel() == 1:
        # torch refuses a single spatial element; MXNet normalises it to 0 (output = beta)
        affine = (-1,) + (1,) * (data.dim() - 2)
        return (data - data) * gamma.reshape(affine) + beta.reshape(affine)
    return F.instance_norm(data, weight=gamma, bias=beta, eps=eps)


@register('GroupNorm', inputs=('data', 'gamma', 'beta'),
          attrs=[('num_groups', INT, 1), ('eps', FLOAT, 1e-5), ('output_mean_var', BOOL, False)],
          num_outputs=_mean_std_outputs, output_names=_MEAN_STD_NAMES, hidden_outputs=_hidden_mean_std,
          infer_args=_infer_affine(lambda shape, a: a['num_groups']))
def group_norm(data, gamma, beta, num_groups, eps, output_mean_var):
    """Normalise each sample over groups of channels, then scale and shift per group.

    Parameters
    ----------
    data : Tensor, shape (N, C, ...), C divisible by ``num_groups``
    gamma, beta : Tensor, shape (num_groups,), as in MXNet 1.9.1

    Returns
    -------
    output, data's shape; with ``output_mean_var`` also mean and std of shape (N, num_groups).
    """
    check(data.dim() >= 2 and num_groups > 0 and data.shape[1] % num_groups == 0, 'GroupNorm',
          'the channel axis of data %s must divide into num_groups=%d', data.shape, num_groups)
    check(tuple(gamma.shape) == (num_groups,) and tuple(beta.shape) == (num_groups,), 'GroupNorm',
          'gamma and beta must have shape (num_groups,) = (%d,), got %s and %s',
          num_groups, gamma.shape, beta.shape)
    per_group = data.shape[1] // num_groups
    out = F.group_norm(data, num_groups, torch.repeat_interleave(gamma, per_group),
                       torch.repeat_interleave(beta, per_group), eps)
    if not output_mean_var:
        return out
    grouped = data.reshape(data.shape[0], num_groups, -1)
    return (out,) + _mean_std(grouped, -1, eps, keepdim=False)


# ---------------------------------------------------------- other norms
def _l2_dims(mode, ndim):
    """The axes L2Normalization sums over in each mode."""
    if mode == 'instance':
        return tuple(range(1, ndim))
    if mode == 'channel':
        return (1,)
    return tuple(range(2, ndim))


@register('L2Normalization', inputs=('data',),
          attrs=[('eps', FLOAT, 1e-10), ('mode', choice('channel', 'instance', 'spatial'), 'instance')])
def l2_normalization(data, eps, mode):
    """Divide by ``sqrt(sum(x ** 2) + eps)`` over all axes but the batch axis ('instance'),
    over the channel axis ('channel', data at least 3-D) or over the spatial axes ('spatial',
    data at least 3-D). The output has data's shape."""
    check(mode == 'instance' or data.dim() >= 3, 'L2Normalization',
          'mode %s needs data of at least 3 dimensions, got shape %s', mode, data.shape)
    norm = torch.sqrt(data.square().sum(_l2_dims(mode, data.dim()), keepdim=True) + eps)
    return data / norm


@register('LRN', inputs=('data',),
          attrs=[('alpha', FLOAT, 1e-4), ('beta', FLOAT, 0.75), ('knorm', FLOAT, 2.0), ('nsize', INT)])
def lrn(data, alpha, beta, knorm, nsize):
    """Local response normalisation across channels of (N, C, ...) data:
    ``x / (knorm + alpha / nsize * sum of x ** 2 over the channel window) ** beta``."""
    check(data.dim() >= 3, 'LRN', 'data must be at least 3-D (N, C, spatial...), got shape %s',
          data.shape)
    check(nsize > 0, 'LRN', 'nsize must be positive, got %d', nsize)
    window = 2 * ((nsize - 1) // 2) + 1
    # torch divides the window sum by its size: rescale alpha so the divisor is nsize.
    return F.local_response_norm(data, window, alpha=alpha * window / nsize, beta=beta, k=knorm)
