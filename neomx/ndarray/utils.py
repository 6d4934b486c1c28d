"""``mx.nd.save`` / ``mx.nd.load`` (filled in by the serialization work)."""


def save(fname, data):
    raise NotImplementedError


def load(fname):
    raise NotImplementedError


def load_frombuffer(buf):
    raise NotImplementedError
