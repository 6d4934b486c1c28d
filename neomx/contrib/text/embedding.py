"""Token embeddings of ``mx.contrib.text``: vectors for the tokens of a vocabulary, read from
pre-trained files (GloVe, fastText: fetched once into ``embedding_root``) or from local ones
(:class:`CustomEmbedding`), and concatenated by :class:`CompositeEmbedding`.

Row 0 of ``idx_to_vec`` is the unknown token's vector: the file's, when the file has the
unknown token, else ``init_unknown_vec(shape=vec_len)``.
"""
import logging
import os
import tarfile
import warnings
import zipfile

from . import _pretrained_files as _files
from . import vocab
from .vocab import UNKNOWN_IDX
from ... import ndarray as nd
from ... import registry
from ...base import data_dir
from ...util import is_np_array

__all__ = ['register', 'create', 'get_pretrained_file_names', 'GloVe', 'FastText', 'CustomEmbedding',
           'CompositeEmbedding', 'is_np_array']


def register(embedding_cls):
    """Register a token embedding class (a subclass of ``_TokenEmbedding``) for :func:`create`,
    under its lower-cased name."""
    return registry.get_register_func(_TokenEmbedding, 'token embedding')(embedding_cls)


def create(embedding_name, **kwargs):
    """An instance of the registered embedding ``embedding_name`` built with ``kwargs``."""
    return registry.get_create_func(_TokenEmbedding, 'token embedding')(embedding_name, **kwargs)


def get_pretrained_file_names(embedding_name=None):
    """The pre-trained file names of embedding ``embedding_name`` (a list), or of every
    registered embedding ({name: list}) when it is None; KeyError for an unknown name.

    >>> from neomx.contrib import text
    >>> len(text.embedding.get_pretrained_file_names('glove'))
    10
    """
    embeddings = registry.get_registry(_TokenEmbedding)
    if embedding_name is None:
        return {name: list(cls.pretrained_file_name_sha1) for name, cls in embeddings.items()}
    if embedding_name not in embeddings:
        raise KeyError('Cannot find `embedding_name` %s. Use `get_pretrained_file_names(embedding_name=None)'
                       '.keys()` to get all the valid embedding names.' % embedding_name)
    return list(embeddings[embedding_name].pretrained_file_name_sha1)


class _TokenEmbedding(vocab.Vocabulary):
    """A vocabulary with a vector per token (``idx_to_vec``, shape (len, vec_len)).

    Subclasses for downloadable embeddings set ``pretrained_file_name_sha1`` ({file: sha1})
    and, when files come in archives, ``pretrained_archive_name_sha1``.
    """
    pretrained_file_name_sha1 = {}

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self._vec_len = None
        self._idx_to_vec = None

    @classmethod
    def _get_download_file_name(cls, pretrained_file_name):
        return pretrained_file_name

    @classmethod
    def _get_pretrained_file_url(cls, pretrained_file_name):
        repo_url = os.environ.get('MXNET_GLUON_REPO', _files.REPO_URL)
        return '{}gluon/embeddings/{}/{}'.format(repo_url, cls.__name__.lower(),
                                                 cls._get_download_file_name(pretrained_file_name))

    @classmethod
    def _get_pretrained_file(cls, embedding_root, pretrained_file_name):
        """The local path of ``pretrained_file_name`` under ``embedding_root/<class name>``,
        downloaded (and unpacked) first unless a file with the right SHA-1 is there."""
        from ...gluon.utils import check_sha1, download
        embedding_dir = os.path.join(os.path.expanduser(embedding_root), cls.__name__.lower())
        path = os.path.join(embedding_dir, pretrained_file_name)
        url = cls._get_pretrained_file_url(pretrained_file_name)
        downloaded = os.path.basename(url)
        downloaded_path = os.path.join(embedding_dir, downloaded)
        file_hash = cls.pretrained_file_name_sha1[pretrained_file_name]
        archives = getattr(cls, 'pretrained_archive_name_sha1', None)
        downloaded_hash = archives[downloaded] if archives is not None else file_hash
        if not os.path.exists(path) or not check_sha1(path, file_hash):
            download(url, downloaded_path, sha1_hash=downloaded_hash)
            ext = os.path.splitext(downloaded)[1]
            if ext == '.zip':
                with zipfile.ZipFile(downloaded_path, 'r') as zf:
                    zf.extractall(embedding_dir)
            elif ext == '.gz':
                with tarfile.open(downloaded_path, 'r:gz') as tar:
                    tar.extractall(path=embedding_dir)
        return path

    def _load_embedding(self, pretrained_file_path, elem_delim, init_unknown_vec, encoding='utf8'):
        """Index the tokens of a text file of lines ``token<delim>v1<delim>v2...`` and keep
        their vectors (duplicates and 1-element header lines are skipped with a warning)."""
        pretrained_file_path = os.path.expanduser(pretrained_file_path)
        if not os.path.isfile(pretrained_file_path):
            raise ValueError('`pretrained_file_path` must be a valid path to the pre-trained token '
                             'embedding file.')
        logging.info('Loading pre-trained token embedding vectors from %s', pretrained_file_path)
        vec_len, rows, seen, unknown_vec = None, [], set(), None
        with open(pretrained_file_path, 'r', encoding=encoding) as f:
            for line_num, line in enumerate(f, 1):
                elems = line.rstrip().split(elem_delim)
                assert len(elems) > 1, ('At line %d of the pre-trained text embedding file: the data format '
                                        'of the pre-trained token embedding file %s is unexpected.'
                                        % (line_num, pretrained_file_path))
                token, values = elems[0], [float(v) for v in elems[1:]]
                if token == self.unknown_token and unknown_vec is None:
                    unknown_vec = values
                    seen.add(token)
                elif token in seen:
                    warnings.warn('At line %d of the pre-trained token embedding file: the embedding vector '
                                  'for token %s has been loaded and a duplicate embedding for the same '
                                  'token is seen and skipped.' % (line_num, token))
                elif len(values) == 1:
                    warnings.warn('At line %d of the pre-trained text embedding file: token %s with '
                                  '1-dimensional vector %s is likely a header and is skipped.'
                                  % (line_num, token, values))
                else:
                    if vec_len is None:
                        vec_len = len(values)
                    assert len(values) == vec_len, (
                        'At line %d of the pre-trained token embedding file: the dimension of token %s is '
                        '%d but the dimension of previous tokens is %d. Dimensions of all the tokens must '
                        'be the same.' % (line_num, token, len(values), vec_len))
                    rows.append(values)
                    self._idx_to_token.append(token)
                    self._token_to_idx[token] = len(self._idx_to_token) - 1
                    seen.add(token)
        self._vec_len = vec_len
        # the unknown token and the reserved ones come first; reserved rows stay zero
        leading = len(self._idx_to_token) - len(rows)
        self._idx_to_vec = nd.array([[0.0] * vec_len] * leading + rows)
        self._idx_to_vec[UNKNOWN_IDX] = (init_unknown_vec(shape=vec_len) if unknown_vec is None
                                         else nd.array(unknown_vec))

    def _index_tokens_from_vocabulary(self, vocabulary):
        self._token_to_idx = vocabulary.token_to_idx.copy()
        self._idx_to_token = vocabulary.idx_to_token[:]
        self._unknown_token = vocabulary.unknown_token
        self._reserved_tokens = None if vocabulary.reserved_tokens is None else vocabulary.reserved_tokens[:]

    def _set_idx_to_vec_by_embeddings(self, token_embeddings, vocab_len, vocab_idx_to_token):
        """Vectors for ``vocab_idx_to_token``: the embeddings' vectors side by side."""
        new_vec_len = sum(embed.vec_len for embed in token_embeddings)
        vecs = nd.zeros((vocab_len, new_vec_len))
        col = 0
        for embed in token_embeddings:
            end = col + embed.vec_len
            vecs[0, col:end] = embed.idx_to_vec[0]
            if vocab_len > 1:
                vecs[1:, col:end] = embed.get_vecs_by_tokens(vocab_idx_to_token[1:])
            col = end
        self._vec_len = new_vec_len
        self._idx_to_vec = vecs

    def _build_embedding_for_vocabulary(self, vocabulary):
        if vocabulary is not None:
            assert isinstance(vocabulary, vocab.Vocabulary), \
                'The argument `vocabulary` must be an instance of mxnet.contrib.text.vocab.Vocabulary.'
            self._set_idx_to_vec_by_embeddings([self], len(vocabulary), vocabulary.idx_to_token)
            self._index_tokens_from_vocabulary(vocabulary)

    @property
    def vec_len(self):
        """int: the length of each token's vector."""
        return self._vec_len

    @property
    def idx_to_vec(self):
        """NDArray (len, vec_len): the vectors, by token index."""
        return self._idx_to_vec

    def get_vecs_by_tokens(self, tokens, lower_case_backup=False):
        """The vector of a token (1-D) or the vectors of a list of tokens (2-D); unknown tokens
        get row 0. With ``lower_case_backup``, a token not found is looked up lower-cased."""
        single = not isinstance(tokens, list)
        tokens = [tokens] if single else tokens
        if lower_case_backup:
            indices = [self.token_to_idx[t] if t in self.token_to_idx
                       else self.token_to_idx.get(t.lower(), UNKNOWN_IDX) for t in tokens]
        else:
            indices = [self.token_to_idx.get(t, UNKNOWN_IDX) for t in tokens]
        vecs = nd.Embedding(nd.array(indices), self.idx_to_vec, self.idx_to_vec.shape[0],
                            self.idx_to_vec.shape[1])
        return vecs[0] if single else vecs

    def update_token_vectors(self, tokens, new_vectors):
        """Replace the vectors of known ``tokens`` with ``new_vectors`` (1-D for one token,
        else (len(tokens), vec_len)); ValueError for an unknown token."""
        assert self.idx_to_vec is not None, 'The property `idx_to_vec` has not been properly set.'
        if not isinstance(tokens, list) or len(tokens) == 1:
            assert isinstance(new_vectors, nd.NDArray) and len(new_vectors.shape) in (1, 2), \
                '`new_vectors` must be a 1-D or 2-D NDArray if `tokens` is a singleton.'
            tokens = tokens if isinstance(tokens, list) else [tokens]
            if len(new_vectors.shape) == 1:
                new_vectors = nd.expand_dims(new_vectors, axis=0)
        else:
            assert isinstance(new_vectors, nd.NDArray) and len(new_vectors.shape) == 2, \
                '`new_vectors` must be a 2-D NDArray if `tokens` is a list of multiple strings.'
        assert new_vectors.shape == (len(tokens), self.vec_len), \
            ('The length of new_vectors must be equal to the number of tokens and the width of '
             'new_vectors must be equal to the dimension of embeddings of the glossary.')
        indices = []
        for token in tokens:
            if token not in self.token_to_idx:
                raise ValueError('Token %s is unknown. To update the embedding vector for an unknown token, '
                                 'please specify it explicitly as the `unknown_token` %s in `tokens`. This '
                                 'is to avoid unintended updates.' % (token, self.idx_to_token[UNKNOWN_IDX]))
            indices.append(self.token_to_idx[token])
        self._idx_to_vec[nd.array(indices)] = new_vectors

    @classmethod
    def _check_pretrained_file_names(cls, pretrained_file_name):
        name = cls.__name__.lower()
        if pretrained_file_name not in cls.pretrained_file_name_sha1:
            raise KeyError('Cannot find pretrained file %s for token embedding %s. Valid pretrained files '
                           'for embedding %s: %s' % (pretrained_file_name, name, name,
                                                     ', '.join(cls.pretrained_file_name_sha1)))

    def _load_pretrained(self, pretrained_file_name, embedding_root, init_unknown_vec, vocabulary):
        type(self)._check_pretrained_file_names(pretrained_file_name)
        path = type(self)._get_pretrained_file(embedding_root, pretrained_file_name)
        self._load_embedding(path, ' ', init_unknown_vec)
        if vocabulary is not None:
            self._build_embedding_for_vocabulary(vocabulary)


_EMBEDDING_ROOT = os.path.join(data_dir(), 'embeddings')


@register
class GloVe(_TokenEmbedding):
    """The GloVe embeddings (Pennington, Socher and Manning, 2014), from
    ``get_pretrained_file_names('glove')``, fetched into ``embedding_root/glove``.

    Parameters
    ----------
    pretrained_file_name : str, default 'glove.840B.300d.txt'
    embedding_root : str, default '$MXNET_HOME/embeddings'
    init_unknown_vec : callable, default nd.zeros
        Builds the unknown token's vector (called with ``shape=vec_len``).
    vocabulary : Vocabulary, optional
        Keep only (and index as) this vocabulary's tokens.
    """
    pretrained_file_name_sha1 = _files.GLOVE_FILE_SHA1
    pretrained_archive_name_sha1 = _files.GLOVE_ARCHIVE_SHA1

    @classmethod
    def _get_download_file_name(cls, pretrained_file_name):
        # one archive per corpus ('6B', '42B'...) holds its files of each dimension
        corpus = pretrained_file_name.split('.')[1]
        return next(a for a in cls.pretrained_archive_name_sha1 if a.split('.')[1] == corpus)

    def __init__(self, pretrained_file_name='glove.840B.300d.txt', embedding_root=_EMBEDDING_ROOT,
                 init_unknown_vec=nd.zeros, vocabulary=None, **kwargs):
        type(self)._check_pretrained_file_names(pretrained_file_name)
        super().__init__(**kwargs)
        self._load_pretrained(pretrained_file_name, embedding_root, init_unknown_vec, vocabulary)


@register
class FastText(_TokenEmbedding):
    """The fastText embeddings (Bojanowski et al., 2017), from
    ``get_pretrained_file_names('fasttext')``, fetched into ``embedding_root/fasttext``.

    Parameters are those of :class:`GloVe`; the default file is 'wiki.simple.vec'.
    """
    pretrained_file_name_sha1 = _files.FAST_TEXT_FILE_SHA1
    pretrained_archive_name_sha1 = _files.FAST_TEXT_ARCHIVE_SHA1

    @classmethod
    def _get_download_file_name(cls, pretrained_file_name):
        return '.'.join(pretrained_file_name.split('.')[:-1]) + '.zip'

    def __init__(self, pretrained_file_name='wiki.simple.vec', embedding_root=_EMBEDDING_ROOT,
                 init_unknown_vec=nd.zeros, vocabulary=None, **kwargs):
        type(self)._check_pretrained_file_names(pretrained_file_name)
        super().__init__(**kwargs)
        self._load_pretrained(pretrained_file_name, embedding_root, init_unknown_vec, vocabulary)


class CustomEmbedding(_TokenEmbedding):
    """A token embedding read from a local text file, one ``token<elem_delim>v1<elem_delim>...``
    line per token.

    Parameters
    ----------
    pretrained_file_path : str
    elem_delim : str, default ' '
    encoding : str, default 'utf8'
    init_unknown_vec : callable, default nd.zeros
    vocabulary : Vocabulary, optional

    Shape
    -----
    ``idx_to_vec``: (number of tokens, vec_len).

    Example
    -------
    >>> import os, tempfile
    >>> from neomx.contrib import text
    >>> path = os.path.join(tempfile.mkdtemp(), 'vecs.txt')
    >>> with open(path, 'w') as f:
    ...     _ = f.write('a 0.1 0.2\\nb 0.3 0.4\\n')
    >>> e = text.embedding.CustomEmbedding(path)
    >>> e.idx_to_token, e.idx_to_vec.shape
    (['<unk>', 'a', 'b'], (3, 2))
    >>> [round(float(v), 2) for v in e.get_vecs_by_tokens('b').asnumpy()]
    [0.3, 0.4]
    """

    def __init__(self, pretrained_file_path, elem_delim=' ', encoding='utf8', init_unknown_vec=nd.zeros,
                 vocabulary=None, **kwargs):
        super().__init__(**kwargs)
        self._load_embedding(pretrained_file_path, elem_delim, init_unknown_vec, encoding)
        if vocabulary is not None:
            self._build_embedding_for_vocabulary(vocabulary)


class CompositeEmbedding(_TokenEmbedding):
    """The tokens of ``vocabulary`` with the vectors of ``token_embeddings`` concatenated.

    Parameters
    ----------
    vocabulary : Vocabulary
    token_embeddings : token embedding or list of them

    Shape
    -----
    ``idx_to_vec``: (len(vocabulary), sum of the embeddings' vec_len).

    Example
    -------
    >>> import collections, os, tempfile
    >>> from neomx.contrib import text
    >>> path = os.path.join(tempfile.mkdtemp(), 'vecs.txt')
    >>> with open(path, 'w') as f:
    ...     _ = f.write('a 1 2\\nb 3 4\\n')
    >>> e = text.embedding.CustomEmbedding(path)
    >>> v = text.vocab.Vocabulary(collections.Counter(['b', 'c']))
    >>> text.embedding.CompositeEmbedding(v, [e, e]).idx_to_vec.asnumpy().tolist()
    [[0.0, 0.0, 0.0, 0.0], [3.0, 4.0, 3.0, 4.0], [0.0, 0.0, 0.0, 0.0]]
    """

    def __init__(self, vocabulary, token_embeddings):
        assert isinstance(vocabulary, vocab.Vocabulary), \
            'The argument `vocabulary` must be an instance of mxnet.contrib.text.indexer.Vocabulary.'
        if not isinstance(token_embeddings, list):
            token_embeddings = [token_embeddings]
        for embed in token_embeddings:
            assert isinstance(embed, _TokenEmbedding), \
                ('The argument `token_embeddings` must be an instance or a list of instances of '
                 '`mxnet.contrib.text.embedding.TextEmbedding` whose embedding vectors will be loaded or '
                 'concatenated-then-loaded to map to the indexed tokens.')
        self._index_tokens_from_vocabulary(vocabulary)
        self._set_idx_to_vec_by_embeddings(token_embeddings, len(self), self.idx_to_token)
