"""mx.image against outputs recorded from MXNet 1.9.1 (tests/data/image_oracle.npz)."""
import json
import os
import random

import numpy as np
import pytest

import neomx as mx

DATA = os.path.join(os.path.dirname(__file__), 'data')
ORACLE = np.load(os.path.join(DATA, 'image_oracle.npz'))


def _raw(name):
    with open(os.path.join(DATA, name), 'rb') as f:
        return f.read()


@pytest.fixture
def rgb():
    return mx.image.imdecode(_raw('image_rgb.png'))


def test_decode_png_exact_and_flags(rgb):
    assert rgb.dtype == np.uint8 and rgb.shape == (6, 8, 3)
    np.testing.assert_array_equal(rgb.asnumpy(), ORACLE['rgb'])
    bgr = mx.image.imdecode(_raw('image_rgb.png'), to_rgb=0)
    np.testing.assert_array_equal(bgr.asnumpy(), ORACLE['rgb'][:, :, ::-1])
    gray = mx.image.imdecode(_raw('image_rgb.png'), flag=0)
    np.testing.assert_array_equal(gray.asnumpy(), ORACLE['gray_flag0'])
    assert mx.img.imdecode(_raw('image_gray.png')).shape == (6, 8, 3)
    from_array = mx.image.imdecode(np.frombuffer(_raw('image_rgb.png'), dtype=np.uint8))
    np.testing.assert_array_equal(from_array.asnumpy(), ORACLE['rgb'])
    np.testing.assert_array_equal(mx.image.imread(os.path.join(DATA, 'image_rgb.png')).asnumpy(),
                                  ORACLE['rgb'])


def test_decode_jpeg_close():
    jpg = mx.image.imdecode(_raw('image_smooth.jpg')).asnumpy().astype(int)
    assert np.abs(jpg - ORACLE['jpg']).max() <= 2
    gray = mx.image.imdecode(_raw('image_smooth.jpg'), flag=0).asnumpy().astype(int)
    assert gray.shape == (16, 16, 1) and np.abs(gray - ORACLE['jpg_flag0']).max() <= 2


def test_decode_errors():
    with pytest.raises(mx.base.MXNetError, match='Invalid image'):
        mx.image.imdecode(b'abc')
    with pytest.raises(ValueError, match='buf must be'):
        mx.image.imdecode('abc')
    with pytest.raises(mx.base.MXNetError, match="couldn't open file"):
        mx.image.imread('/nonexistent/x.png')


@pytest.mark.parametrize('interp', range(5))
def test_imresize_matches_opencv(rgb, interp):
    for w, h in [(4, 3), (13, 9), (5, 7)]:
        key = '%d_%dx%d' % (interp, w, h)
        out = mx.image.imresize(rgb.astype('float32'), w, h, interp=interp)
        assert out.dtype == np.float32 and out.shape == (h, w, 3)
        np.testing.assert_allclose(out.asnumpy(), ORACLE['resizef_' + key], atol=1e-3)
        # OpenCV's uint8 path uses fixed-point weights: at most one level apart.
        out8 = mx.image.imresize(rgb, w, h, interp=interp)
        assert out8.dtype == np.uint8
        assert np.abs(out8.asnumpy().astype(int) - ORACLE['resize_' + key]).max() <= 1


def test_imresize_errors(rgb):
    with pytest.raises(mx.base.MXNetError, match='interpolation'):
        mx.image.imresize(rgb, 4, 3, interp=7)
    with pytest.raises(ValueError, match='Unknown interp method 7'):
        mx.image.resize_short(rgb, 4, interp=7)


@pytest.mark.parametrize('border', range(5))
def test_copy_make_border_exact(rgb, border):
    out = mx.image.copyMakeBorder(rgb, 1, 2, 3, 1, type=border, values=(1, 2, 3))
    np.testing.assert_array_equal(out.asnumpy(), ORACLE['border_%d' % border])


def test_copy_make_border_fill_values(rgb):
    assert mx.image.copyMakeBorder(rgb, 1, 0, 0, 0, value=7).asnumpy()[0, 0].tolist() == [7, 7, 7]
    assert mx.image.copyMakeBorder(rgb, 1, 0, 0, 0, values=(9,)).asnumpy()[0, 0].tolist() == [9, 0, 0]
    out = mx.image.copyMakeBorder(rgb.astype('float32'), 1, 0, 0, 0, values=(9.5, 1, 2))
    assert out.dtype == np.float32 and out.asnumpy()[0, 1].tolist() == [9.5, 1.0, 2.0]


def test_crops_and_scale_down(rgb):
    assert mx.image.scale_down((640, 480), (720, 120)) == (640, 106)
    assert np.abs(mx.image.resize_short(rgb, 4).asnumpy().astype(int) - ORACLE['resize_short']).max() <= 1
    crop, rect = mx.image.center_crop(rgb, (5, 4))
    assert rect == tuple(ORACLE['center_crop_rect'])
    np.testing.assert_array_equal(crop.asnumpy(), ORACLE['center_crop'])
    crop, rect = mx.image.center_crop(rgb, (10, 3))
    assert rect == tuple(ORACLE['center_crop_big_rect']) and crop.shape == (3, 10, 3)
    out = mx.image.fixed_crop(rgb, 1, 2, 4, 3, size=(8, 6), interp=1)
    assert np.abs(out.asnumpy().astype(int) - ORACLE['fixed_crop_resize']).max() <= 1
    random.seed(10)
    assert mx.image.random_crop(rgb, (3, 2))[1] == tuple(ORACLE['random_crop_rect'])
    random.seed(11)
    crop, rect = mx.image.random_size_crop(rgb, (3, 2), (0.2, 0.6), (0.5, 2.0))
    assert rect == tuple(ORACLE['random_size_crop_rect']) and crop.shape == (2, 3, 3)


def test_color_normalize(rgb):
    # decoded images are on the CPU (as MXNet's), whatever the current context
    assert rgb.context == mx.cpu(0)
    out = mx.image.color_normalize(rgb.astype('float32'), mx.nd.array([100, 110, 120], ctx=rgb.context),
                                   mx.nd.array([50, 60, 70], ctx=rgb.context))
    np.testing.assert_allclose(out.asnumpy(), ORACLE['normalize'], rtol=1e-6)


EIGVAL = np.array([55.46, 4.794, 1.148])
EIGVEC = np.array([[-0.5675, 0.7192, 0.4009], [-0.5808, -0.0045, -0.8140], [-0.5836, -0.6948, 0.4203]])


@pytest.mark.parametrize('key, make, seed', [
    ('aug_brightness', lambda: mx.image.BrightnessJitterAug(0.3), 1),
    ('aug_contrast', lambda: mx.image.ContrastJitterAug(0.3), 2),
    ('aug_saturation', lambda: mx.image.SaturationJitterAug(0.3), 3),
    ('aug_hue', lambda: mx.image.HueJitterAug(0.3), 4),
    ('aug_lighting', lambda: mx.image.LightingAug(0.1, EIGVAL, EIGVEC), 5),
    ('aug_colorjitter', lambda: mx.image.ColorJitterAug(0.2, 0.3, 0.4), 6),
    ('aug_gray', lambda: mx.image.RandomGrayAug(1.0), 7),
    ('aug_flip', lambda: mx.image.HorizontalFlipAug(1.0), 7),
])
def test_seeded_color_augmenters_match_mxnet(rgb, key, make, seed):
    # MXNet draws from Python's random and numpy's global RNG: same seeds, same output.
    aug = make()
    random.seed(seed)
    np.random.seed(seed)
    out = aug(rgb.astype('float32'))
    np.testing.assert_allclose(out.asnumpy(), ORACLE[key], rtol=1e-5, atol=1e-3)


def test_seeded_crop_augmenters_match_mxnet(rgb):
    random.seed(8)
    np.testing.assert_array_equal(mx.image.RandomCropAug((5, 4))(rgb).asnumpy(), ORACLE['aug_randcrop'])
    random.seed(9)
    out = mx.image.RandomSizedCropAug((5, 4), 0.3, (0.75, 1.33), interp=0)(rgb)
    np.testing.assert_array_equal(out.asnumpy(), ORACLE['aug_randsizedcrop'])


def test_deterministic_augmenters(rgb):
    assert mx.image.ResizeAug(4, interp=1)(rgb).shape == (4, 5, 3)
    assert mx.image.ForceResizeAug((5, 7))(rgb).shape == (7, 5, 3)
    np.testing.assert_array_equal(mx.image.CenterCropAug((5, 4))(rgb).asnumpy(), ORACLE['center_crop'])
    assert mx.image.CastAug()(rgb).dtype == np.float32
    assert mx.image.HorizontalFlipAug(0.0)(rgb) is rgb
    seq = mx.image.SequentialAug([mx.image.CastAug(), mx.image.ColorNormalizeAug([1, 2, 3], None)])
    np.testing.assert_array_equal(seq(rgb).asnumpy(), ORACLE['rgb'] - np.array([1, 2, 3]))


def test_random_augmenters_properties(rgb):
    random.seed(0)
    flips = [mx.image.HorizontalFlipAug(0.5)(rgb) is not rgb for _ in range(200)]
    assert 70 < sum(flips) < 130
    sizes = {mx.image.RandomSizedCropAug((4, 4), (0.1, 1.0), (0.5, 2.0))(rgb).shape for _ in range(20)}
    assert sizes == {(4, 4, 3)}
    src = rgb.astype('float32')
    for _ in range(10):
        out = mx.image.BrightnessJitterAug(0.2)(src.copy()).asnumpy()
        ratio = out[src.asnumpy() > 0] / src.asnumpy()[src.asnumpy() > 0]
        assert np.allclose(ratio, ratio[0], rtol=1e-5) and 0.8 <= ratio[0] <= 1.2
    order = mx.image.RandomOrderAug([mx.image.CastAug(), mx.image.BrightnessJitterAug(0.1)])
    assert order(rgb).shape == (6, 8, 3)


def test_create_augmenter_and_dumps(rgb):
    augs = mx.image.CreateAugmenter((3, 4, 5), resize=6, rand_crop=True, rand_mirror=True, mean=True,
                                    std=True, brightness=0.1, contrast=0.1, saturation=0.1, hue=0.1,
                                    pca_noise=0.1, rand_gray=0.2)
    assert [type(a).__name__ for a in augs] == ORACLE['create_names'].tolist()
    dumps = [a.dumps() if isinstance(a.dumps(), str) else json.dumps(a.dumps()) for a in augs]
    for ours, theirs in zip(dumps, ORACLE['create_dumps'].tolist()):
        (our_name, our_args), (their_name, their_args) = json.loads(ours), json.loads(theirs)
        assert our_name == their_name
        if isinstance(their_args, dict):  # composite augmenters dump their children instead
            assert our_args.keys() == their_args.keys()
            np.testing.assert_allclose(_numbers(our_args), _numbers(their_args), rtol=1e-6)
    random.seed(12)
    np.random.seed(12)
    out = rgb
    for aug in augs:
        out = aug(out)
    assert out.shape == (4, 5, 3)
    np.testing.assert_allclose(out.asnumpy(), ORACLE['create_pipeline'], atol=0.05)
    assert [type(a).__name__ for a in mx.image.CreateAugmenter((3, 4, 4))] == ['CenterCropAug', 'CastAug']


def _numbers(kwargs):
    return np.concatenate([np.ravel(np.asarray(v, dtype=float)) for v in kwargs.values()
                           if not isinstance(v, str)] + [np.zeros(0)])


def _write_images(folder):
    names = []
    for i in range(5):
        name = 'img%d.png' % i
        with open(os.path.join(folder, name), 'wb') as f:
            f.write(_raw('image_rgb.png'))
        names.append(name)
    return names


def test_image_iter_lst_pad_and_values(tmp_path):
    names = _write_images(str(tmp_path))
    lst = tmp_path / 'data.lst'
    lst.write_text(''.join('%d\t%d\t%s\n' % (i, i * 10, n) for i, n in enumerate(names)))
    it = mx.image.ImageIter(2, (3, 4, 5), path_imglist=str(lst), path_root=str(tmp_path))
    assert it.provide_data == [('data', (2, 3, 4, 5))] and it.provide_label == [('softmax_label', (2,))]
    batches = list(it)
    assert [b.pad for b in batches] == [0, 0, 1]
    assert batches[2].label[0].asnumpy().tolist() == [40.0, 0.0]
    expected = ORACLE['center_crop'].transpose(2, 0, 1).astype(np.float32)
    np.testing.assert_array_equal(batches[0].data[0].asnumpy()[1], expected)
    it.reset()
    assert len(list(it)) == 3


def test_image_iter_imglist_modes(tmp_path):
    names = _write_images(str(tmp_path))
    imglist = [[float(i), 1.0 + i, n] for i, n in enumerate(names)]
    it = mx.image.ImageIter(2, (3, 4, 5), label_width=2, imglist=imglist, path_root=str(tmp_path),
                            last_batch_handle='discard', dtype='int32')
    batches = list(it)
    assert len(batches) == 2 and batches[0].label[0].shape == (2, 2)
    assert batches[1].label[0].asnumpy().tolist() == [[2, 3], [3, 4]]
    roll = mx.image.ImageIter(2, (3, 4, 5), imglist=[[i, n] for i, n in enumerate(names)],
                              path_root=str(tmp_path), last_batch_handle='roll_over')
    assert len(list(roll)) == 2
    roll.reset()
    first = next(roll)
    assert first.pad == 1 and first.label[0].asnumpy().tolist() == [4.0, 0.0]


def test_image_iter_errors(tmp_path):
    with pytest.raises(ValueError, match='3 channels'):
        mx.image.ImageIter(1, (1, 4, 4), imglist=[[0, 'a.png']])
    with pytest.raises(mx.base.MXNetError, match='x.rec'):
        mx.image.ImageIter(1, (3, 4, 4), path_imgrec=str(tmp_path / 'x.rec'))
    (tmp_path / 'bad.png').write_bytes(b'not an image')
    it = mx.image.ImageIter(1, (3, 4, 4), imglist=[[0, 'bad.png']], path_root=str(tmp_path))
    with pytest.raises(RuntimeError, match='Broken image filename: bad.png'):
        next(it)


def test_nd_imdecode_gives_float_chw_clipped_and_into_out():
    # MXNet 1.9.1's deprecated mx.nd.imdecode fails on any input; neomx follows its docs.
    hwc = mx.image.imdecode(_raw('image_rgb.png')).asnumpy().astype(np.float32)
    chw = mx.nd.imdecode(_raw('image_rgb.png'))
    assert chw.dtype == np.float32
    np.testing.assert_array_equal(chw.asnumpy(), hwc.transpose(2, 0, 1))
    clipped = mx.nd.imdecode(_raw('image_rgb.png'), clip_rect=(1, 2, 5, 6), mean=mx.nd.ones((3, 1, 1)))
    np.testing.assert_array_equal(clipped.asnumpy(), hwc[2:6, 1:5].transpose(2, 0, 1) - 1)
    out = mx.nd.zeros((2,) + chw.shape)
    assert mx.nd.imdecode(_raw('image_rgb.png'), out=out, index=1) is out
    np.testing.assert_array_equal(out[1].asnumpy(), chw.asnumpy())
    assert mx.nd.imdecode(_raw('image_rgb.png'), channels=1).shape == (1,) + chw.shape[1:]


def test_image_iter_reads_recordio_in_order_and_by_index():
    rec, idx = os.path.join(DATA, 'recordio_png.rec'), os.path.join(DATA, 'recordio_png.idx')
    reader = mx.recordio.MXIndexedRecordIO(idx, rec, 'r')
    records = [mx.recordio.unpack_img(reader.read_idx(k)) for k in reader.keys]
    aug = [mx.image.CenterCropAug((4, 4)), mx.image.CastAug()]
    shape = (3, 4, 4)
    for it in (mx.image.ImageIter(2, shape, path_imgrec=rec, path_imgidx=idx, aug_list=aug),
               mx.image.ImageIter(2, shape, path_imgrec=rec, aug_list=aug)):
        for _ in range(2):                      # a second epoch after reset
            seen = []
            for batch in it:
                count = 2 - batch.pad
                seen += [(l, d) for l, d in zip(batch.label[0].asnumpy()[:count], batch.data[0].asnumpy()[:count])]
            it.reset()
            assert [l for l, _ in seen] == [h.label for h, _ in records]
            for (_, data), (_, bgr) in zip(seen, records):      # unpack_img gives BGR like OpenCV
                want = mx.image.center_crop(mx.nd.array(bgr[:, :, ::-1].copy(), dtype='uint8'), (4, 4))[0]
                np.testing.assert_array_equal(data, want.asnumpy().transpose(2, 0, 1))
    with pytest.raises(ValueError, match='path_imgidx'):
        mx.image.ImageIter(2, shape, path_imgrec=rec, shuffle=True)
