"""Decoding and augmenting on a device (``ctx=`` a Context) in ImageRecordIter and ImageIter,
on the CPU: the device path's logic (batched decoding, the shared augmentation steps and
their random draws, normalisation, labels, pad, errors, threads) against the host path.

The device's decoder is torchvision's ``decode_jpeg``; where torchvision is not installed
(CI), a stand-in module decodes with neomx's own decoder, so the batches must be identical
to the host path's. With torchvision they are too (libjpeg-turbo on both sides). The same
checks on a GPU (nvJPEG) are in tests/test_gpu.py.
"""
import gc
import importlib.util
import os
import random
import sys
import threading
import time
import types

import numpy as np
import pytest
import torch

import neomx as mx
from neomx._image_decode import decode_bytes, opencv
from neomx.base import MXNetError

sys.path.insert(0, os.path.join(os.path.dirname(__file__), os.pardir, 'benchmarks'))
sys.path.insert(0, os.path.join(os.path.dirname(__file__), 'data'))
from bench_input import make_jpeg_rec  # noqa: E402
from make_image_pipeline_fixture import CASES, OUT, REC  # noqa: E402
from test_image_pipeline import _epochs, _tolerance  # noqa: E402

HAVE_TORCHVISION = importlib.util.find_spec('torchvision') is not None
MEAN_STD = dict(mean_r=123.68, mean_g=116.28, mean_b=103.53, std_r=58.395, std_g=57.12,
                std_b=57.375)


class _ReadMode:
    GRAY, RGB = 'gray', 'rgb'


class _StandInIO(types.ModuleType):
    """A stand-in for ``torchvision.io``: ``decode_jpeg(list, mode, device)`` with neomx's
    decoder, RuntimeError for a bad image (as torchvision); it counts its calls."""
    ImageReadMode = _ReadMode

    def __init__(self):
        super().__init__('torchvision.io')
        self.calls = []

    def decode_jpeg(self, tensors, mode, device):
        self.calls.append(len(tensors))
        images = []
        for tensor in tensors:
            try:
                pixels = decode_bytes(tensor.numpy().tobytes(), 0 if mode == 'gray' else 1, True, 'x')
            except MXNetError as err:
                raise RuntimeError(str(err)) from None
            images.append(torch.from_numpy(pixels).permute(2, 0, 1).to(device))
        return images


@pytest.fixture(params=['stand-in'] + (['torchvision'] if HAVE_TORCHVISION else []))
def decoder(request, monkeypatch):
    """The device decoder of the test: the stand-in (returned, to count calls) or torchvision."""
    if request.param == 'torchvision':
        return None
    stand_in = _StandInIO()
    monkeypatch.setitem(sys.modules, 'torchvision', types.ModuleType('torchvision'))
    monkeypatch.setitem(sys.modules, 'torchvision.io', stand_in)
    return stand_in


@pytest.fixture(scope='module')
def rec(tmp_path_factory):
    return make_jpeg_rec(str(tmp_path_factory.mktemp('jpegs')), 14, size=48)


def _batches(data_iter, epochs=2):
    out = []
    for _ in range(epochs):
        out += [(b.data[0].asnumpy(), b.label[0].asnumpy(), b.pad, b.data[0].context,
                 b.label[0].context) for b in data_iter]
        data_iter.reset()
    return out


SETTINGS = {
    'crop-mirror-mean-std': dict(rand_crop=True, rand_mirror=True, resize=40, **MEAN_STD),
    'colour-lighting': dict(rand_crop=True, brightness=0.3, contrast=0.3, saturation=0.3,
                            pca_noise=0.1, max_random_contrast=0.2, max_random_illumination=5,
                            scale=0.5),
    'random-resized-area': dict(random_resized_crop=True, min_random_area=0.3,
                                min_aspect_ratio=0.75, max_aspect_ratio=1.33, inter_method=10),
    'uint8-pad': dict(dtype='uint8', pad=4, rand_crop=True, fill_value=7),
    'int8-mirror': dict(dtype='int8', mirror=True),
    'float16': dict(dtype='float16', resize=36, inter_method=3),
    'gray-sized-crop': dict(data_shape=(1, 24, 20), min_crop_size=20, max_crop_size=40,
                            rand_crop=True),
    'grow-small': dict(data_shape=(3, 60, 56), inter_method=2),
}


@pytest.mark.parametrize('threads', [0, 2])
@pytest.mark.parametrize('name', sorted(SETTINGS))
def test_device_path_gives_the_host_paths_batches(rec, decoder, name, threads):
    settings = dict(path_imgrec=rec, data_shape=(3, 32, 28), batch_size=5, shuffle=True, seed=4,
                    preprocess_threads=threads)
    settings.update(SETTINGS[name])
    host = _batches(mx.io.ImageRecordIter(**settings))
    device = _batches(mx.io.ImageRecordIter(ctx=mx.cpu(), **settings))
    assert len(device) == len(host) == 6            # 14 records, batch 5, round_batch, 2 epochs
    for (data, label, pad, data_ctx, label_ctx), (want, want_label, want_pad, _, _) in zip(device, host):
        assert data.dtype == want.dtype and data.shape == want.shape
        np.testing.assert_array_equal(data, want)
        np.testing.assert_array_equal(label, want_label)
        assert pad == want_pad and data_ctx == label_ctx == mx.cpu()
    if decoder is not None:         # one call of the decoder a batch, for all its JPEGs
        assert decoder.calls and set(decoder.calls) == {5}


@pytest.mark.parametrize('name', sorted(CASES))
def test_device_path_gives_mxnets_batches(decoder, name):
    # MXNet 1.9.1's batches (tests/data), as the host path's test: the device path's warps are
    # torch's grid_sample, within a level of OpenCV's fixed-point warpAffine.
    del decoder
    expected = np.load(OUT)
    batches = _epochs(mx.io.ImageRecordIter(path_imgrec=REC, ctx=mx.cpu(), **CASES[name]))
    assert len(batches) == sum(key.startswith(name + '_data_') for key in expected.files)
    tolerance = _tolerance(name) + (1 if name in ('rotate', 'affine') else 0)
    for n, batch in enumerate(batches):
        want = expected['%s_data_%d' % (name, n)]
        got = batch.data[0].asnumpy()
        assert got.shape == want.shape and got.dtype == want.dtype
        np.testing.assert_allclose(got, want, atol=tolerance, rtol=0)
        np.testing.assert_array_equal(batch.label[0].asnumpy(), expected['%s_label_%d' % (name, n)])
        assert batch.pad == expected['%s_pad_%d' % (name, n)]


def test_short_last_batch_is_zero_filled_on_the_device(rec, decoder):
    del decoder
    settings = dict(path_imgrec=rec, data_shape=(3, 16, 16), batch_size=4, round_batch=False, **MEAN_STD)
    host = _batches(mx.io.ImageRecordIter(**settings), epochs=1)
    device = _batches(mx.io.ImageRecordIter(ctx=mx.cpu(), **settings), epochs=1)
    assert [b[2] for b in device] == [0, 0, 0, 2]
    np.testing.assert_array_equal(device[-1][0][2:], 0)
    for got, want in zip(device, host):
        np.testing.assert_array_equal(got[0], want[0])


def _mixed_rec(folder, corrupt=None):
    """Records 0-5: JPEG, PNG alternately (PNGs are decoded on the host), and their byte
    offsets; record ``corrupt`` holds bytes that start as a JPEG but are not one."""
    path = os.path.join(folder, 'mixed.rec')
    writer = mx.recordio.MXIndexedRecordIO(path[:-4] + '.idx', path, 'w')
    rng = np.random.RandomState(1)
    for i in range(6):
        img = rng.randint(0, 255, (20, 24, 3)).astype(np.uint8)
        header = mx.recordio.IRHeader(0, float(i), i, 0)
        if i == corrupt:
            writer.write_idx(i, mx.recordio.pack(header, b'\xff\xd8\xff\xe0 not a JPEG at all'))
        else:
            writer.write_idx(i, mx.recordio.pack_img(header, img, img_fmt='.jpg' if i % 2 == 0 else '.png'))
    writer.close()
    return path, dict(mx.recordio.read_index(path[:-4] + '.idx'))


def test_non_jpeg_records_are_decoded_on_the_host(tmp_path, decoder):
    path, _ = _mixed_rec(str(tmp_path))
    settings = dict(path_imgrec=path, data_shape=(3, 16, 16), batch_size=3)
    host = _batches(mx.io.ImageRecordIter(**settings), epochs=1)
    device = _batches(mx.io.ImageRecordIter(ctx=mx.cpu(), **settings), epochs=1)
    for got, want in zip(device, host):
        np.testing.assert_array_equal(got[0], want[0])
    if decoder is not None:
        assert set(decoder.calls) == {2, 1}         # the JPEGs of each batch only


@pytest.mark.parametrize('threads', [0, 2])
def test_a_bad_record_is_named_with_its_offset(tmp_path, decoder, threads):
    del decoder
    path, offsets = _mixed_rec(str(tmp_path), corrupt=4)
    data_iter = mx.io.ImageRecordIter(path_imgrec=path, data_shape=(3, 16, 16), batch_size=3,
                                      ctx=mx.cpu(), preprocess_threads=threads)
    data_iter.next()
    message = 'record 4 at byte offset %d of %s' % (offsets[4], path)
    with pytest.raises(MXNetError, match=message.replace('.', r'\.')):
        data_iter.next()
    data_iter.close()


def test_ctx_hints_are_ignored_and_other_values_rejected(rec):
    for hint in ('cpu', 'gpu'):
        batch = mx.io.ImageRecordIter(path_imgrec=rec, data_shape=(3, 8, 8), batch_size=2,
                                      ctx=hint).next()
        assert batch.data[0].context == mx.cpu_pinned(0)
    with pytest.raises(MXNetError, match=r"ImageRecordIter: ctx='gpu\(0\)' must be 'cpu' or 'gpu'"):
        mx.io.ImageRecordIter(path_imgrec=rec, data_shape=(3, 8, 8), batch_size=2, ctx='gpu(0)')


def test_a_device_needs_torchvision_and_the_device(rec, monkeypatch):
    monkeypatch.setitem(sys.modules, 'torchvision', None)
    monkeypatch.setitem(sys.modules, 'torchvision.io', None)
    for make in (lambda: mx.io.ImageRecordIter(path_imgrec=rec, data_shape=(3, 8, 8),
                                               batch_size=2, ctx=mx.gpu(0)),
                 lambda: mx.image.ImageIter(2, (3, 8, 8), path_imgrec=rec, ctx=mx.gpu(0))):
        with pytest.raises(mx.base.MXNetError, match=r'torchvision.*neomx\[vision\]'):
            make()
    monkeypatch.setitem(sys.modules, 'torchvision', types.ModuleType('torchvision'))
    monkeypatch.setitem(sys.modules, 'torchvision.io', _StandInIO())
    missing = mx.context.num_gpus()
    with pytest.raises(MXNetError, match=r'ctx=gpu\(%d\) .* torch sees %d CUDA device' % (missing, missing)):
        mx.io.ImageRecordIter(path_imgrec=rec, data_shape=(3, 8, 8), batch_size=2, ctx=mx.gpu(missing))


@pytest.mark.parametrize('setting, named', [
    (dict(rotate=10, inter_method=4), 'inter_method 4'),
    (dict(max_shear_ratio=0.1, inter_method=10), 'inter_method 10')])
def test_host_only_settings_are_refused_on_a_device(rec, decoder, setting, named):
    del decoder
    with pytest.raises(MXNetError, match=r'ImageRecordIter: .*%s.* not with ctx=cpu\(0\)' % named):
        mx.io.ImageRecordIter(path_imgrec=rec, data_shape=(3, 8, 8), batch_size=2, ctx=mx.cpu(),
                              **setting)


@pytest.mark.skipif(opencv() is None, reason="the host path's warps are OpenCV's")
@pytest.mark.parametrize('interp', [0, 1, 2, 3, 9])
def test_warps_on_the_device_match_opencv_within_a_level(rec, decoder, interp):
    del decoder
    settings = dict(path_imgrec=rec, data_shape=(3, 52, 52), batch_size=7, dtype='uint8',
                    max_rotate_angle=40, max_shear_ratio=0.3, min_random_scale=0.6,
                    max_random_scale=1.2, max_aspect_ratio=0.3, fill_value=200, resize=56,
                    inter_method=interp, shuffle=True)
    host = _batches(mx.io.ImageRecordIter(**settings), epochs=1)
    device = _batches(mx.io.ImageRecordIter(ctx=mx.cpu(), **settings), epochs=1)
    for got, want in zip(device, host):
        diff = np.abs(got[0].astype(np.int16) - want[0].astype(np.int16))
        assert diff.max() <= 1 and diff.mean() < 0.01, (diff.max(), diff.mean())
        assert (want[0] == 200).any()           # the corners outside the image are filled


@pytest.mark.skipif(opencv() is None, reason="the host path's HLS shifts are OpenCV's")
def test_hls_shifts_on_the_device_match_opencv(rec, decoder):
    # OpenCV's 8-bit RGB <-> HLS in torch: the same float32 operations, but a hue that lands
    # on a rounding boundary may round the other way (a pixel in thousands).
    del decoder
    settings = dict(path_imgrec=rec, data_shape=(3, 40, 40), batch_size=7, dtype='uint8',
                    random_h=20, random_s=40, random_l=30, rand_crop=True, shuffle=True)
    host = _batches(mx.io.ImageRecordIter(**settings), epochs=1)
    device = _batches(mx.io.ImageRecordIter(ctx=mx.cpu(), **settings), epochs=1)
    diffs = np.concatenate([np.abs(got[0].astype(np.int16) - want[0].astype(np.int16)).ravel()
                            for got, want in zip(device, host)])
    assert (diffs > 1).mean() < 1e-3 and diffs.max() <= 16, ((diffs > 1).mean(), diffs.max())


def test_detection_iterator_refuses_a_device(tmp_path, decoder):
    del decoder
    path = str(tmp_path / 'det.rec')
    writer = mx.recordio.MXRecordIO(path, 'w')
    label = np.array([2, 5, 1, 0.1, 0.2, 0.5, 0.6], np.float32)
    writer.write(mx.recordio.pack_img(mx.recordio.IRHeader(0, label, 0, 0),
                                      np.zeros((8, 8, 3), np.uint8), img_fmt='.png'))
    writer.close()
    with pytest.raises(MXNetError, match=r'ImageDetRecordIter: ctx=cpu\(0\) .* only for ImageRecordIter'):
        mx.io.ImageDetRecordIter(path_imgrec=path, data_shape=(3, 4, 4), batch_size=1, ctx=mx.cpu())


def test_uint8_iterator_on_a_device(rec, decoder):
    del decoder
    settings = dict(path_imgrec=rec, data_shape=(3, 16, 16), batch_size=7, rand_crop=True)
    want = _batches(mx.io.ImageRecordUInt8Iter(**settings), epochs=1)
    got = _batches(mx.io.ImageRecordUInt8Iter(ctx=mx.cpu(), **settings), epochs=1)
    assert got[0][0].dtype == np.uint8
    for a, b in zip(got, want):
        np.testing.assert_array_equal(a[0], b[0])


def test_no_thread_left_behind(rec, decoder):
    del decoder

    def pipeline_threads():
        return [t for t in threading.enumerate() if t.name.startswith('ImageRecordIter')]
    data_iter = mx.io.ImageRecordIter(path_imgrec=rec, data_shape=(3, 8, 8), batch_size=4,
                                      ctx=mx.cpu(), preprocess_threads=3)
    data_iter.next()
    assert pipeline_threads()
    del data_iter
    gc.collect()
    deadline = time.time() + 10
    while pipeline_threads() and time.time() < deadline:
        time.sleep(0.05)
    assert not pipeline_threads()


@pytest.mark.parametrize('threads', [None, 2])
def test_image_iter_on_a_device_matches_its_threaded_host_path(rec, decoder, threads):
    del decoder
    settings = dict(batch_size=4, data_shape=(3, 24, 24), path_imgrec=rec,
                    path_imgidx=rec[:-4] + '.idx', shuffle=True, rand_crop=True, rand_mirror=True,
                    resize=30, mean=True, std=True, brightness=0.2, pca_noise=0.1)
    batches = {}
    for name, extra in (('host', dict(preprocess_threads=2)),
                        ('device', dict(ctx=mx.cpu(), preprocess_threads=threads))):
        state = random.getstate()
        random.seed(5)          # the shuffle and the images' seeds
        try:
            batches[name] = _batches(mx.image.ImageIter(**settings, **extra), epochs=1)
        finally:
            random.setstate(state)
    assert len(batches['device']) == 4
    for got, want in zip(batches['device'], batches['host']):
        np.testing.assert_array_equal(got[0], want[0])
        np.testing.assert_array_equal(got[1], want[1])
        assert got[2] == want[2] and got[3] == mx.cpu() == got[4]


def test_jpegs_the_device_refuses_are_decoded_on_the_host(rec, monkeypatch):
    # nvJPEG refuses some valid JPEGs (CMYK, lossless...): the whole list fails, then each
    # image is tried alone, and the refused one is decoded by the CPU decoder.
    stand_in = _StandInIO()
    refused = mx.recordio.unpack(mx.recordio.MXIndexedRecordIO(rec[:-4] + '.idx', rec, 'r').read_idx(2))[1]
    accept = stand_in.decode_jpeg

    def refusing(tensors, mode, device):
        if any(t.numpy().tobytes() == refused for t in tensors):
            raise RuntimeError('unsupported JPEG')
        return accept(tensors, mode, device)
    stand_in.decode_jpeg = refusing
    monkeypatch.setitem(sys.modules, 'torchvision', types.ModuleType('torchvision'))
    monkeypatch.setitem(sys.modules, 'torchvision.io', stand_in)
    # one preparing thread: the order of the decoder's calls is then the batches' order
    settings = dict(path_imgrec=rec, data_shape=(3, 16, 16), batch_size=4, preprocess_threads=1, **MEAN_STD)
    want = _batches(mx.io.ImageRecordIter(**settings), epochs=1)
    got = _batches(mx.io.ImageRecordIter(ctx=mx.cpu(), **settings), epochs=1)
    for a, b in zip(got, want):
        np.testing.assert_array_equal(a[0], b[0])
    # The first batch's list was refused: three of its images decoded alone, one on the host.
    assert stand_in.calls[:4] == [1, 1, 1, 4]
