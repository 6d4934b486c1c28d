"""The token index of ``mx.contrib.text``: :class:`Vocabulary`."""
import collections

__all__ = ['Vocabulary']

UNKNOWN_IDX = 0     # the unknown token's index in every vocabulary and embedding


class Vocabulary:
    """Indices for the unknown token (0), the reserved tokens (1...), then the keys of a
    counter, most frequent first (ties in sorted order).

    Parameters
    ----------
    counter : collections.Counter, optional
        Token frequencies; keys, ``unknown_token`` and reserved tokens share one hashable type.
    most_freq_count : int, optional
        At most this many counter keys are indexed (reserved tokens not counted).
    min_freq : int, default 1
        Keys less frequent than this are left out.
    unknown_token : hashable, default '<unk>'
        What every unknown token maps to.
    reserved_tokens : list, optional
        Always indexed (padding, sentence marks...); no duplicates, not ``unknown_token``.

    Example
    -------
    >>> import collections
    >>> from neomx.contrib.text.vocab import Vocabulary
    >>> v = Vocabulary(collections.Counter(['b', 'a', 'b', 'c', 'c', 'c']), reserved_tokens=['<pad>'])
    >>> v.idx_to_token
    ['<unk>', '<pad>', 'c', 'b', 'a']
    >>> v.to_indices(['a', 'z'])
    [4, 0]
    """

    def __init__(self, counter=None, most_freq_count=None, min_freq=1, unknown_token='<unk>',
                 reserved_tokens=None):
        assert min_freq > 0, '`min_freq` must be set to a positive value.'
        if reserved_tokens is not None:
            reserved_set = set(reserved_tokens)
            assert unknown_token not in reserved_set, '`reserved_token` cannot contain `unknown_token`.'
            assert len(reserved_set) == len(reserved_tokens), \
                '`reserved_tokens` cannot contain duplicate reserved tokens.'
        self._index_unknown_and_reserved_tokens(unknown_token, reserved_tokens)
        if counter is not None:
            self._index_counter_keys(counter, unknown_token, reserved_tokens, most_freq_count, min_freq)

    def _index_unknown_and_reserved_tokens(self, unknown_token, reserved_tokens):
        self._unknown_token = unknown_token
        self._idx_to_token = [unknown_token]
        self._reserved_tokens = None if reserved_tokens is None else reserved_tokens[:]
        if reserved_tokens is not None:
            self._idx_to_token.extend(reserved_tokens)
        self._token_to_idx = {token: idx for idx, token in enumerate(self._idx_to_token)}

    def _index_counter_keys(self, counter, unknown_token, reserved_tokens, most_freq_count, min_freq):
        assert isinstance(counter, collections.Counter), \
            '`counter` must be an instance of collections.Counter.'
        special = set(reserved_tokens) if reserved_tokens is not None else set()
        special.add(unknown_token)
        # most frequent first; among equal frequencies, in the tokens' sorted order
        token_freqs = sorted(sorted(counter.items(), key=lambda x: x[0]), key=lambda x: x[1], reverse=True)
        token_cap = len(special) + (len(counter) if most_freq_count is None else most_freq_count)
        for token, freq in token_freqs:
            if freq < min_freq or len(self._idx_to_token) == token_cap:
                break
            if token not in special:
                self._idx_to_token.append(token)
                self._token_to_idx[token] = len(self._idx_to_token) - 1

    def __len__(self):
        return len(self.idx_to_token)

    @property
    def token_to_idx(self):
        """dict: token -> index."""
        return self._token_to_idx

    @property
    def idx_to_token(self):
        """list: the tokens, by index."""
        return self._idx_to_token

    @property
    def unknown_token(self):
        return self._unknown_token

    @property
    def reserved_tokens(self):
        return self._reserved_tokens

    def to_indices(self, tokens):
        """The index of a token, or the list of indices of a list of tokens (unknown: 0)."""
        single = not isinstance(tokens, list)
        indices = [self.token_to_idx.get(token, UNKNOWN_IDX) for token in ([tokens] if single else tokens)]
        return indices[0] if single else indices

    def to_tokens(self, indices):
        """The token of an index, or the tokens of a list of indices; ValueError for an invalid one."""
        single = not isinstance(indices, list)
        max_idx = len(self.idx_to_token) - 1
        tokens = []
        for idx in ([indices] if single else indices):
            if not isinstance(idx, int) or idx > max_idx:
                raise ValueError('Token index %d in the provided `indices` is invalid.' % idx)
            tokens.append(self.idx_to_token[idx])
        return tokens[0] if single else tokens
