"""Sentence encoding and the bucketing iterator of MXNet's symbolic language-model examples."""
import bisect
import random

import numpy as np

from .. import ndarray
from ..io import DataBatch, DataDesc, DataIter

__all__ = ['encode_sentences', 'BucketSentenceIter']


def encode_sentences(sentences, vocab=None, invalid_label=-1, invalid_key='\n', start_label=0,
                     unknown_token=None):
    """Map token sentences to integer sentences, growing the vocabulary on the way.

    Parameters
    ----------
    sentences : list of list of str
    vocab : dict of str -> int, optional
        A given vocabulary only grows when ``unknown_token`` is set (all unknown words then
        share its index); a new one starts as ``{invalid_key: invalid_label}``.
    invalid_label : int, default -1
        Index of ``invalid_key`` (e.g. end of sentence); skipped when numbering words.
    invalid_key : str, default '\\n'
    start_label : int, default 0
        Index of the first new word.
    unknown_token : str, optional

    Returns
    -------
    encoded : list of list of int
    vocab : dict of str -> int
    """
    new_vocab = vocab is None
    if new_vocab:
        vocab = {invalid_key: invalid_label}
    next_index = start_label
    encoded = []
    for sentence in sentences:
        codes = []
        for word in sentence:
            if word not in vocab:
                assert new_vocab or unknown_token, 'Unknown token %s' % word
                if next_index == invalid_label:
                    next_index += 1
                word = unknown_token or word
                vocab[word] = next_index
                next_index += 1
            codes.append(vocab[word])
        encoded.append(codes)
    return encoded, vocab


class BucketSentenceIter(DataIter):
    """Batches of same-length (bucketed) sentences for a language model: the label of each
    step is the next token, ``invalid_label`` pads sentences and ends the labels.

    Parameters
    ----------
    sentences : list of list of int
        Encoded sentences.
    batch_size : int
    buckets : list of int, optional
        Bucket lengths; by default every length with at least ``batch_size`` sentences.
        A sentence goes to the shortest bucket that holds it; longer ones are dropped.
    invalid_label : int, default -1
    data_name : str, default 'data'
    label_name : str, default 'softmax_label'
    dtype : str, default 'float32'
    layout : {'NT', 'TN'}, default 'NT'
        Batches are (batch_size, length) or (length, batch_size).

    Notes
    -----
    Each batch carries ``bucket_key`` (its length) and its own ``provide_data``/
    ``provide_label``; the iterator's describe the largest bucket (``default_bucket_key``).
    ``reset()`` shuffles the batches and the sentences in each bucket.

    Example
    -------
    >>> sentences = [[1, 2], [3, 4], [5, 6, 7], [8, 9, 10], [2, 3, 4]]
    >>> it = mx.rnn.BucketSentenceIter(sentences, batch_size=2, buckets=[2, 3])
    WARNING: discarded 0 sentences longer than the largest bucket.
    >>> it.default_bucket_key, it.provide_data
    (3, [DataDesc[data,(2, 3),<class 'numpy.float32'>,NT]])
    >>> it.reset()
    >>> sorted((batch.bucket_key, batch.data[0].shape) for batch in it)
    [(2, (2, 2)), (3, (2, 3))]
    """

    def __init__(self, sentences, batch_size, buckets=None, invalid_label=-1, data_name='data',
                 label_name='softmax_label', dtype='float32', layout='NT'):
        super().__init__(batch_size)
        self.major_axis = layout.find('N')
        if self.major_axis not in (0, 1):
            raise ValueError('Invalid layout %s: Must by NT (batch major) or TN (time major)'
                             % layout)
        if not buckets:
            buckets = [length for length, count in
                       enumerate(np.bincount([len(s) for s in sentences])) if count >= batch_size]
        buckets = sorted(buckets)
        self.buckets, self.data = self._fill_buckets(sentences, buckets, invalid_label, dtype)
        self.data_name = data_name
        self.label_name = label_name
        self.dtype = dtype
        self.invalid_label = invalid_label
        self.layout = layout
        self.default_bucket_key = max(self.buckets)
        self.provide_data = [self._describe(data_name, self.default_bucket_key)]
        self.provide_label = [self._describe(label_name, self.default_bucket_key)]
        self.idx = [(bucket, start) for bucket, rows in enumerate(self.data)
                    for start in range(0, len(rows) - batch_size + 1, batch_size)]
        self.curr_idx = 0
        self.nddata = []
        self.ndlabel = []
        self.reset()

    @staticmethod
    def _fill_buckets(sentences, buckets, invalid_label, dtype):
        """The non-empty buckets and, for each, its sentences padded into a 2-D array."""
        rows = [[] for _ in buckets]
        discarded = 0
        for sentence in sentences:
            bucket = bisect.bisect_left(buckets, len(sentence))
            if bucket == len(buckets):
                discarded += 1
                continue
            row = np.full((buckets[bucket],), invalid_label, dtype=dtype)
            row[:len(sentence)] = sentence
            rows[bucket].append(row)
        print('WARNING: discarded %d sentences longer than the largest bucket.' % discarded)
        kept = [i for i, bucket_rows in enumerate(rows) if bucket_rows]
        return [buckets[i] for i in kept], [np.asarray(rows[i], dtype=dtype) for i in kept]

    def _describe(self, name, length):
        shape = (self.batch_size, length) if self.major_axis == 0 else (length, self.batch_size)
        return DataDesc(name=name, shape=shape, layout=self.layout)

    def reset(self):
        """Shuffle the batch order and the sentences of each bucket; start over."""
        self.curr_idx = 0
        random.shuffle(self.idx)
        for rows in self.data:
            np.random.shuffle(rows)
        self.nddata = []
        self.ndlabel = []
        for rows in self.data:
            label = np.empty_like(rows)
            label[:, :-1] = rows[:, 1:]
            label[:, -1] = self.invalid_label
            self.nddata.append(ndarray.array(rows, dtype=self.dtype))
            self.ndlabel.append(ndarray.array(label, dtype=self.dtype))

    def next(self):
        """The next :class:`DataBatch`, with ``bucket_key`` set; StopIteration at the end."""
        if self.curr_idx == len(self.idx):
            raise StopIteration
        bucket, start = self.idx[self.curr_idx]
        self.curr_idx += 1
        data = self.nddata[bucket][start:start + self.batch_size]
        label = self.ndlabel[bucket][start:start + self.batch_size]
        if self.major_axis == 1:
            data, label = data.T, label.T
        length = self.buckets[bucket]
        return DataBatch([data], [label], pad=0, bucket_key=length,
                         provide_data=[self._describe(self.data_name, length)],
                         provide_label=[self._describe(self.label_name, length)])
