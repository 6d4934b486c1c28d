"""Where arrays live when the current context is not the CPU: wrapped tensors name their own
device, decoded images are on the CPU (as MXNet's decoders' outputs), augmenters follow the
image, sparse copies land on the target's device.

The first tests need no GPU: a context is only named (``with mx.gpu(0):`` reaches no device
until an array is made on it); the last ones run on a CUDA GPU only.
"""
import os
import random

import numpy as np
import pytest
import torch

import neomx as mx

DATA = os.path.join(os.path.dirname(__file__), 'data')
needs_gpu = pytest.mark.skipif(mx.context.num_gpus() == 0, reason='needs a CUDA GPU')


def _png():
    with open(os.path.join(DATA, 'image_rgb.png'), 'rb') as f:
        return f.read()


def test_wrapped_tensor_names_its_own_device_under_another_context():
    with mx.gpu(0):
        assert mx.nd.NDArray(torch.zeros(2)).context == mx.cpu(0)
        assert mx.np.ndarray(torch.zeros(2)).context == mx.cpu(0)
        assert mx.nd.NDArray(torch.zeros(2), ctx=mx.cpu(2)).context == mx.cpu(2)
    with mx.Context('cpu', 3):      # a CPU context names CPU tensors
        assert mx.nd.NDArray(torch.zeros(2)).context == mx.cpu(3)
        assert mx.np.ndarray(torch.zeros(2)).context == mx.cpu(3)


def test_decoded_images_are_on_the_cpu_whatever_the_current_context():
    with mx.gpu(0):
        img = mx.image.imdecode(_png())
        assert img.context == mx.cpu(0) and img.shape == (6, 8, 3)
        assert mx.image.imread(os.path.join(DATA, 'image_rgb.png')).context == mx.cpu(0)
        dataset = mx.gluon.data.vision.ImageRecordDataset(os.path.join(DATA, 'recordio_png.rec'))
        assert dataset[0][0].context == mx.cpu(0)


@needs_gpu
@pytest.mark.parametrize('make', [
    lambda: mx.image.ContrastJitterAug(0.3), lambda: mx.image.SaturationJitterAug(0.3),
    lambda: mx.image.HueJitterAug(0.3), lambda: mx.image.RandomGrayAug(1.0),
    lambda: mx.image.LightingAug(0.1, np.array([55.46, 4.794, 1.148]), np.eye(3)),
    lambda: mx.image.ColorNormalizeAug([100, 110, 120], [50, 60, 70])],
    ids=['contrast', 'saturation', 'hue', 'gray', 'lighting', 'normalize'])
def test_augmenters_made_under_a_gpu_context_work_on_cpu_images(make):
    img = mx.image.imdecode(_png()).astype('float32')
    with mx.gpu(0):                 # the augmenter's own arrays are made on the GPU
        aug = make()
    np.random.seed(1)
    random.seed(1)
    out = aug(img.copy())
    np.random.seed(1)
    random.seed(1)
    expected = make()(img.copy())   # made on the image's context
    assert out.context == img.context == mx.cpu(0)
    np.testing.assert_array_equal(out.asnumpy(), expected.asnumpy())


@needs_gpu
def test_sparse_copy_between_devices_lands_on_the_target():
    dense = np.array([[0, 1, 0], [2, 0, 3]], dtype='float32')
    on_gpu = mx.nd.array(dense, ctx=mx.gpu(0)).tostype('csr')
    target = mx.nd.sparse.zeros('csr', (2, 3), ctx=mx.cpu())
    on_gpu.copyto(target)
    assert target.context == mx.cpu() and not target.indices._t.is_cuda
    np.testing.assert_array_equal(target.asnumpy(), dense)
    back = mx.nd.sparse.zeros('csr', (2, 3), ctx=mx.gpu(0))
    target.copyto(back)
    assert back.indices._t.is_cuda
    np.testing.assert_array_equal(back.asnumpy(), dense)


@needs_gpu
def test_cpu_tensor_wrapped_under_a_gpu_context_computes_with_cpu_arrays():
    with mx.gpu(0):
        wrapped = mx.nd.NDArray(torch.ones(2))
        assert (wrapped + mx.nd.ones((2,), ctx=mx.cpu())).asnumpy().tolist() == [2, 2]
        assert mx.image.random_rotate(mx.nd.ones((2, 1, 4, 4)), (-5, 5)).context == mx.gpu(0)
