"""``mx.io.ImageDetRecordIter``: batches of images and padded detection labels from a ``.rec``
file of detection records, with MXNet's detection augmentations.

A record's label is the raw detection label ``[header_width, object_width, header extras...,
objects...]`` (objects ``[class, xmin, ymin, xmax, ymax, extras...]`` in fractions of the
image); objects with ``xmax <= xmin`` or ``ymax <= ymin`` are dropped, as MXNet drops them.
The output label of each image is, as MXNet's: ``[channels, rows, columns, label length]`` of
the augmented image and label, the label, then ``label_pad_value`` up to ``label_pad_width``
(by default the longest label of the file, or of ``path_imglist``).

Each image goes through MXNet's ``det_aug_default`` pipeline, in MXNet's order: shorter-edge
``resize``; colour (hue, saturation, illumination as shifts of OpenCV's 8-bit HLS, contrast
as a factor ``1 + c``, each drawn in ``-/+ max`` and applied with its probability); mirror
(``rand_mirror_prob``); random padding (``rand_pad_prob``: the image placed at a random spot
of a canvas up to ``max_pad_scale`` times its size, filled with ``fill_value``); random crop
(``rand_crop_prob``: samplers tried in random order, each up to ``max_crop_trials`` times,
until a window satisfies the sampler's constraints and keeps an object; objects are kept by
``crop_emit_mode`` and clipped to the window); then ``resize_mode``: ``'force'`` to
``data_shape``, ``'shrink'`` (only larger images, aspect kept) or ``'fit'`` (aspect kept), the
image placed at the top left of a zero canvas. Then ``(pixel - mean) / std * scale``
(``std`` 0: no division; ``mean_img`` replaces the channel means).

Boxes follow the image exactly as in MXNet (float32 arithmetic): padding and cropping map a
box through the sampled window in fractions of the image, while the pixels move by the
truncated whole numbers of pixels, as MXNet's ``cv::copyMakeBorder``/ROI do.
"""
import numpy as np

from .. import recordio
from .._image_decode import opencv
from .._optional import MissingDependencyError
from ..base import MXNetError
from .image_record_iter import (ImageRecordIter, check_options, _hls_jitter, _read_list_labels,
                                _saturate, _shorter_edge_size)

__all__ = ['ImageDetRecordIter']

# Alpha channel arguments (four-channel images are not implemented), with their defaults.
_DET_UNSUPPORTED = {'mean_a': 0, 'std_a': 0}
# The fields ahead of the raw label: channels, height, width, raw length.
_PREFIX = 4
_EMIT_MODES = ('center', 'overlap')
_RESIZE_MODES = ('force', 'shrink', 'fit')
# Per-sampler crop arguments, in MXNet's order, with their defaults.
_SAMPLER_ARGS = ('min_crop_scales', 'max_crop_scales', 'min_crop_aspect_ratios',
                 'max_crop_aspect_ratios', 'min_crop_overlaps', 'max_crop_overlaps',
                 'min_crop_sample_coverages', 'max_crop_sample_coverages',
                 'min_crop_object_coverages', 'max_crop_object_coverages', 'max_crop_trials')
# A padding scale below this leaves the image unpadded (MXNet's threshold).
_MIN_PAD_SCALE = np.float32(1.05)
_F32 = np.float32


def _longest_label(path_imgrec):
    longest = 0
    reader = recordio.MXRecordIO(path_imgrec, 'r')
    try:
        while True:
            record = reader.read()
            if record is None:
                return longest
            header, _ = recordio.unpack(record)
            longest = max(longest, np.size(header.label))
    finally:
        reader.close()


def _as_tuple(name, value, num_sampler, kind):
    """A per-sampler argument as a tuple of ``num_sampler`` values (one value is repeated)."""
    values = tuple(kind(v) for v in (value if isinstance(value, (tuple, list)) else (value,)))
    if num_sampler == 1 and len(values) != 1:
        raise MXNetError('ImageDetRecordIter: %s must hold 1 value for num_crop_sampler=1, '
                         'got %d' % (name, len(values)))
    if num_sampler > 1 and len(values) not in (1, num_sampler):
        raise MXNetError('ImageDetRecordIter: %s holds %d values but num_crop_sampler is %d'
                         % (name, len(values), num_sampler))
    return values * num_sampler if num_sampler > 1 and len(values) == 1 else values


# MXNet's checks of each crop sampler: (argument, comparison, bound: a number or an argument).
_SAMPLER_CHECKS = (('min_crop_scales', '>=', 0), ('max_crop_scales', '<=', 1),
                   ('max_crop_scales', '>', 'min_crop_scales'),
                   ('min_crop_aspect_ratios', '>=', 0),
                   ('max_crop_aspect_ratios', '>=', 'min_crop_aspect_ratios'),
                   ('max_crop_overlaps', '>=', 'min_crop_overlaps'),
                   ('max_crop_sample_coverages', '>=', 'min_crop_sample_coverages'),
                   ('max_crop_object_coverages', '>=', 'min_crop_object_coverages'))
_COMPARE = {'>=': lambda a, b: a >= b, '<=': lambda a, b: a <= b, '>': lambda a, b: a > b}


def _check_samplers(samplers):
    for i, sampler in enumerate(samplers):
        for name, compare, bound in _SAMPLER_CHECKS:
            value = sampler[bound] if isinstance(bound, str) else bound
            if not _COMPARE[compare](sampler[name], value):
                shown = '%s (%s)' % (bound, value) if isinstance(bound, str) else value
                raise MXNetError('ImageDetRecordIter: crop sampler %d: %s (%s) must be %s %s'
                                 % (i, name, sampler[name], compare, shown))


class _Objects:
    """The objects of one detection label: a (N, object_width) float32 array (class, xmin,
    ymin, xmax, ymax, extras), and the label's header."""

    def __init__(self, raw):
        raw = np.asarray(raw, np.float32).ravel()
        if raw.size < 7:
            raise MXNetError('detection label of %d values: at least 7 are needed (a header '
                             'of 2 and an object of 5)' % raw.size)
        header_width, object_width = int(raw[0]), int(raw[1])
        if header_width < 2 or object_width < 5 or (raw.size - header_width) % object_width:
            raise MXNetError('detection label with header width %d and object width %d does '
                             'not split into objects (%d values; header width >= 2, object '
                             'width >= 5)' % (header_width, object_width, raw.size))
        self.header = raw[:header_width]
        objects = raw[header_width:].reshape(-1, object_width)
        self.objects = objects[(objects[:, 3] > objects[:, 1]) & (objects[:, 4] > objects[:, 2])]

    def to_array(self):
        return np.concatenate([self.header, self.objects.ravel()])

    def mirror(self):
        self.objects[:, [1, 3]] = 1 - self.objects[:, [3, 1]]

    def project(self, box, objects=None):
        """``objects`` (all by default) in fractions of the window ``box`` (x, y, w, h),
        clipped to it."""
        x, y, w, h = box
        out = (self.objects if objects is None else objects).copy()
        out[:, 1] = np.maximum(_F32(0), (out[:, 1] - x) / w)
        out[:, 2] = np.maximum(_F32(0), (out[:, 2] - y) / h)
        out[:, 3] = np.minimum(_F32(1), (out[:, 3] - x) / w)
        out[:, 4] = np.minimum(_F32(1), (out[:, 4] - y) / h)
        return out

    def intersections(self, box):
        """Areas of the objects' boxes, their intersections with ``box`` (x, y, w, h)."""
        x, y, w, h = box
        boxes = self.objects[:, 1:5]
        inter_w = np.minimum(boxes[:, 2], x + w) - np.maximum(boxes[:, 0], x)
        inter_h = np.minimum(boxes[:, 3], y + h) - np.maximum(boxes[:, 1], y)
        inter = np.where((inter_w > 0) & (inter_h > 0), inter_w * inter_h, _F32(0))
        return (boxes[:, 2] - boxes[:, 0]) * (boxes[:, 3] - boxes[:, 1]), inter

    def try_crop(self, box, sampler, emit_mode, emit_thresh):
        """Crop to ``box`` when it meets the sampler's constraints and keeps an object:
        replace the objects by the kept ones, projected; False (nothing changed) otherwise."""
        if not len(self.objects):
            return True
        area, inter = self.intersections(box)
        crop_area = box[2] * box[3]
        # One object must meet every constraint that is set (a range other than [0, 1]).
        iou = np.where(inter > 0, inter / (crop_area + area - inter), _F32(0))
        meets = np.ones(len(area), bool)
        for kind, measure in (('overlaps', iou), ('sample_coverages', inter / crop_area),
                              ('object_coverages', inter / area)):
            low, high = sampler['min_crop_' + kind], sampler['max_crop_' + kind]
            if low > 0 or high < 1:
                meets &= (measure >= _F32(low)) & (measure <= _F32(high))
        if not meets.any():
            return False
        if emit_mode == 'center':
            boxes = self.objects[:, 1:5]
            cx, cy = (boxes[:, 0] + boxes[:, 2]) * _F32(0.5), (boxes[:, 1] + boxes[:, 3]) * _F32(0.5)
            kept = (cx >= box[0]) & (cx < box[0] + box[2]) & (cy >= box[1]) & (cy < box[1] + box[3])
        else:
            kept = inter / area > _F32(emit_thresh)
        if not kept.any():
            return False
        self.objects = self.project(box, self.objects[kept])
        return True


def _crop_box(sampler, image_aspect, rng):
    """A random crop window (x, y, w, h) in fractions of the image, drawn as MXNet draws it."""
    scale = _F32(rng.uniform(sampler['min_crop_scales'], sampler['max_crop_scales'])) + _F32(1e-12)
    min_ratio = max(_F32(sampler['min_crop_aspect_ratios']) / image_aspect, scale * scale)
    # The window's sides stay within the image: ratio^2 in [scale^2, 1 / scale^2].
    max_ratio = min(_F32(sampler['max_crop_aspect_ratios']) / image_aspect, _F32(1) / (scale * scale))
    ratio = np.sqrt(_F32(rng.uniform(min_ratio, max_ratio)))
    width, height = min(_F32(1), scale * ratio), min(_F32(1), scale / ratio)
    x = _F32(rng.uniform(0, _F32(1) - width))
    y = _F32(rng.uniform(0, _F32(1) - height))
    return x, y, width, height


class ImageDetRecordIter(ImageRecordIter):
    """Iterate over detection RecordIO files: (N, C, H, W) images and (N, 4 + pad width)
    labels, augmented as MXNet's ``det_aug_default`` (see the module docstring).
    Keyword-only arguments, as in MXNet.

    Parameters
    ----------
    path_imgrec, data_shape, batch_size, path_imgidx, shuffle, seed, round_batch, resize,
    mean_r, mean_g, mean_b, scale, inter_method, dtype, num_parts, part_index, seed_aug,
    preprocess_threads, prefetch_buffer, mean_img : as :class:`ImageRecordIter`.
    path_imglist : str
        An .lst file (``index \\t label values... \\t path``) whose labels replace the records',
        matched by the records' image index.
    std_r, std_g, std_b : float, default 0
        0 means no division (MXNet's default here).
    label_width : int, default -1
        Values of each record's label; -1: any.
    label_pad_width : int, default 0
        Label length after padding; 0 or -1: the longest label.
    label_pad_value : float, default -1
    rand_mirror_prob : float, default 0
        Probability to mirror an image and its boxes.
    rand_crop_prob : float, default 0
        Probability to try the crop samplers.
    min_crop_scales, max_crop_scales, min_crop_aspect_ratios, max_crop_aspect_ratios,
    min_crop_overlaps, max_crop_overlaps, min_crop_sample_coverages, max_crop_sample_coverages,
    min_crop_object_coverages, max_crop_object_coverages, max_crop_trials : tuple
        One value per crop sampler (one value serves all): the window's scale and aspect
        ratio ranges; the IoU, intersection / window and intersection / object ranges one
        object must meet (those set to other than [0, 1]); the tries before the next
        sampler.
    num_crop_sampler : int, default 1
    crop_emit_mode : {'center', 'overlap'}
        Keep the objects whose centre is in the window, or whose fraction inside it exceeds
        ``emit_overlap_thresh``.
    emit_overlap_thresh : float, default 0.3
    rand_pad_prob, max_pad_scale, fill_value : float, float, int
        Probability to pad, the largest canvas (times the image), the canvas' value.
    max_random_hue, max_random_saturation, max_random_illumination : int
    random_hue_prob, random_saturation_prob, random_illumination_prob : float
        HLS shifts in ``-/+ max`` (OpenCV's 8-bit HLS, needs OpenCV) and their probabilities.
    max_random_contrast, random_contrast_prob : float
        Pixels scaled by ``1 + c``, ``c`` in ``-/+ max_random_contrast``, with this probability.
    resize_mode : {'force', 'shrink', 'fit'}

    Shape
    -----
    data: (batch_size, C, H, W); label: (batch_size, 4 + label_pad_width).

    Examples
    --------
    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), 'det.rec')
    >>> writer = mx.recordio.MXRecordIO(path, 'w')
    >>> label = np.array([2, 5, 1, 0.1, 0.2, 0.5, 0.6], np.float32)
    >>> writer.write(mx.recordio.pack_img(mx.recordio.IRHeader(0, label, 0, 0),
    ...                                   np.zeros((8, 8, 3), np.uint8), img_fmt='.png'))
    >>> writer.close()
    >>> it = mx.io.ImageDetRecordIter(path_imgrec=path, data_shape=(3, 4, 4), batch_size=1,
    ...                               label_pad_width=9)
    >>> [round(float(v), 2) for v in it.next().label[0].asnumpy()[0]]
    [3.0, 4.0, 4.0, 7.0, 2.0, 5.0, 1.0, 0.1, 0.2, 0.5, 0.6, -1.0, -1.0]
    >>> it = mx.io.ImageDetRecordIter(path_imgrec=path, data_shape=(3, 4, 4), batch_size=1,
    ...                               resize_mode='shrink', rand_mirror_prob=1)
    >>> [round(float(v), 2) for v in it.next().label[0].asnumpy()[0]]
    [3.0, 4.0, 4.0, 7.0, 2.0, 5.0, 1.0, 0.5, 0.2, 0.9, 0.6]
    """

    def __init__(self, *, path_imgrec, data_shape, batch_size, label_width=-1,
                 label_pad_width=0, label_pad_value=-1., rand_mirror_prob=0., std_r=0.,
                 std_g=0., std_b=0., label_name='softmax_label', path_imglist='',
                 rand_crop_prob=0., min_crop_scales=(0.,), max_crop_scales=(1.,),
                 min_crop_aspect_ratios=(1.,), max_crop_aspect_ratios=(1.,),
                 min_crop_overlaps=(0.,), max_crop_overlaps=(1.,),
                 min_crop_sample_coverages=(0.,), max_crop_sample_coverages=(1.,),
                 min_crop_object_coverages=(0.,), max_crop_object_coverages=(1.,),
                 num_crop_sampler=1, crop_emit_mode='center', emit_overlap_thresh=0.3,
                 max_crop_trials=(25,), rand_pad_prob=0., max_pad_scale=1., max_random_hue=0,
                 random_hue_prob=0., max_random_saturation=0, random_saturation_prob=0.,
                 max_random_illumination=0, random_illumination_prob=0.,
                 max_random_contrast=0., random_contrast_prob=0., fill_value=127,
                 resize_mode='force', **kwargs):
        options = {name: kwargs.pop(name) for name in list(kwargs) if name in _DET_UNSUPPORTED}
        check_options(options, _DET_UNSUPPORTED, 'ImageDetRecordIter')
        if crop_emit_mode not in _EMIT_MODES:
            raise MXNetError('ImageDetRecordIter: crop_emit_mode=%r is not one of %s'
                             % (crop_emit_mode, _EMIT_MODES))
        if resize_mode not in _RESIZE_MODES:
            raise MXNetError('ImageDetRecordIter: resize_mode=%r is not one of %s'
                             % (resize_mode, _RESIZE_MODES))
        if emit_overlap_thresh < 0:
            raise MXNetError('ImageDetRecordIter: emit_overlap_thresh=%r must be >= 0'
                             % (emit_overlap_thresh,))
        arguments = dict(locals())     # the per-sampler arguments, looked up by name
        tuples = {name: _as_tuple(name, arguments[name], num_crop_sampler,
                                  int if name == 'max_crop_trials' else float)
                  for name in _SAMPLER_ARGS}
        self._samplers = [{name: tuples[name][i] for name in _SAMPLER_ARGS}
                          for i in range(max(num_crop_sampler, 0))]
        _check_samplers(self._samplers)
        self._crop_prob = rand_crop_prob
        self._emit = (crop_emit_mode, emit_overlap_thresh)
        self._pad = (rand_pad_prob, float(max_pad_scale), fill_value)
        self._hls_max = (max_random_hue, max_random_saturation, max_random_illumination)
        self._colour_probs = (random_hue_prob, random_saturation_prob, random_illumination_prob,
                              random_contrast_prob)
        self._max_contrast = max_random_contrast
        self._resize_mode = resize_mode
        if any(p > 0 for p in self._colour_probs[:3]) and any(self._hls_max) and opencv() is None:
            raise MissingDependencyError('ImageDetRecordIter: max_random_hue/saturation/'
                                         'illumination need OpenCV (opencv-python-headless): '
                                         'pip install "neomx[vision]"')
        self._pad_value = np.float32(label_pad_value)
        self._mirror_prob = rand_mirror_prob
        self._det_label_width = label_width
        self._det_list = _read_list_labels(path_imglist) if path_imglist else None
        longest = max((v.size for v in self._det_list.values()), default=0) \
            if self._det_list is not None else _longest_label(path_imgrec)
        if label_pad_width > 0 and label_pad_width < longest:
            raise MXNetError('ImageDetRecordIter: label_pad_width %d is shorter than the longest '
                             'label (%d) of %s' % (label_pad_width, longest,
                                                   path_imglist or path_imgrec))
        self._label_length = max(label_pad_width, longest)
        super().__init__(path_imgrec=path_imgrec, data_shape=data_shape, batch_size=batch_size,
                         std_r=std_r or 1., std_g=std_g or 1., std_b=std_b or 1.,
                         label_name=label_name, label_width=_PREFIX + self._label_length,
                         **kwargs)

    def _allocate(self):
        data, label = super()._allocate()
        label[:] = self._pad_value
        return data, label

    def _needs_rgb(self):
        return any(p > 0 for p in self._colour_probs) or super()._needs_rgb()

    def _raw_label(self, header):
        if self._det_list is not None:
            if header.id not in self._det_list:
                raise MXNetError('image index %d is not in path_imglist' % header.id)
            return self._det_list[header.id]
        raw = np.array(header.label, np.float32).ravel()
        if self._det_label_width > 0 and raw.size != self._det_label_width:
            raise MXNetError('the record provides %d-dimensional label but label_width is set '
                             'to %d' % (raw.size, self._det_label_width))
        return raw

    def _augment(self, header, encoded, record, rng):
        """The record's (H, W, C) uint8 canvas of ``data_shape`` (the augmented image at its
        top left, zeros around it), the image's (rows, columns) and its augmented label."""
        _, height, width = self.data_shape
        objects = _Objects(self._raw_label(header))
        pixels = self._decode(encoded, record)
        if self.resize > 0:
            pixels = self._resized(pixels, *_shorter_edge_size(*pixels.shape[:2], self.resize), rng)
        pixels = self._colour(pixels, rng)
        if self._mirror_prob > 0 and rng.random() < self._mirror_prob:
            pixels = pixels[:, ::-1]
            objects.mirror()
        pixels = self._padded(pixels, objects, rng)
        pixels = self._cropped(pixels, objects, rng)
        pixels = self._fitted(pixels, height, width, rng)
        canvas = np.zeros((height, width, pixels.shape[2]), np.uint8)
        canvas[:pixels.shape[0], :pixels.shape[1]] = pixels
        return canvas, pixels.shape[:2], objects.to_array()

    def _transform(self, header, encoded, record, rng, out):
        canvas, (rows, cols), raw = self._augment(header, encoded, record, rng)
        label = np.full(_PREFIX + self._label_length, self._pad_value, np.float32)
        label[:_PREFIX] = (self.data_shape[0], rows, cols, raw.size)
        label[_PREFIX:_PREFIX + raw.size] = raw
        self._write(canvas, out, rng)
        return label

    def _mean_pixels(self, header, encoded, record, rng):
        return self._augment(header, encoded, record, rng)[0]

    def _colour(self, pixels, rng):
        """MXNet's detection colour jitter: all four amounts drawn, then each kept with its
        probability; HLS shifts, then the contrast factor."""
        if not any(p > 0 for p in self._colour_probs):
            return pixels
        max_hue, max_saturation, max_illumination = self._hls_max
        # C++ truncates float * int towards zero.
        hue, saturation, illumination = (int(_F32(rng.uniform(-1, 1)) * m) for m in
                                         (max_hue, max_saturation, max_illumination))
        contrast = _F32(rng.uniform(-1, 1)) * _F32(self._max_contrast)
        hue, saturation, illumination, contrast = (
            amount if rng.random() < prob else 0 for amount, prob in
            zip((hue, saturation, illumination, contrast), self._colour_probs))
        if hue or saturation or illumination:
            pixels = _hls_jitter(pixels, (hue, illumination, saturation))
        if abs(contrast) > 1e-3:
            pixels = _saturate(pixels * (_F32(1) + _F32(contrast)))
        return pixels

    def _padded(self, pixels, objects, rng):
        """MXNet's random padding: a canvas ``s`` times the image (``s`` in [1,
        max_pad_scale], none under 1.05) with the image at a random spot."""
        prob, max_scale, fill = self._pad
        if not (prob > 0 and max_scale > 1) or rng.random() >= prob:
            return pixels
        scale = _F32(rng.uniform(1, max_scale))
        if scale < _MIN_PAD_SCALE:
            return pixels
        x, y = _F32(rng.uniform(0, scale - 1)), _F32(rng.uniform(0, scale - 1))
        objects.objects = objects.project((-x, -y, scale, scale))
        rows, cols = pixels.shape[:2]
        left, top = int(x * _F32(cols)), int(y * _F32(rows))
        right = int((scale - x - _F32(1)) * _F32(cols))
        bottom = int((scale - y - _F32(1)) * _F32(rows))
        return np.pad(pixels, ((top, max(bottom, 0)), (left, max(right, 0)), (0, 0)),
                      constant_values=fill)

    def _cropped(self, pixels, objects, rng):
        """MXNet's random crop: the samplers in random order, each tried up to its
        ``max_crop_trials`` until a window is accepted; the image unchanged otherwise."""
        if not (self._crop_prob > 0 and self._samplers) or rng.random() >= self._crop_prob:
            return pixels
        order = list(range(len(self._samplers)))
        rng.shuffle(order)
        rows, cols = pixels.shape[:2]
        for index in order:
            sampler = self._samplers[index]
            for _ in range(sampler['max_crop_trials']):
                box = _crop_box(sampler, _F32(cols) / _F32(rows), rng)
                if objects.try_crop(box, sampler, *self._emit):
                    left, top = int(box[0] * _F32(cols)), int(box[1] * _F32(rows))
                    # At least one pixel (MXNet would fail on an empty window).
                    width = max(1, min(cols - left, int(box[2] * _F32(cols))))
                    height = max(1, min(rows - top, int(box[3] * _F32(rows))))
                    return pixels[top:top + height, left:left + width]
        return pixels

    def _fitted(self, pixels, height, width, rng):
        """``resize_mode``: 'force' to (height, width); 'shrink' only when larger, 'fit'
        always, keeping the aspect ratio."""
        if self._resize_mode == 'force':
            return self._resized(pixels, height, width, rng)
        rows, cols = pixels.shape[:2]
        if self._resize_mode == 'shrink' and rows <= height and cols <= width:
            return pixels
        ratio = min(_F32(height) / _F32(rows), _F32(width) / _F32(cols))
        return self._resized(pixels, max(1, int(ratio * _F32(rows))),
                             max(1, int(ratio * _F32(cols))), rng)
