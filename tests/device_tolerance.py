"""Tolerances for tests that compare values computed on the current context (``--default-context``)
with references made on a CPU (MXNet's files, onnxruntime, numpy).

On an Ampere-or-newer GPU, cuDNN convolutions and RNNs compute in TF32 (10-bit mantissa) because
torch's ``torch.backends.cudnn.allow_tf32`` is on by default; neomx leaves torch's global flags as
the user set them, so such results differ from a CPU's by about 1e-3 relative.
"""
import neomx as mx


def on_gpu():
    """Whether the test runs with a GPU as its current context."""
    return mx.current_context().device_type == 'gpu'


def kernel_tolerance(rtol, atol=0.0, scale=1.0):
    """``assert_allclose`` keywords: ``rtol``/``atol`` on a CPU; on a GPU wide enough for TF32
    kernels (1e-2 relative, 1e-3 of ``scale``, the magnitude of the compared values)."""
    if not on_gpu():
        return {'rtol': rtol, 'atol': atol}
    return {'rtol': max(rtol, 1e-2), 'atol': max(atol, 1e-3 * scale)}
