"""``ImageRecordDataset``: the images of a RecordIO file (``RecordFileDataset``, the raw
records, lives in ``dataset`` as in MXNet)."""
from ... import recordio
from ...context import cpu
from ...ndarray.ndarray import array
from .dataset import RecordFileDataset

__all__ = ['ImageRecordDataset']


class ImageRecordDataset(RecordFileDataset):
    """Images packed with ``recordio.pack_img``: samples are (image, label).

    Parameters
    ----------
    filename : str
        Path of the ``.rec`` file (with its ``.idx``).
    flag : int
        1: (H, W, 3) RGB uint8 images; 0: (H, W, 1) grayscale.
    transform : callable, optional
        ``transform(image, label)`` returning the sample.

    Notes
    -----
    The label is the header's float, or its float32 array for multi-label records.
    Images are decoded with OpenCV, as MXNet's, when the ``vision`` extra is installed, else
    with Pillow (JPEG pixels may then differ slightly).

    Example
    -------
    >>> import os, tempfile
    >>> folder = tempfile.TemporaryDirectory()
    >>> rec, idx = os.path.join(folder.name, 'img.rec'), os.path.join(folder.name, 'img.idx')
    >>> writer = mx.recordio.MXIndexedRecordIO(idx, rec, 'w')
    >>> for i in range(2):
    ...     img = np.full((4, 6, 3), 50 * i, np.uint8)
    ...     writer.write_idx(i, mx.recordio.pack_img(mx.recordio.IRHeader(0, i, i, 0), img, img_fmt='.png'))
    >>> writer.close()
    >>> dataset = mx.gluon.data.vision.ImageRecordDataset(rec)
    >>> image, label = dataset[1]
    >>> len(dataset), image.shape, image.dtype, float(image[0, 0, 0].asscalar()), label
    (2, (4, 6, 3), <class 'numpy.uint8'>, 50.0, 1.0)
    >>> folder.cleanup()
    """

    def __init__(self, filename, flag=1, transform=None):
        super().__init__(filename)
        self._flag = flag
        self._transform = transform

    def __getitem__(self, idx):
        header, encoded = recordio.unpack(super().__getitem__(idx))
        pixels = recordio.decode_record_image(encoded, 1 if self._flag else 0, idx, self.filename)
        # on the CPU whatever the current context, as MXNet's decoded images
        image = array(pixels.reshape(pixels.shape[:2] + (-1,)), ctx=cpu(0), dtype='uint8')
        if self._transform is not None:
            return self._transform(image, header.label)
        return image, header.label
