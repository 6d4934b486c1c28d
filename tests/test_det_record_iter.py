"""mx.io.ImageDetRecordIter's detection augmentations (MXNet's det_aug_default): crop samplers,
random padding, colour, resize modes, their argument checks, and batches that do not depend on
the number of threads. Behaviour compared with MXNet 1.9.1 (values printed by it are noted)."""
import random

import numpy as np
import pytest

import neomx as mx
from neomx.io.image_record_iter import _record_seed

ROWS, COLS = 50, 100


def _coded_image():
    """Pixels that say where they come from: (as ``pack_img`` takes OpenCV's BGR order) red
    = 200, green = row, blue = column."""
    image = np.zeros((ROWS, COLS, 3), np.uint8)
    image[:, :, 0] = np.arange(COLS)[None, :]
    image[:, :, 1] = np.arange(ROWS)[:, None]
    image[:, :, 2] = 200
    return image


def _write(path, labels, image=None):
    writer = mx.recordio.MXRecordIO(path, 'w')
    for i, label in enumerate(labels):
        pixels = _coded_image() if image is None else image
        writer.write(mx.recordio.pack_img(mx.recordio.IRHeader(0, np.array(label, np.float32), i, 0),
                                          pixels, img_fmt='.png'))
    writer.close()
    return path


CENTRED = [2, 5, 1, 0.4, 0.4, 0.6, 0.6]


def _batches(path, **kwargs):
    kwargs.setdefault('data_shape', (3, 400, 400))
    kwargs.setdefault('resize_mode', 'shrink')      # no resize: the pixels show the window
    data_iter = mx.io.ImageDetRecordIter(path_imgrec=path, batch_size=4, **kwargs)
    try:
        return [(b.data[0].asnumpy(), b.label[0].asnumpy()) for b in data_iter]
    finally:
        data_iter.close()


def test_crop_that_must_hold_the_object_keeps_it_and_maps_its_box(tmp_path):
    path = _write(str(tmp_path / 'a.rec'), [CENTRED] * 8)
    batches = _batches(path, rand_crop_prob=1, min_crop_scales=(0.3,), max_crop_scales=(0.9,),
                       min_crop_object_coverages=(1.0,), max_crop_object_coverages=(1.0,),
                       max_crop_trials=(200,))
    cropped = 0
    for data, labels in batches:
        for image, label in zip(data, labels):
            rows, cols, length = int(label[1]), int(label[2]), int(label[3])
            assert label[0] == 3 and length == 7 and (label[4 + length:] == -1).all()
            left, top = int(image[2, 0, 0]), int(image[1, 0, 0])     # the window's origin
            np.testing.assert_array_equal(image[2, 0, :cols], left + np.arange(cols))
            np.testing.assert_array_equal(image[1, :rows, 0], top + np.arange(rows))
            assert (image[:, rows:] == 0).all() and (image[:, :, cols:] == 0).all()
            box = label[7:11]
            # The whole object lies in the window (coverage 1), unclipped: its box, in the
            # window's pixels, is where the object's pixels are (within the truncation).
            assert (box > 0).all() and (box < 1).all()
            np.testing.assert_allclose(box[[0, 2]] * cols, [0.4 * COLS - left, 0.6 * COLS - left], atol=1.5)
            np.testing.assert_allclose(box[[1, 3]] * rows, [0.4 * ROWS - top, 0.6 * ROWS - top], atol=1.5)
            cropped += (rows, cols) != (ROWS, COLS)
    assert cropped >= 6


def test_center_and_overlap_emission_drop_objects_outside(tmp_path):
    # The second object, in the top left corner, leaves most crops of the lower right.
    label = [2, 5, 1, 0.55, 0.55, 0.95, 0.95, 2, 0.0, 0.0, 0.1, 0.1]
    path = _write(str(tmp_path / 'a.rec'), [label] * 8)
    for mode in ('center', 'overlap'):
        for _, labels in _batches(path, rand_crop_prob=1, min_crop_scales=(0.3,),
                                  max_crop_scales=(0.5,), crop_emit_mode=mode,
                                  emit_overlap_thresh=0.5, max_crop_trials=(100,)):
            for out in labels:
                objects = out[6:4 + int(out[3])].reshape(-1, 5)
                assert len(objects) >= 1
                assert ((objects[:, 1:] >= 0) & (objects[:, 1:] <= 1)).all()
                assert (objects[:, 3] > objects[:, 1]).all() and (objects[:, 4] > objects[:, 2]).all()


def test_padding_moves_pixels_and_boxes_as_computed_by_hand(tmp_path):
    path = _write(str(tmp_path / 'a.rec'), [CENTRED] * 4)
    (data, labels), = _batches(path, rand_pad_prob=1, max_pad_scale=3.0, fill_value=9, seed_aug=5)
    f32 = np.float32
    for record, (image, label) in enumerate(zip(data, labels)):
        rng = random.Random(_record_seed(5, 1, record))     # the record's stream, first pass
        assert rng.random() < 1
        scale = f32(rng.uniform(1, 3.0))
        if scale < f32(1.05):
            assert tuple(label[1:3]) == (ROWS, COLS)
            continue
        x, y = f32(rng.uniform(0, scale - 1)), f32(rng.uniform(0, scale - 1))
        left, top = int(x * f32(COLS)), int(y * f32(ROWS))
        width = COLS + left + int((scale - x - f32(1)) * f32(COLS))
        height = ROWS + top + int((scale - y - f32(1)) * f32(ROWS))
        assert tuple(label[1:3]) == (height, width)
        assert (image[:, top:top + ROWS, left:left + COLS] == _coded_image()[:, :, ::-1].transpose(2, 0, 1)).all()
        assert (image[:, :top, :width] == 9).all() and (image[:, :height, :left] == 9).all()
        expected = (np.array([0.4, 0.4, 0.6, 0.6], f32) + np.array([x, y, x, y], f32)) / scale
        np.testing.assert_array_equal(label[7:11], expected)


def test_resize_modes_keep_the_aspect_and_report_the_size(tmp_path):
    path = _write(str(tmp_path / 'a.rec'), [CENTRED] * 4)
    # As MXNet 1.9.1: a 50x100 image in (3, 60, 60) is 30x60 for shrink and fit, zeros around.
    for mode, size in (('shrink', (30, 60)), ('fit', (30, 60)), ('force', (60, 60))):
        (data, labels), = _batches(path, data_shape=(3, 60, 60), resize_mode=mode, mean_r=1, std_r=2)
        assert tuple(labels[0, :4]) == (3,) + size + (7,)
        if mode != 'force':
            assert (data[:, 0, 30:] == -0.5).all() and (data[:, 1:, 30:] == 0).all()
    (data, labels), = _batches(path, data_shape=(3, 60, 200), resize_mode='fit')
    assert tuple(labels[0, 1:3]) == (60, 120)
    (data, labels), = _batches(path, data_shape=(3, 60, 200), resize_mode='shrink')
    assert tuple(labels[0, 1:3]) == (ROWS, COLS)


def test_invalid_objects_are_dropped(tmp_path):
    # As MXNet 1.9.1: an object with xmax <= xmin leaves the label (length 17 -> 12).
    label = CENTRED + [2, 0.6, 0.5, 0.9, 0.9] + [0, 0.5, 0.5, 0.4, 0.7]
    path = _write(str(tmp_path / 'a.rec'), [label] * 4)
    (_, labels), = _batches(path)
    assert labels.shape == (4, 4 + 17)
    assert _batches(path, label_pad_width=-1)[0][1].shape == (4, 4 + 17)     # -1: estimated
    assert _batches(path, label_pad_width=20)[0][1].shape == (4, 4 + 20)
    np.testing.assert_allclose(labels[0, 3:16], [12] + label[:12], rtol=1e-6)
    assert (labels[0, 16:] == -1).all()


def test_colour_contrast_scales_the_pixels(tmp_path):
    image = np.full((ROWS, COLS, 3), 100, np.uint8)
    path = _write(str(tmp_path / 'a.rec'), [CENTRED] * 4, image)
    (data, _), = _batches(path, max_random_contrast=0.5, random_contrast_prob=1, seed_aug=3)
    levels = data[:, :, :ROWS, :COLS].reshape(4, -1)
    assert (levels == levels[:, :1]).all()          # one factor per image
    assert ((levels[:, 0] >= 50) & (levels[:, 0] <= 150)).all() and len(set(levels[:, 0])) > 1
    (data, _), = _batches(path, max_random_hue=20, random_hue_prob=1, max_random_illumination=30,
                          random_illumination_prob=1)
    assert not (data[:, :, :ROWS, :COLS] == 100).all()


@pytest.mark.parametrize('arguments, message', [
    (dict(crop_emit_mode='middle'), 'crop_emit_mode'),
    (dict(resize_mode='stretch'), 'resize_mode'),
    (dict(emit_overlap_thresh=-0.1), 'emit_overlap_thresh'),
    (dict(min_crop_scales=(0.5,), max_crop_scales=(0.4,)), r'max_crop_scales \(0.4\) must be > min_crop_scales'),
    (dict(max_crop_scales=(1.5,)), r'max_crop_scales \(1.5\) must be <= 1'),
    (dict(min_crop_overlaps=(0.6,), max_crop_overlaps=(0.5,)), 'max_crop_overlaps'),
    (dict(min_crop_scales=(0.1, 0.2)), 'min_crop_scales must hold 1 value'),
    (dict(num_crop_sampler=2, max_crop_trials=(1, 2, 3)), 'max_crop_trials holds 3 values'),
    (dict(mean_a=1.0), 'mean_a'),
    (dict(label_pad_width=5), 'label_pad_width 5 is shorter than the longest label'),
])
def test_bad_arguments_name_the_argument(tmp_path, arguments, message):
    path = _write(str(tmp_path / 'a.rec'), [CENTRED])
    with pytest.raises(mx.base.MXNetError, match=message):
        mx.io.ImageDetRecordIter(path_imgrec=path, data_shape=(3, 8, 8), batch_size=1, **arguments)


def test_path_imglist_replaces_the_labels(tmp_path):
    path = _write(str(tmp_path / 'a.rec'), [CENTRED] * 2)
    listing = tmp_path / 'a.lst'
    listing.write_text('0\t2\t5\t1\t0.1\t0.1\t0.3\t0.3\t2\t0.5\t0.5\t0.9\t0.9\ta.png\n'
                       '1\t2\t5\t4\t0.2\t0.2\t0.4\t0.4\tb.png\n')
    data_iter = mx.io.ImageDetRecordIter(path_imgrec=path, path_imglist=str(listing),
                                         data_shape=(3, 8, 8), batch_size=2)
    labels = data_iter.next().label[0].asnumpy()
    assert labels.shape == (2, 4 + 12)
    np.testing.assert_allclose(labels[1, 3:11], [7, 2, 5, 4, 0.2, 0.2, 0.4, 0.4], rtol=1e-6)
    np.testing.assert_allclose(labels[0, 3:16], [12, 2, 5, 1, .1, .1, .3, .3, 2, .5, .5, .9, .9], rtol=1e-6)


def test_batches_do_not_depend_on_the_number_of_threads(tmp_path):
    rng = np.random.RandomState(0)
    image = (rng.rand(ROWS, COLS, 3) * 255).astype(np.uint8)
    labels = [CENTRED + [2, 0.0, 0.05, 0.3, 0.35, 3, 0.6, 0.1, 0.95, 0.5]] * 10
    path = _write(str(tmp_path / 'a.rec'), labels, image)
    augment = dict(data_shape=(3, 40, 40), resize_mode='force', rand_crop_prob=0.8,
                   num_crop_sampler=2, min_crop_scales=(0.3, 0.5), max_crop_scales=(0.8, 1.0),
                   min_crop_aspect_ratios=(0.5,), max_crop_aspect_ratios=(2.0,),
                   min_crop_overlaps=(0.1, 0.0), rand_pad_prob=0.5, max_pad_scale=2.0,
                   rand_mirror_prob=0.5, max_random_hue=10, random_hue_prob=0.5,
                   max_random_contrast=0.3, random_contrast_prob=0.5, inter_method=10,
                   shuffle=True, seed=3)
    runs = [_batches(path, preprocess_threads=threads, **augment) for threads in (1, 2)]
    for (data1, label1), (data2, label2) in zip(*runs):
        np.testing.assert_array_equal(data1, data2)
        np.testing.assert_array_equal(label1, label2)
    first = np.concatenate([label for _, label in runs[0]])
    assert len(set(first[:, 3])) > 1 or len(set(first[:, 7])) > 1       # augmented


def test_mean_img_is_computed_from_the_augmented_images_and_subtracted(tmp_path):
    path = _write(str(tmp_path / 'a.rec'), [CENTRED] * 4)
    mean_path = str(tmp_path / 'mean.nd')
    (data, _), = _batches(path, data_shape=(3, 60, 60), mean_img=mean_path)
    # Each image (30x60 after 'shrink', zeros below) minus the mean of the four: zero.
    np.testing.assert_allclose(data, 0, atol=1e-4)
    mean = mx.nd.load(mean_path)['mean_img'].asnumpy()
    assert mean.shape == (3, 60, 60) and (mean[:, 30:] == 0).all() and mean[0, :30].max() > 0
