"""``ImageIter``: batches of augmented images read from an image list and a root folder."""
import concurrent.futures
import os
import random
import numbers
import weakref

from .. import ndarray as nd, recordio
from .._device_images import DeviceImageDecoder, image_device
from .._sample_streams import sample_streams
from ..context import Context
from ..io import DataBatch, DataIter
from ..ndarray.ndarray import NDArray, wrap_tensor
from .augment import CreateAugmenter, SequentialAug
from ._ops import imdecode

__all__ = ['ImageIter']

_LABEL_DTYPES = ('int32', 'float32', 'int64', 'float64')


def _read_lst(path, dtype):
    """Parse an .lst file (index, labels..., relative path; tab separated) into (keys, {key: (label, path)})."""
    entries = {}
    keys = []
    with open(path) as lines:
        for line in lines:
            fields = line.strip().split('\t')
            key = int(fields[0])
            entries[key] = (nd.array([float(v) for v in fields[1:-1]], dtype=dtype), fields[-1])
            keys.append(key)
    return keys, entries


def _read_imglist(imglist, dtype):
    """Index a list of ``[label or labels..., path]`` items under the keys '1', '2', ..."""
    entries = {}
    for index, item in enumerate(imglist, start=1):
        if len(item) > 2:
            label = item[:-1]
        elif isinstance(item[0], numbers.Number):
            label = [item[0]]
        else:
            label = item[0]
        entries[str(index)] = (nd.array(label, dtype=dtype), item[-1])
    return list(entries), entries


def _parameters_to(augmenters, ctx):
    """Copy the NDArray attributes of ``augmenters`` (and of those they hold) to ``ctx``."""
    for aug in augmenters:
        if isinstance(aug, SequentialAug):
            _parameters_to(aug.ts, ctx)
        for name, value in list(vars(aug).items()):
            if isinstance(value, NDArray):
                setattr(aug, name, value.as_in_context(ctx))


class ImageIter(DataIter):
    """Iterate over images listed in ``path_imglist`` or ``imglist``, augmented and batched.

    Parameters
    ----------
    batch_size : int
        Images per batch.
    data_shape : tuple of int
        (3, H, W) of every image after augmentation.
    label_width : int, default 1
        Labels per image; labels have shape (batch_size,) or (batch_size, label_width).
    path_imgrec, path_imgidx : str, optional
        RecordIO input (labels from the record headers unless a list is given too); the
        index file allows random access, needed for ``shuffle`` and ``num_parts``.
    path_imglist : str, optional
        .lst file: ``index \\t label(s) \\t relative path`` per line.
    path_root : str, optional
        Folder the image paths are relative to.
    shuffle : bool, default False
        Shuffle the image order at every reset (Python's ``random``).
    part_index, num_parts : int
        Keep only part ``part_index`` of ``num_parts`` equal parts (the rest is dropped).
    aug_list : list of Augmenter, optional
        Augmenters; by default ``CreateAugmenter(data_shape, **kwargs)``.
    imglist : list, optional
        ``[label or labels..., path]`` items, instead of ``path_imglist``.
    data_name, label_name : str
        Names in ``provide_data`` / ``provide_label``.
    dtype : str, default 'float32'
        Label dtype: int32, float32, int64 or float64.
    last_batch_handle : {'pad', 'discard', 'roll_over'}
        The incomplete last batch is filled from the start, dropped, or completed from the next epoch.
    preprocess_threads : int, optional (keyword; a neomx addition)
        Decode and augment each batch's images on this many threads (0: on the caller's
        thread). Each image then draws its random augmentation from its own streams, seeded
        in order from Python's ``random``: the batches are the same for any number of threads
        (but not those of the default, where the augmenters share the global streams, as in
        MXNet).
    ctx : Context, optional (keyword; a neomx addition)
        Decode each batch's JPEGs on this context's device (on a GPU with nvJPEG, through
        torchvision: the ``vision`` extra; other formats on the CPU) and run the augmenters
        on the decoded images there (their NDArray parameters, such as
        ``ColorNormalizeAug``'s mean, are copied to ``ctx``); the batches are delivered on
        ``ctx``. Each image draws from its own streams, as with ``preprocess_threads``.
        nvJPEG's pixels differ from libjpeg-turbo's by a few levels.

    Each batch holds data of shape (batch_size, 3, H, W) float32 and the labels; ``pad`` counts
    the samples repeated to fill the last batch.

    Example
    -------
    >>> import os, tempfile
    >>> folder = tempfile.TemporaryDirectory()
    >>> rec = os.path.join(folder.name, 'imgs.rec')
    >>> writer = mx.recordio.MXRecordIO(rec, 'w')
    >>> for label in range(3):
    ...     img = np.full((8, 8, 3), 40 * label, np.uint8)
    ...     writer.write(mx.recordio.pack_img(mx.recordio.IRHeader(0, label, label, 0), img, img_fmt='.png'))
    >>> writer.close()
    >>> it = mx.image.ImageIter(2, (3, 4, 4), path_imgrec=rec, resize=4)
    >>> batch = it.next()
    >>> batch.data[0].shape
    (2, 3, 4, 4)
    >>> batch.label[0]
    <BLANKLINE>
    [0. 1.]
    <NDArray 2 @cpu(0)>
    >>> it.next().pad                   # the last batch is filled from the start
    1
    >>> folder.cleanup()
    """

    def __init__(self, batch_size, data_shape, label_width=1, path_imgrec=None, path_imglist=None,
                 path_root=None, path_imgidx=None, shuffle=False, part_index=0, num_parts=1,
                 aug_list=None, imglist=None, data_name='data', label_name='softmax_label',
                 dtype='float32', last_batch_handle='pad', **kwargs):
        super().__init__(batch_size)
        preprocess_threads = kwargs.pop('preprocess_threads', None)
        ctx = kwargs.pop('ctx', None)
        self._device = image_device(ctx, 'ImageIter')
        self._ctx = ctx if self._device is not None else None
        assert path_imgrec or path_imglist or isinstance(imglist, list)
        assert dtype in _LABEL_DTYPES, dtype + ' label not supported'
        self.imgrec, keys, self.imglist = None, None, None
        if path_imgrec:
            if path_imgidx:
                self.imgrec = recordio.MXIndexedRecordIO(path_imgidx, path_imgrec, 'r')
                keys = list(self.imgrec.keys)
            else:
                self.imgrec = recordio.MXRecordIO(path_imgrec, 'r')
        if path_imglist:
            keys, self.imglist = _read_lst(path_imglist, dtype)
        elif isinstance(imglist, list):
            keys, self.imglist = _read_imglist(imglist, dtype)
        if keys is None and (shuffle or num_parts > 1):
            raise ValueError('ImageIter: shuffle and num_parts need random access: give path_imgidx '
                             'with path_imgrec')
        self.check_data_shape(data_shape)
        self.path_root = path_root
        self.data_shape = data_shape
        self.label_width = label_width
        self.provide_data = [(data_name, (batch_size,) + tuple(data_shape))]
        label_shape = (batch_size, label_width) if label_width > 1 else (batch_size,)
        self.provide_label = [(label_name, label_shape)]
        self.shuffle = shuffle
        if num_parts > 1:
            assert part_index < num_parts
            part = len(keys) // num_parts
            keys = keys[part_index * part:(part_index + 1) * part]
        self.seq = keys                 # None: read the .rec file in order
        self.num_image = None if keys is None else len(keys)
        self.auglist = CreateAugmenter(data_shape, **kwargs) if aug_list is None else aug_list
        if self._device is not None:
            self._decoder = DeviceImageDecoder(self._device, 3)
            _parameters_to(self.auglist, self._ctx)
        self.last_batch_handle = last_batch_handle
        self._threads = None if preprocess_threads is None else max(0, int(preprocess_threads))
        self._pool = None
        self.cur = 0
        self._allow_read = True
        self._clear_cache()
        self.reset()

    def _clear_cache(self):
        self._cache_data = self._cache_label = self._cache_idx = None

    def reset(self):
        """Rewind (keeping a rolled-over partial batch) and reshuffle if asked."""
        if self.shuffle:
            random.shuffle(self.seq)
        if self.last_batch_handle != 'roll_over' or self._cache_data is None:
            self._rewind()

    def hard_reset(self):
        """Rewind and drop any rolled-over partial batch."""
        if self.shuffle:
            random.shuffle(self.seq)
        self._rewind()
        self._clear_cache()

    def _rewind(self):
        self.cur = 0
        self._allow_read = True
        if self.seq is None:
            self.imgrec.reset()

    def next_sample(self):
        """(label NDArray, encoded image bytes) of the next image; StopIteration at the end."""
        if not self._allow_read:
            raise StopIteration
        if self.seq is None:                # a .rec file read in order
            record = self.imgrec.read()
            if record is None:
                if self.last_batch_handle != 'discard':
                    self.imgrec.reset()
                raise StopIteration
            self.cur += 1
            header, encoded = recordio.unpack(record)
            return header.label, encoded
        if self.cur >= self.num_image:
            if self.last_batch_handle != 'discard':
                self.cur = 0
            raise StopIteration
        key = self.seq[self.cur]
        self.cur += 1
        if self.imgrec is not None:
            header, encoded = recordio.unpack(self.imgrec.read_idx(key))
            return (header.label if self.imglist is None else self.imglist[key][0]), encoded
        label, fname = self.imglist[key]
        return label, self.read_image(fname)

    def _read_samples(self, count):
        """Up to ``count`` next (label, encoded, position, seed); seeds from Python's random."""
        samples = []
        try:
            while len(samples) < count:
                label, encoded = self.next_sample()
                samples.append((label, encoded, self.cur - 1, random.getrandbits(63)))
        except StopIteration:
            if not samples:
                raise
        return samples

    def _map_samples(self, function, samples):
        """``function(sample)`` for each sample, each within its own random streams, on the
        thread pool (in order)."""
        def run(sample):
            with sample_streams(sample[3]):
                return function(sample)
        if not self._threads:
            return [run(sample) for sample in samples]
        if self._pool is None:
            self._pool = concurrent.futures.ThreadPoolExecutor(self._threads,
                                                               thread_name_prefix='ImageIter')
            weakref.finalize(self, self._pool.shutdown, wait=False, cancel_futures=True)
        return list(self._pool.map(run, samples))

    def _augmented(self, sample):
        return self.postprocess_data(self.augmentation_transform(
            self._decode_at(sample[1], sample[2])))

    def _batchify(self, batch_data, batch_label, start=0):
        """Fill the batch from index ``start``; the index reached (StopIteration if none read)."""
        if self._device is not None:
            return self._batchify_on_device(batch_data, batch_label, start)
        if self._threads is not None:
            samples = self._read_samples(self.batch_size - start)
            for i, (sample, data) in enumerate(zip(samples, self._map_samples(self._augmented, samples)),
                                               start):
                batch_data[i] = data
                batch_label[i] = sample[0]
            return start + len(samples)
        i = start
        try:
            while i < self.batch_size:
                label, encoded = self.next_sample()
                data = self.imdecode(encoded)
                batch_data[i] = self.postprocess_data(self.augmentation_transform(data))
                batch_label[i] = label
                i += 1
        except StopIteration:
            if not i:
                raise
        return i

    def _batchify_on_device(self, batch_data, batch_label, start):
        """:meth:`_batchify` decoding the images in one call of the device's decoder, then
        augmenting them there (each within its own streams, on the threads if any)."""
        samples = self._read_samples(self.batch_size - start)
        encoded = [sample[1] for sample in samples]
        images = self._decoder.decode(
            encoded, lambda i: self._decode_at(encoded[i], samples[i][2]).asnumpy())
        on_device = [(sample[0], wrap_tensor(image, self._ctx)) + tuple(sample[2:])
                     for sample, image in zip(samples, images)]

        def augment(sample):
            # The arrays the augmenters make go to the device too. A fresh Context per call:
            # `with` keeps the previous context on the object, which threads must not share.
            with Context(self._ctx.device_type, self._ctx.device_id):
                return self.postprocess_data(self.augmentation_transform(sample[1]))
        for i, (sample, data) in enumerate(zip(samples, self._map_samples(augment, on_device)),
                                           start):
            batch_data[i] = data
            batch_label[i] = sample[0]
        return start + len(samples)

    def next(self):
        """The next :class:`~neomx.io.DataBatch` (data, label, pad)."""
        if self._cache_data is not None:
            batch_data, batch_label, filled = self._cache_data, self._cache_label, self._cache_idx
        else:
            batch_data = nd.zeros((self.batch_size,) + tuple(self.data_shape), ctx=self._ctx)
            batch_label = self._new_label_batch()
            filled = self._batchify(batch_data, batch_label)
        pad = self.batch_size - filled
        if pad:
            if self.last_batch_handle == 'discard':
                raise StopIteration
            if self.last_batch_handle == 'roll_over' and self._cache_data is None:
                self._cache_data, self._cache_label, self._cache_idx = batch_data, batch_label, filled
                raise StopIteration
            self._batchify(batch_data, batch_label, filled)
            if self.last_batch_handle == 'pad':
                self._allow_read = False
            else:
                self._clear_cache()
        if self._ctx is not None:
            batch_label = batch_label.as_in_context(self._ctx)
        return DataBatch([batch_data], [batch_label], pad=pad)

    def _new_label_batch(self):
        return nd.empty(self.provide_label[0][1])

    @staticmethod
    def check_valid_image(data):
        """Require a decoded image with a shape."""
        if len(data[0].shape) == 0:
            raise RuntimeError('Data shape is wrong')

    @staticmethod
    def check_data_shape(data_shape):
        """Require a (3, H, W) shape."""
        if len(data_shape) != 3:
            raise ValueError('data_shape should have length 3, with dimensions CxHxW')
        if data_shape[0] != 3:
            raise ValueError('This iterator expects inputs to have 3 channels.')

    def imdecode(self, encoded):
        """Decode one image; a RuntimeError names the file when it is broken."""
        return self._decode_at(encoded, self.cur - 1)

    def _decode_at(self, encoded, position):
        """Decode the image read at ``position`` of the pass (named when it is broken)."""
        try:
            return imdecode(encoded)
        except Exception as err:  # pylint: disable=broad-except
            if self.imglist is None:
                raise RuntimeError('Broken image in record %d of the .rec file: %s'
                                   % (position, err)) from err
            _, fname = self.imglist[self.seq[position % self.num_image]]
            raise RuntimeError('Broken image filename: {}, {}'.format(fname, err)) from err

    def read_image(self, fname):
        """The encoded bytes of ``fname`` (relative to ``path_root``)."""
        with open(os.path.join(self.path_root or '', fname), 'rb') as stream:
            return stream.read()

    def augmentation_transform(self, data):
        """Apply the augmenters in order."""
        for aug in self.auglist:
            data = aug(data)
        return data

    @staticmethod
    def postprocess_data(datum):
        """(H, W, C) to (C, H, W)."""
        return nd.transpose(datum, axes=(2, 0, 1))
