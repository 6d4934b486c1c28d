"""``mx.io.ImageDetRecordIter``: batches of images and padded detection labels from a ``.rec``
file of detection records.

A record's label is the raw detection label ``[header_width, object_width, header extras...,
objects...]`` (objects ``[class, xmin, ymin, xmax, ymax, ...]`` in fractions of the image).
The output label of each image is, as MXNet's: ``[3, height, width, raw length]``, the raw
label, then ``label_pad_value`` up to ``label_pad_width`` (by default the longest raw label of
the file). Images are resized to ``data_shape`` (``resize_mode='force'``), mirrored with
probability ``rand_mirror_prob`` (boxes too), and normalised.
"""
import numpy as np

from .. import recordio
from ..base import MXNetError
from .image_record_iter import ImageRecordIter, check_options

__all__ = ['ImageDetRecordIter']

# MXNet's detection augmentations neomx does not implement, with the values that switch them off.
_DET_UNSUPPORTED = {
    'path_imglist': '', 'mean_img': '', 'rand_crop_prob': 0, 'min_crop_scales': (0,),
    'max_crop_scales': (1,), 'min_crop_aspect_ratios': (1,), 'max_crop_aspect_ratios': (1,),
    'min_crop_overlaps': (0,), 'max_crop_overlaps': (1,), 'min_crop_sample_coverages': (0,),
    'max_crop_sample_coverages': (1,), 'min_crop_object_coverages': (0,),
    'max_crop_object_coverages': (1,), 'num_crop_sampler': 1, 'crop_emit_mode': 'center',
    'emit_overlap_thresh': 0.3, 'max_crop_trials': (25,), 'rand_pad_prob': 0,
    'max_pad_scale': 1, 'max_random_hue': 0, 'random_hue_prob': 0, 'max_random_saturation': 0,
    'random_saturation_prob': 0, 'max_random_illumination': 0, 'random_illumination_prob': 0,
    'max_random_contrast': 0, 'random_contrast_prob': 0, 'fill_value': 127,
    'resize_mode': 'force', 'mean_a': 0, 'std_a': 0,
}
# The fields ahead of the raw label: their count after this one, height, width, raw length.
_PREFIX = 4


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


class ImageDetRecordIter(ImageRecordIter):
    """Iterate over detection RecordIO files: (N, C, H, W) images and (N, 4 + pad width)
    labels (see the module docstring). Keyword-only arguments, as in MXNet.

    Parameters
    ----------
    path_imgrec, data_shape, batch_size, path_imgidx, shuffle, seed, round_batch, resize,
    mean_r, mean_g, mean_b, scale, inter_method, dtype, num_parts, part_index,
    preprocess_threads, prefetch_buffer : as :class:`ImageRecordIter`.
    std_r, std_g, std_b : float, default 0
        0 means no division (MXNet's default here).
    label_width : int, default -1
        Accepted for compatibility (labels have variable length).
    label_pad_width : int, default 0
        Raw label length after padding; 0: the longest label of the file.
    label_pad_value : float, default -1
    rand_mirror_prob : float, default 0
        Probability to mirror an image and its boxes.

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
    """

    def __init__(self, *, path_imgrec, data_shape, batch_size, label_width=-1,
                 label_pad_width=0, label_pad_value=-1., rand_mirror_prob=0., std_r=0.,
                 std_g=0., std_b=0., label_name='softmax_label', **kwargs):
        options = {name: kwargs.pop(name) for name in list(kwargs) if name in _DET_UNSUPPORTED}
        check_options(options, _DET_UNSUPPORTED, 'ImageDetRecordIter')
        self._pad_value = np.float32(label_pad_value)
        self._mirror_prob = rand_mirror_prob
        longest = _longest_label(path_imgrec)
        if label_pad_width and label_pad_width < longest:
            raise MXNetError('ImageDetRecordIter: label_pad_width %d is shorter than the longest '
                             'label (%d) of %s' % (label_pad_width, longest, path_imgrec))
        self._label_length = label_pad_width or longest
        super().__init__(path_imgrec=path_imgrec, data_shape=data_shape, batch_size=batch_size,
                         std_r=std_r or 1., std_g=std_g or 1., std_b=std_b or 1.,
                         label_name=label_name, label_width=_PREFIX + self._label_length,
                         **kwargs)

    def _allocate(self):
        data, label = super()._allocate()
        label[:] = self._pad_value
        return data, label

    def _transform(self, header, encoded, record, rng, out):
        _, height, width = self.data_shape
        raw = np.array(header.label, np.float32).ravel()
        pixels = self._decode(encoded, record)
        pixels = self._resized(pixels, height, width, rng)
        if self._mirror_prob > 0 and rng.random() < self._mirror_prob:
            pixels = pixels[:, ::-1]
            raw = _mirror_boxes(raw)
        label = np.full(_PREFIX + self._label_length, self._pad_value, np.float32)
        label[:_PREFIX] = (_PREFIX - 1, height, width, raw.size)
        label[_PREFIX:_PREFIX + raw.size] = raw
        self._write(pixels, out, rng)
        return label


def _mirror_boxes(raw):
    """The raw label with every object's xmin, xmax mirrored (1 - x, swapped)."""
    header_width, object_width = int(raw[0]), int(raw[1])
    out = raw.copy()
    objects = out[header_width:].reshape(-1, object_width)
    objects[:, [1, 3]] = 1.0 - objects[:, [3, 1]]
    return out
