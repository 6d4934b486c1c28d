"""``gluon.contrib.data.text``: the WikiText-2 and WikiText-103 language-modelling datasets.

Each reads one of the dataset's token files (``wiki.train.tokens``, ``wiki.valid.tokens``,
``wiki.test.tokens``) from ``root``: every non-empty line's whitespace-separated tokens
followed by ``<eos>``, indexed by a :class:`~neomx.contrib.text.vocab.Vocabulary` (built
from the file's token counts unless one is given), cut into samples of ``seq_len`` tokens;
each sample's label is the same window shifted by one token. A file missing from ``root``
is downloaded with the dataset's archive from MXNet's repository (``MXNET_GLUON_REPO``);
a file present is read as it is (MXNet re-downloads one whose checksum differs).
"""
import os
import shutil
import zipfile

import numpy as np

from ....base import data_dir
from .... import ndarray as nd
from .... import upper_layers
from ...data.dataset import Dataset
from ...utils import _get_repo_file_url, download

__all__ = ['WikiText2', 'WikiText103']

EOS_TOKEN = '<eos>'


class _WikiText(Dataset):
    """A WikiText token file as (data, label) samples of ``seq_len`` int32 token indices."""
    _namespace = None
    _archive_file = None
    _data_file = None

    def __init__(self, root, segment, vocab, seq_len):
        if segment not in self._data_file:
            raise KeyError("segment must be one of %s, got %r" % (', '.join(map(repr, self._data_file)), segment))
        self._root = os.path.expanduser(root)
        self._segment = segment
        self._seq_len = seq_len
        self._vocab = vocab
        self._counter = None
        os.makedirs(self._root, exist_ok=True)
        self._get_data()

    @property
    def vocabulary(self):
        """The :class:`~neomx.contrib.text.vocab.Vocabulary` indexing the tokens."""
        return self._vocab

    @property
    def frequencies(self):
        """The file's token counts (a ``collections.Counter``), when the vocabulary was built here."""
        return self._counter

    def _build_vocab(self, content):
        if not self._counter:
            self._counter = upper_layers.get('count_tokens_from_str')(content)
        if not self._vocab:
            self._vocab = upper_layers.get('text_vocabulary')(counter=self._counter, reserved_tokens=[EOS_TOKEN])

    def _read_batch(self, filename):
        with open(filename, 'r', encoding='utf8') as fin:
            content = fin.read()
        self._build_vocab(content)
        tokens = [token for line in content.splitlines() if line.split()
                  for token in line.split() + [EOS_TOKEN]]
        indices = self._vocab.to_indices(tokens)
        return np.array(indices[:-1], dtype=np.int32), np.array(indices[1:], dtype=np.int32)

    def _fetch(self):
        """Download the dataset's archive into ``root`` and extract its files there (flat)."""
        archive_name, archive_hash = self._archive_file
        archive = download(_get_repo_file_url('gluon/dataset/' + self._namespace, archive_name), path=self._root,
                           sha1_hash=archive_hash)
        with zipfile.ZipFile(archive, 'r') as zf:
            for member in zf.namelist():
                name = os.path.basename(member)
                if name:
                    with zf.open(member) as source, open(os.path.join(self._root, name), 'wb') as target:
                        shutil.copyfileobj(source, target)

    def _get_data(self):
        path = os.path.join(self._root, self._data_file[self._segment][0])
        if not os.path.exists(path):
            self._fetch()
        data, label = self._read_batch(path)
        # whole samples only (as MXNet 1.9.1): the tail shorter than seq_len is dropped
        usable = len(data) // self._seq_len * self._seq_len
        self._data = nd.array(data[:usable], dtype=np.int32).reshape((-1, self._seq_len))
        self._label = nd.array(label[:usable], dtype=np.int32).reshape((-1, self._seq_len))

    def __getitem__(self, idx):
        return self._data[idx], self._label[idx]

    def __len__(self):
        return len(self._label)


class WikiText2(_WikiText):
    """WikiText-2, Salesforce Research's word-level language-modelling corpus (CC BY-SA).

    Each sample is ``(data, label)``: ``seq_len`` int32 token indices and the next token of
    each, across sentence boundaries; every line ends with ``'<eos>'``.

    Parameters
    ----------
    root : str, default $MXNET_HOME/datasets/wikitext-2
        Folder of the token files (downloaded there when missing).
    segment : {'train', 'validation', 'test'}
    vocab : Vocabulary, optional
        Indexes the tokens; by default one is built from the segment's token counts.
    seq_len : int, default 35

    Example
    -------
    >>> import os, tempfile
    >>> root = tempfile.mkdtemp()
    >>> with open(os.path.join(root, 'wiki.test.tokens'), 'w') as f:
    ...     _ = f.write(' = Title = \\n\\n a b a \\n')
    >>> data = mx.gluon.contrib.data.text.WikiText2(root, segment='test', seq_len=3)
    >>> len(data), data.vocabulary.idx_to_token[:3]
    (2, ['<unk>', '<eos>', '='])
    >>> [t.asnumpy().tolist() for t in data[0]]
    [[2, 4, 2], [4, 2, 1]]
    """

    _namespace = 'wikitext-2'
    _archive_file = ('wikitext-2-v1.zip', '3c914d17d80b1459be871a5039ac23e752a53cbe')
    _data_file = {'train': ('wiki.train.tokens', '863f29c46ef9d167fff4940ec821195882fe29d1'),
                  'validation': ('wiki.valid.tokens', '0418625c8b4da6e4b5c7a0b9e78d4ae8f7ee5422'),
                  'test': ('wiki.test.tokens', 'c7b8ce0aa086fb34dab808c5c49224211eb2b172')}

    def __init__(self, root=os.path.join(data_dir(), 'datasets', 'wikitext-2'), segment='train', vocab=None,
                 seq_len=35):
        super().__init__(root, segment, vocab, seq_len)


class WikiText103(_WikiText):
    """WikiText-103, the larger (103M tokens) corpus of WikiText-2's kind; see :class:`WikiText2`.

    Parameters
    ----------
    root : str, default $MXNET_HOME/datasets/wikitext-103
    segment : {'train', 'validation', 'test'}
    vocab : Vocabulary, optional
    seq_len : int, default 35

    Example
    -------
    >>> import os, tempfile
    >>> root = tempfile.mkdtemp()
    >>> with open(os.path.join(root, 'wiki.valid.tokens'), 'w') as f:
    ...     _ = f.write('x y z x y z\\n')
    >>> data = mx.gluon.contrib.data.text.WikiText103(root, segment='validation', seq_len=2)
    >>> len(data), data[2][1].asnumpy().tolist()
    (3, [4, 1])
    """

    _namespace = 'wikitext-103'
    _archive_file = ('wikitext-103-v1.zip', '0aec09a7537b58d4bb65362fee27650eeaba625a')
    _data_file = {'train': ('wiki.train.tokens', 'b7497e2dfe77e72cfef5e3dbc61b7b53712ac211'),
                  'validation': ('wiki.valid.tokens', 'c326ac59dc587676d58c422eb8a03e119582f92b'),
                  'test': ('wiki.test.tokens', '8a5befc548865cec54ed4273cf87dbbad60d1e47')}

    def __init__(self, root=os.path.join(data_dir(), 'datasets', 'wikitext-103'), segment='train', vocab=None,
                 seq_len=35):
        super().__init__(root, segment, vocab, seq_len)
