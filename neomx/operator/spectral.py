"""``mx.nd.contrib.fft`` / ``ifft`` and ``count_sketch``: the pieces of compact bilinear
pooling (a count sketch of each feature vector, multiplied in the frequency domain).

Complex values are stored interleaved on the last axis, ``[re0, im0, re1, im1, ...]``, as in
MXNet. ``fft`` takes real data, ``ifft`` returns the real part of an *unnormalized* inverse
transform (the sum, not the mean: ``ifft(fft(x)) == d * x``), as MXNet's does. MXNet runs
these three operators only on GPUs; neomx runs them on any device. Gradients come from torch.
"""
import torch

from .registry import INT, check, register


@register('_contrib_fft', inputs=('data',), attrs=[('compute_size', INT, 128)])
def fft(data, compute_size):
    """1-D discrete Fourier transform along the last axis of real ``data``.

    Parameters
    ----------
    data : Tensor, shape (..., d), real
    compute_size : int
        MXNet's sub-batch size on GPU; no effect here.

    Returns
    -------
    Tensor, shape (..., 2 * d): real and imaginary parts interleaved.
    """
    del compute_size
    check(data.dim() >= 1 and data.dtype.is_floating_point, 'fft', 'data must be a real float array with at '
          'least one axis, got shape %s of %s', data.shape, data.dtype)
    spectrum = torch.fft.fft(data, dim=-1)
    return torch.view_as_real(spectrum).reshape(data.shape[:-1] + (2 * data.shape[-1],)).to(data.dtype)


@register('_contrib_ifft', inputs=('data',), attrs=[('compute_size', INT, 128)])
def ifft(data, compute_size):
    """Real part of the unnormalized inverse transform of interleaved complex ``data``.

    Parameters
    ----------
    data : Tensor, shape (..., 2 * d): ``[re0, im0, re1, im1, ...]``

    Returns
    -------
    Tensor, shape (..., d): ``sum_k X_k exp(2 pi i k n / d)``, real part.
    """
    del compute_size
    check(data.dim() >= 1 and data.shape[-1] % 2 == 0, 'ifft', 'the last axis holds interleaved real and '
          'imaginary parts and must be even, got shape %s', data.shape)
    pairs = data.reshape(data.shape[:-1] + (data.shape[-1] // 2, 2))
    signal = torch.fft.ifft(torch.view_as_complex(pairs.contiguous().to(torch.promote_types(data.dtype,
                                                                                          torch.float32))),
                            dim=-1, norm='forward')
    return signal.real.to(data.dtype)


@register('_contrib_count_sketch', inputs=('data', 'h', 's'),
          attrs=[('out_dim', INT), ('processing_batch_size', INT, 32)])
def count_sketch(data, h, s, out_dim, processing_batch_size):
    """Count sketch of each row: ``out[n, h[i]] += s[i] * data[n, i]``.

    Parameters
    ----------
    data : Tensor, shape (..., in_dim)
    h : Tensor, shape (1, in_dim) or (in_dim,): the bucket in [0, out_dim) of each input
    s : Tensor, like ``h``: the sign (+1 or -1) of each input
    out_dim : int
    processing_batch_size : int
        MXNet's GPU batching; no effect here.

    Returns
    -------
    Tensor, shape (..., out_dim); differentiable with respect to ``data``.
    """
    del processing_batch_size
    in_dim = data.shape[-1] if data.dim() else 0
    check(data.dim() >= 1 and h.numel() == in_dim and s.numel() == in_dim, 'count_sketch',
          'h and s must hold one value per input feature (%d), got shapes %s and %s for data %s', in_dim,
          h.shape, s.shape, data.shape)
    buckets = h.reshape(-1).long()
    check(out_dim > 0 and bool(((buckets >= 0) & (buckets < out_dim)).all()), 'count_sketch',
          'the buckets h must lie in [0, out_dim=%d)', out_dim)
    signed = data * s.reshape(-1).to(data.dtype).detach()
    out = data.new_zeros(data.shape[:-1] + (out_dim,))
    return out.index_add(-1, buckets, signed)
