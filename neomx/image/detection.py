"""``mx.image.detection`` (``mx.image.det``): augmenters that move bounding boxes with the
pixels, and ``ImageDetIter``.

A detection label is a float array of objects, one row each: ``[class_id, xmin, ymin, xmax,
ymax, extra...]`` with coordinates as fractions of the image's width and height. A raw label
(from a list or a record) is ``[header_width, object_width, header extras..., objects...]``.
Random choices use Python's ``random`` module, as MXNet draws them.
"""
import json
import logging
import math
import warnings

import numpy as np

from .. import ndarray as nd
from ..base import numeric_types
from ..ndarray.ndarray import NDArray
from ..util import is_np_array  # noqa: F401  (MXNet's module exposes it)
from ._ops import copyMakeBorder, fixed_crop
from .augment import (Augmenter, CastAug, ColorJitterAug, ColorNormalizeAug, ForceResizeAug,
                      HueJitterAug, LightingAug, RandomGrayAug, RandomOrderAug, ResizeAug,
                      imagenet_statistic, IMAGENET_EIGVAL, IMAGENET_EIGVEC)
from .iterator import ImageIter
from .._sample_streams import nprandom, pyrandom

__all__ = ['DetAugmenter', 'DetBorrowAug', 'DetRandomSelectAug', 'DetHorizontalFlipAug',
           'DetRandomCropAug', 'DetRandomPadAug', 'CreateMultiRandCropAugmenter',
           'CreateDetAugmenter', 'ImageDetIter',
           # MXNet's module re-exports these classification augmenters and helpers.
           'Augmenter', 'CastAug', 'ColorJitterAug', 'ColorNormalizeAug', 'ForceResizeAug',
           'HueJitterAug', 'LightingAug', 'RandomGrayAug', 'RandomOrderAug', 'ResizeAug',
           'ImageIter', 'fixed_crop', 'numeric_types', 'is_np_array']


class DetAugmenter:
    """Base detection augmenter: ``aug(src, label) -> (src, label)``.

    Keeps its constructor arguments (arrays as lists) for :meth:`dumps`.

    Examples
    --------
    >>> class Identity(mx.image.DetAugmenter):
    ...     def __call__(self, src, label):
    ...         return src, label
    >>> Identity(p=0.5).dumps()
    '["identity", {"p": 0.5}]'
    """

    def __init__(self, **kwargs):
        self._kwargs = {key: _jsonable(value) for key, value in kwargs.items()}

    def dumps(self):
        """JSON string ``[class name in lower case, constructor arguments]``."""
        return json.dumps([type(self).__name__.lower(), self._kwargs])

    def __call__(self, src, label):
        raise NotImplementedError("Must override implementation.")


def _jsonable(value):
    if isinstance(value, NDArray):
        value = value.asnumpy()
    return value.tolist() if isinstance(value, np.ndarray) else value


class DetBorrowAug(DetAugmenter):
    """Apply a classification :class:`~neomx.image.Augmenter` to the image; the label is kept
    (for augmenters that do not move pixels, or resize the whole image).

    Examples
    --------
    >>> aug = mx.image.DetBorrowAug(mx.image.CastAug())
    >>> img, label = aug(mx.nd.ones((2, 2, 3), dtype='uint8'), np.zeros((1, 5)))
    >>> img.dtype
    <class 'numpy.float32'>
    """

    def __init__(self, augmenter):
        if not isinstance(augmenter, Augmenter):
            raise TypeError('Borrowing from invalid Augmenter')
        super().__init__(augmenter=augmenter.dumps())
        self.augmenter = augmenter

    def dumps(self):
        """``[name, the borrowed augmenter's dumps()]`` (a list, as in MXNet)."""
        return [type(self).__name__.lower(), self.augmenter.dumps()]

    def __call__(self, src, label):
        return self.augmenter(src), label


class DetRandomSelectAug(DetAugmenter):
    """Apply one of ``aug_list`` picked at random, or, with probability ``skip_prob``, none.

    Examples
    --------
    >>> flip = mx.image.DetHorizontalFlipAug(1.0)
    >>> aug = mx.image.DetRandomSelectAug([flip], skip_prob=0)
    >>> label = np.array([[0, 0.1, 0.2, 0.3, 0.4]])
    >>> aug(mx.nd.ones((2, 2, 3)), label)[1].round(2).tolist()
    [[0.0, 0.7, 0.2, 0.9, 0.4]]
    """

    def __init__(self, aug_list, skip_prob=0):
        super().__init__(skip_prob=skip_prob)
        if not isinstance(aug_list, (list, tuple)):
            aug_list = [aug_list]
        if any(not isinstance(aug, DetAugmenter) for aug in aug_list):
            raise ValueError('Allow DetAugmenter in list only')
        self.aug_list = aug_list
        self.skip_prob = skip_prob if aug_list else 1

    def dumps(self):
        """``[name, [each augmenter's dumps()]]``."""
        return [type(self).__name__.lower(), [aug.dumps() for aug in self.aug_list]]

    def __call__(self, src, label):
        if pyrandom.random() < self.skip_prob:
            return src, label
        pyrandom.shuffle(self.aug_list)
        return self.aug_list[0](src, label)


class DetHorizontalFlipAug(DetAugmenter):
    """With probability ``p``, mirror the image left-right and the boxes with it (the label
    is changed in place).

    Examples
    --------
    >>> label = np.array([[1, 0.0, 0.0, 0.25, 0.5]])
    >>> img, label = mx.image.DetHorizontalFlipAug(1.0)(mx.nd.ones((4, 4, 3)), label)
    >>> label.tolist()
    [[1.0, 0.75, 0.0, 1.0, 0.5]]
    """

    def __init__(self, p):
        super().__init__(p=p)
        self.p = p

    def __call__(self, src, label):
        if pyrandom.random() < self.p:
            src = nd.flip(src, axis=1)
            self._flip_label(label)
        return src, label

    @staticmethod
    def _flip_label(label):
        left = 1.0 - label[:, 3]
        label[:, 3] = 1.0 - label[:, 1]
        label[:, 1] = left


def _as_range(value, what, owner):
    """A (low, high) pair from a pair or a single number (a fixed value)."""
    if isinstance(value, (tuple, list)):
        return value
    assert isinstance(value, numeric_types)
    logging.info('Using fixed %s: %s in %s', what, value, owner)
    return (value, value)


def _box_areas(boxes):
    """Areas of (xmin, ymin, xmax, ymax...) rows, 0 for empty boxes."""
    return np.maximum(0, boxes[:, 3] - boxes[:, 1]) * np.maximum(0, boxes[:, 2] - boxes[:, 0])


def _box_height(area, ratio):
    return int(round(math.sqrt(area / ratio)))


class DetRandomCropAug(DetAugmenter):
    """Crop a random window that covers enough of the objects; boxes are clipped to it and
    objects left with too little of their area are dropped.

    Parameters
    ----------
    min_object_covered : float, default 0.1
        Every object the window touches must keep more than this fraction of its area.
    aspect_ratio_range : tuple of float, default (0.75, 1.33)
        Range of the window's width / height.
    area_range : tuple of float, default (0.05, 1.0)
        Range of the window's area as a fraction of the image's.
    min_eject_coverage : float, default 0.3
        Objects keeping at most this fraction of their area are removed from the label.
    max_attempts : int, default 50
        Windows tried before the image is left as it is.

    Examples
    --------
    >>> aug = mx.image.DetRandomCropAug(area_range=(0.5, 1.0))
    >>> label = np.array([[0, 0.2, 0.2, 0.8, 0.8]])
    >>> img, out = aug(mx.nd.ones((50, 50, 3)), label)
    >>> out.shape[1], bool(img.shape[0] <= 50)
    (5, True)
    """

    def __init__(self, min_object_covered=0.1, aspect_ratio_range=(0.75, 1.33),
                 area_range=(0.05, 1.0), min_eject_coverage=0.3, max_attempts=50):
        aspect_ratio_range = _as_range(aspect_ratio_range, 'aspect ratio', 'DetRandomCropAug')
        area_range = _as_range(area_range, 'area range', 'DetRandomCropAug')
        super().__init__(min_object_covered=min_object_covered,
                         aspect_ratio_range=aspect_ratio_range, area_range=area_range,
                         min_eject_coverage=min_eject_coverage, max_attempts=max_attempts)
        self.min_object_covered = min_object_covered
        self.min_eject_coverage = min_eject_coverage
        self.max_attempts = max_attempts
        self.aspect_ratio_range = aspect_ratio_range
        self.area_range = area_range
        self.enabled = False
        if area_range[1] <= 0 or area_range[0] > area_range[1]:
            warnings.warn('Skip DetRandomCropAug due to invalid area_range: %s' % (area_range,))
        elif aspect_ratio_range[0] > aspect_ratio_range[1] or aspect_ratio_range[0] <= 0:
            warnings.warn('Skip DetRandomCropAug due to invalid aspect_ratio_range: %s'
                          % (aspect_ratio_range,))
        else:
            self.enabled = True

    def __call__(self, src, label):
        crop = self._random_crop_proposal(label, src.shape[0], src.shape[1])
        if crop:
            x, y, w, h, label = crop
            src = fixed_crop(src, x, y, w, h, None)
        return src, label

    @staticmethod
    def _intersect(boxes, xmin, ymin, xmax, ymax):
        """The boxes clipped to the window; rows that miss it become zeros."""
        out = boxes.copy()
        out[:, 0] = np.maximum(boxes[:, 0], xmin)
        out[:, 1] = np.maximum(boxes[:, 1], ymin)
        out[:, 2] = np.minimum(boxes[:, 2], xmax)
        out[:, 3] = np.minimum(boxes[:, 3], ymax)
        out[(out[:, 0] >= out[:, 2]) | (out[:, 1] >= out[:, 3]), :] = 0
        return out

    def _check_satisfy_constraints(self, label, xmin, ymin, xmax, ymax, width, height):
        """Whether the window keeps more than ``min_object_covered`` of every object it meets."""
        if (xmax - xmin) * (ymax - ymin) < 2:
            return False
        object_areas = _box_areas(label[:, 1:])
        valid = np.where(object_areas * width * height > 2)[0]
        if valid.size < 1:
            return False
        window = (float(xmin) / width, float(ymin) / height, float(xmax) / width,
                  float(ymax) / height)
        kept = _box_areas(self._intersect(label[valid, 1:], *window)) / object_areas[valid]
        kept = kept[kept > 0]
        return kept.size > 0 and np.amin(kept) > self.min_object_covered

    def _update_labels(self, label, crop_box, height, width):
        """Boxes in the window's coordinates, clipped; None when no object stays."""
        xmin, ymin = float(crop_box[0]) / width, float(crop_box[1]) / height
        w, h = float(crop_box[2]) / width, float(crop_box[3]) / height
        out = label.copy()
        out[:, (1, 3)] = (out[:, (1, 3)] - xmin) / w
        out[:, (2, 4)] = (out[:, (2, 4)] - ymin) / h
        out[:, 1:5] = np.clip(out[:, 1:5], 0, 1)
        coverage = _box_areas(out[:, 1:]) * w * h / _box_areas(label[:, 1:])
        valid = (out[:, 3] > out[:, 1]) & (out[:, 4] > out[:, 2]) & \
            (coverage > self.min_eject_coverage)
        if not valid.any():
            return None
        return out[valid]

    def _random_crop_proposal(self, label, height, width):
        """(x, y, w, h, new label) of an acceptable window, or () after ``max_attempts``."""
        if not self.enabled or height <= 0 or width <= 0:
            return ()
        min_area = self.area_range[0] * height * width
        max_area = self.area_range[1] * height * width
        for _ in range(self.max_attempts):
            ratio = pyrandom.uniform(*self.aspect_ratio_range)
            if ratio <= 0:
                continue
            h = _box_height(min_area, ratio)
            max_h = _box_height(max_area, ratio)
            if round(max_h * ratio) > width:
                max_h = int((width + 0.4999999) / ratio)  # largest with round(h * ratio) <= width
            max_h = min(max_h, height)
            h = min(h, max_h)
            if h < max_h:
                h = pyrandom.randint(h, max_h)
            w = int(round(h * ratio))
            assert w <= width
            # Step h once when rounding left the area outside the range.
            if w * h < min_area:
                h += 1
                w = int(round(h * ratio))
            if w * h > max_area:
                h -= 1
                w = int(round(h * ratio))
            if not (min_area <= w * h <= max_area and 0 <= w <= width and 0 <= h <= height):
                continue
            y = pyrandom.randint(0, max(0, height - h))
            x = pyrandom.randint(0, max(0, width - w))
            if self._check_satisfy_constraints(label, x, y, x + w, y + h, width, height):
                new_label = self._update_labels(label, (x, y, w, h), height, width)
                if new_label is not None:
                    return (x, y, w, h, new_label)
        return ()


class DetRandomPadAug(DetAugmenter):
    """Place the image at a random spot of a larger canvas filled with ``pad_val``; the boxes
    shrink with it.

    Parameters
    ----------
    aspect_ratio_range : tuple of float, default (0.75, 1.33)
        Range of the canvas's width / height.
    area_range : tuple of float, default (1.0, 3.0)
        Range of the canvas's area as a multiple of the image's.
    max_attempts : int, default 50
    pad_val : float or tuple of float, default (128, 128, 128)

    Examples
    --------
    >>> import random
    >>> random.seed(0)      # the augmenters draw from Python's random, as MXNet's
    >>> aug = mx.image.DetRandomPadAug(area_range=(2.0, 3.0))
    >>> img, out = aug(mx.nd.ones((20, 20, 3)), np.array([[0, 0.0, 0.0, 1.0, 1.0]]))
    >>> bool(img.shape[0] > 20 and out[0, 3] < 1)
    True
    """

    def __init__(self, aspect_ratio_range=(0.75, 1.33), area_range=(1.0, 3.0),
                 max_attempts=50, pad_val=(128, 128, 128)):
        if not isinstance(pad_val, (list, tuple)):
            assert isinstance(pad_val, numeric_types)
        aspect_ratio_range = _as_range(aspect_ratio_range, 'aspect ratio', 'DetRandomPadAug')
        area_range = _as_range(area_range, 'area range', 'DetRandomPadAug')
        super().__init__(aspect_ratio_range=aspect_ratio_range, area_range=area_range,
                         max_attempts=max_attempts, pad_val=pad_val)
        self.pad_val = pad_val
        self.aspect_ratio_range = aspect_ratio_range
        self.area_range = area_range
        self.max_attempts = max_attempts
        self.enabled = False
        if area_range[1] <= 1.0 or area_range[0] > area_range[1]:
            warnings.warn('Skip DetRandomPadAug due to invalid parameters: %s' % (area_range,))
        elif aspect_ratio_range[0] <= 0 or aspect_ratio_range[0] > aspect_ratio_range[1]:
            warnings.warn('Skip DetRandomPadAug due to invalid aspect_ratio_range: %s'
                          % (aspect_ratio_range,))
        else:
            self.enabled = True

    def __call__(self, src, label):
        height, width, _ = src.shape
        pad = self._random_pad_proposal(label, height, width)
        if pad:
            x, y, w, h, label = pad
            values = self.pad_val if isinstance(self.pad_val, (list, tuple)) else (self.pad_val,)
            src = copyMakeBorder(src, y, h - y - height, x, w - x - width, 16, values=values)
        return src, label

    @staticmethod
    def _update_labels(label, pad_box, height, width):
        out = label.copy()
        out[:, (1, 3)] = (out[:, (1, 3)] * width + pad_box[0]) / pad_box[2]
        out[:, (2, 4)] = (out[:, (2, 4)] * height + pad_box[1]) / pad_box[3]
        return out

    def _random_pad_proposal(self, label, height, width):
        """(x, y, w, h, new label) of a canvas, or () after ``max_attempts``."""
        if not self.enabled or height <= 0 or width <= 0:
            return ()
        min_area = self.area_range[0] * height * width
        max_area = self.area_range[1] * height * width
        for _ in range(self.max_attempts):
            ratio = pyrandom.uniform(*self.aspect_ratio_range)
            if ratio <= 0:
                continue
            h = _box_height(min_area, ratio)
            max_h = _box_height(max_area, ratio)
            if round(h * ratio) < width:
                h = int((width + 0.499999) / ratio)
            h = min(max(h, height), max_h)
            if h < max_h:
                h = pyrandom.randint(h, max_h)
            w = int(round(h * ratio))
            if (h - height) < 2 or (w - width) < 2:
                continue  # a marginal border does not help
            y = pyrandom.randint(0, max(0, h - height))
            x = pyrandom.randint(0, max(0, w - width))
            return (x, y, w, h, self._update_labels(label, (x, y, w, h), height, width))
        return ()


def _aligned(params):
    """Lists of equal length from values and lists (a single value is repeated)."""
    lists = [p if isinstance(p, list) else [p] for p in params]
    count = max(len(p) for p in lists)
    for p in lists:
        assert len(p) in (1, count), 'parameter lists must have the same length'
    return [p * count if len(p) == 1 else p for p in lists]


def CreateMultiRandCropAugmenter(min_object_covered=0.1, aspect_ratio_range=(0.75, 1.33),
                                 area_range=(0.05, 1.0), min_eject_coverage=0.3,
                                 max_attempts=50, skip_prob=0):
    """A :class:`DetRandomSelectAug` over one :class:`DetRandomCropAug` per setting.

    Each argument is a value or a list of values (lists have one length; single values are
    shared by every crop augmenter).

    Examples
    --------
    >>> aug = mx.image.CreateMultiRandCropAugmenter(min_object_covered=[0.1, 0.5])
    >>> len(aug.aug_list)
    2
    """
    settings = _aligned([min_object_covered, aspect_ratio_range, area_range,
                         min_eject_coverage, max_attempts])
    crops = [DetRandomCropAug(min_object_covered=moc, aspect_ratio_range=arr, area_range=ar,
                              min_eject_coverage=mec, max_attempts=ma)
             for moc, arr, ar, mec, ma in zip(*settings)]
    return DetRandomSelectAug(crops, skip_prob=skip_prob)


def CreateDetAugmenter(data_shape, resize=0, rand_crop=0, rand_pad=0, rand_gray=0,
                       rand_mirror=False, mean=None, std=None, brightness=0, contrast=0,
                       saturation=0, pca_noise=0, hue=0, inter_method=2, min_object_covered=0.1,
                       aspect_ratio_range=(0.75, 1.33), area_range=(0.05, 3.0),
                       min_eject_coverage=0.3, max_attempts=50, pad_val=(127, 127, 127)):
    """The standard detection augmenter list for images of ``data_shape`` (C, H, W).

    Order: shorter-edge resize, random crop (probability ``rand_crop``), mirror, random pad
    (probability ``rand_pad``), force resize to (W, H), cast to float32, colour and hue
    jitter, PCA lighting, random gray, normalisation (``mean``/``std`` True: ImageNet's).

    Returns
    -------
    list of DetAugmenter

    Examples
    --------
    >>> augs = mx.image.CreateDetAugmenter((3, 300, 300), rand_crop=0.5, rand_mirror=True)
    >>> [type(a).__name__ for a in augs]
    ['DetRandomSelectAug', 'DetHorizontalFlipAug', 'DetBorrowAug', 'DetBorrowAug']
    """
    augs = []
    if resize > 0:
        augs.append(DetBorrowAug(ResizeAug(resize, inter_method)))
    if rand_crop > 0:
        augs.append(CreateMultiRandCropAugmenter(min_object_covered, aspect_ratio_range,
                                                 area_range, min_eject_coverage, max_attempts,
                                                 skip_prob=1 - rand_crop))
    if rand_mirror > 0:
        augs.append(DetHorizontalFlipAug(0.5))
    # Padding comes as late as possible: the fewer pixels before it, the cheaper.
    if rand_pad > 0:
        pad = DetRandomPadAug(aspect_ratio_range, (1.0, area_range[1]), max_attempts, pad_val)
        augs.append(DetRandomSelectAug([pad], 1 - rand_pad))
    augs.append(DetBorrowAug(ForceResizeAug((data_shape[2], data_shape[1]), inter_method)))
    augs.append(DetBorrowAug(CastAug()))
    if brightness or contrast or saturation:
        augs.append(DetBorrowAug(ColorJitterAug(brightness, contrast, saturation)))
    if hue:
        augs.append(DetBorrowAug(HueJitterAug(hue)))
    if pca_noise > 0:
        augs.append(DetBorrowAug(LightingAug(pca_noise, IMAGENET_EIGVAL, IMAGENET_EIGVEC)))
    if rand_gray > 0:
        augs.append(DetBorrowAug(RandomGrayAug(rand_gray)))
    mean = imagenet_statistic(mean, 'mean')
    std = imagenet_statistic(std, 'std')
    if mean is not None or std is not None:
        augs.append(DetBorrowAug(ColorNormalizeAug(mean, std)))
    return augs


class ImageDetIter(ImageIter):
    """:class:`ImageIter` for object detection: labels are (batch_size, max objects,
    object width) arrays, padded with -1 rows, and augmenters move the boxes.

    Parameters are :class:`ImageIter`'s (``label_name`` defaults to ``'label'``,
    ``preprocess_threads`` as there); ``aug_list``
    defaults to ``CreateDetAugmenter(data_shape, **kwargs)``. A raw label is
    ``[header_width, object_width, ..., objects...]``. Images whose label has no valid box
    after augmentation are skipped.

    Shape
    -----
    data: (batch_size, 3, H, W) float32; label: (batch_size, max objects, object width).

    Examples
    --------
    >>> import os, tempfile
    >>> folder = tempfile.mkdtemp()
    >>> path = os.path.join(folder, 'a.png')
    >>> with open(path, 'wb') as f:
    ...     _ = f.write(mx.recordio.unpack(mx.recordio.pack_img(
    ...         mx.recordio.IRHeader(0, 0, 0, 0), np.zeros((8, 8, 3), np.uint8), img_fmt='.png'))[1])
    >>> it = mx.image.ImageDetIter(1, (3, 4, 4), imglist=[[2, 5, 1, 0.1, 0.1, 0.9, 0.9, path]])
    >>> batch = it.next()
    >>> batch.data[0].shape, batch.label[0].shape
    ((1, 3, 4, 4), (1, 1, 5))
    """

    def __init__(self, batch_size, data_shape, path_imgrec=None, path_imglist=None,
                 path_root=None, path_imgidx=None, shuffle=False, part_index=0, num_parts=1,
                 aug_list=None, imglist=None, data_name='data', label_name='label',
                 last_batch_handle='pad', **kwargs):
        super().__init__(batch_size=batch_size, data_shape=data_shape, path_imgrec=path_imgrec,
                         path_imglist=path_imglist, path_root=path_root,
                         path_imgidx=path_imgidx, shuffle=shuffle, part_index=part_index,
                         num_parts=num_parts, aug_list=[], imglist=imglist,
                         data_name=data_name, label_name=label_name,
                         last_batch_handle=last_batch_handle,
                         preprocess_threads=kwargs.pop('preprocess_threads', None))
        self.auglist = CreateDetAugmenter(data_shape, **kwargs) if aug_list is None else aug_list
        self.label_shape = self._estimate_label_shape()
        self.provide_label = [(label_name, (self.batch_size,) + self.label_shape)]

    @staticmethod
    def _check_valid_label(label):
        if len(label.shape) != 2 or label.shape[1] < 5:
            raise RuntimeError("Label with shape (1+, 5+) required, %s received." % str(label))
        valid = (label[:, 0] >= 0) & (label[:, 3] > label[:, 1]) & (label[:, 4] > label[:, 2])
        if not valid.any():
            raise RuntimeError('Invalid label occurs.')

    def _estimate_label_shape(self):
        """(most objects in one image, object width), over one pass of the labels."""
        max_count, width = 0, None
        self.reset()
        try:
            while True:
                label = self._parse_label(self.next_sample()[0])
                max_count, width = max(max_count, label.shape[0]), label.shape[1]
        except StopIteration:
            pass
        self.reset()
        return (max_count, width)

    @staticmethod
    def _parse_label(label):
        """The (objects, object width) array of a raw label, without empty boxes."""
        if isinstance(label, NDArray):
            label = label.asnumpy()
        raw = np.asarray(label).ravel()
        if raw.size < 7:
            raise RuntimeError("Label shape is invalid: " + str(raw.shape))
        header_width, obj_width = int(raw[0]), int(raw[1])
        if (raw.size - header_width) % obj_width != 0:
            raise RuntimeError("Label shape %s inconsistent with annotation width %d."
                               % (str(raw.shape), obj_width))
        out = np.reshape(raw[header_width:], (-1, obj_width))
        valid = (out[:, 3] > out[:, 1]) & (out[:, 4] > out[:, 2])
        if not valid.any():
            raise RuntimeError('Encounter sample with no valid label.')
        return out[valid]

    def reshape(self, data_shape=None, label_shape=None):
        """Change the data shape (C, H, W) and/or the label shape (objects, width)."""
        if data_shape is not None:
            self.check_data_shape(data_shape)
            self.provide_data = [(self.provide_data[0][0], (self.batch_size,) + tuple(data_shape))]
            self.data_shape = data_shape
        if label_shape is not None:
            self.check_label_shape(label_shape)
            self.provide_label = [(self.provide_label[0][0],
                                   (self.batch_size,) + tuple(label_shape))]
            self.label_shape = label_shape

    def check_label_shape(self, label_shape):
        """A new label shape may only add object rows, never change the object width."""
        if len(label_shape) != 2:
            raise ValueError('label_shape should have length 2')
        if label_shape[0] < self.label_shape[0]:
            raise ValueError('Attempts to reduce label count from %d to %d, not allowed.'
                             % (self.label_shape[0], label_shape[0]))
        if label_shape[1] != self.provide_label[0][1][2]:
            raise ValueError('label_shape object width inconsistent: %d vs %d.'
                             % (self.provide_label[0][1][2], label_shape[1]))

    def _detected(self, sample):
        """(augmented CHW image, label) of a (label, encoded, position, seed) sample, or None
        for an image or label that is not valid (skipped, as MXNet skips it)."""
        data = self._decode_at(sample[1], sample[2])
        try:
            self.check_valid_image([data])
            label = self._parse_label(sample[0])
            data, label = self.augmentation_transform(data, label)
            self._check_valid_label(label)
        except RuntimeError as err:
            logging.debug('Invalid image, skipping:  %s', str(err))
            return None
        return self.postprocess_data(data), label

    def _put(self, batch_data, batch_label, i, data, label):
        batch_data[i] = data
        rows = label.shape[0]
        batch_label[i][0:rows] = nd.array(label)
        if rows < batch_label[i].shape[0]:
            batch_label[i][rows:] = -1

    def _batchify_on_threads(self, batch_data, batch_label, start):
        i = start
        while i < self.batch_size:
            wanted = self.batch_size - i
            try:
                samples = self._read_samples(wanted)
            except StopIteration:
                if not i:
                    raise
                break
            for result in self._map_samples(self._detected, samples):
                if result is not None:
                    self._put(batch_data, batch_label, i, *result)
                    i += 1
            if len(samples) < wanted:       # the data ended
                break
        return i

    def _batchify(self, batch_data, batch_label, start=0):
        if self._threads is not None:
            return self._batchify_on_threads(batch_data, batch_label, start)
        i = start
        try:
            while i < self.batch_size:
                raw_label, encoded = self.next_sample()
                data = self.imdecode(encoded)
                try:
                    self.check_valid_image([data])
                    label = self._parse_label(raw_label)
                    data, label = self.augmentation_transform(data, label)
                    self._check_valid_label(label)
                except RuntimeError as err:
                    logging.debug('Invalid image, skipping:  %s', str(err))
                    continue
                self._put(batch_data, batch_label, i, self.postprocess_data(data), label)
                i += 1
        except StopIteration:
            if not i:
                raise
        return i

    def _new_label_batch(self):
        labels = nd.empty(self.provide_label[0][1])
        labels[:] = -1
        return labels

    def augmentation_transform(self, data, label):  # pylint: disable=arguments-differ
        """Apply the detection augmenters in order to (image, label)."""
        for aug in self.auglist:
            data, label = aug(data, label)
        return data, label

    def draw_next(self, color=None, thickness=2, mean=None, std=None, clip=True,
                  waitKey=None, window_name='draw_next', id2labels=None):
        """Yield the next images (uint8, HWC, BGR as OpenCV's) with their boxes drawn
        (needs OpenCV; ``waitKey`` also shows them in a window)."""
        from .._image_decode import opencv  # pylint: disable=import-outside-toplevel
        cv2 = opencv()
        if cv2 is None:
            warnings.warn('Unable to import cv2, skip drawing')
            return
        std, mean = imagenet_statistic(std, 'std'), imagenet_statistic(mean, 'mean')
        count = 0
        while True:
            try:
                raw_label, encoded = self.next_sample()
            except StopIteration:
                return
            data = self.imdecode(encoded)
            try:
                self.check_valid_image([data])
                label = self._parse_label(raw_label)
            except RuntimeError as err:
                logging.debug('Invalid image, skipping:  %s', str(err))
                continue
            count += 1
            data, label = self.augmentation_transform(data, label)
            image = data.asnumpy()
            if std is not None:
                image = image * _numpy(std)
            if mean is not None:
                image = image + _numpy(mean)
            image = image[:, :, ::-1]
            if clip:
                image = np.clip(image, 0, 255)
            image = np.ascontiguousarray(image.astype(np.uint8))
            _draw_boxes(cv2, image, label, color[::-1] if color else None, thickness, id2labels)
            if waitKey is not None:
                cv2.imshow(window_name, image)
                cv2.waitKey(waitKey)
            yield image

    def sync_label_shape(self, it, verbose=False):
        """Give this iterator and ``it`` (another ImageDetIter) the same, larger label shape.

        Returns
        -------
        ImageDetIter
            ``it``, reshaped.
        """
        assert isinstance(it, ImageDetIter), 'Synchronize with invalid iterator.'
        mine, theirs = self.label_shape, it.label_shape
        assert mine[1] == theirs[1], "object width mismatch."
        max_count = max(mine[0], theirs[0])
        if max_count > mine[0]:
            self.reshape(None, (max_count, mine[1]))
        if max_count > theirs[0]:
            it.reshape(None, (max_count, theirs[1]))
        if verbose and max_count > min(mine[0], theirs[0]):
            logging.info('Resized label_shape to (%d, %d).', max_count, mine[1])
        return it


def _numpy(value):
    return value.asnumpy() if isinstance(value, NDArray) else np.asarray(value)


def _draw_boxes(cv2, image, label, color, thickness, id2labels):
    height, width, _ = image.shape
    for row in label:
        x1 = int(row[1] * width)
        if x1 < 0:
            continue
        y1, x2, y2 = int(row[2] * height), int(row[3] * width), int(row[4] * height)
        box_color = color if color else tuple(float(c) for c in nprandom.rand(3) * 255)
        cv2.rectangle(image, (x1, y1), (x2, y2), box_color, thickness)
        if id2labels is not None and int(row[0]) in id2labels:
            text = '{:s}'.format(id2labels[int(row[0])])
            text_height = cv2.getTextSize(text, cv2.FONT_HERSHEY_SIMPLEX, 0.5, 2)[0][1]
            cv2.putText(image, text, (x1 + 5, y1 + text_height + 5), cv2.FONT_HERSHEY_SIMPLEX,
                        0.5, (255, 255, 255), 2)
