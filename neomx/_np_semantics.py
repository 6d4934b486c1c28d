"""The per-thread NumPy semantics switches (``mx.util.is_np_shape``/``is_np_array``), below
the modules that read them on hot paths (``Block.__call__`` reads ``np_array`` on every
call, where a function call would cost more than the read)."""
import threading


class NumpySemantics(threading.local):
    """This thread's NumPy semantics; off by default in every thread. Class attributes as the
    defaults: ``getattr`` with a default on a missing thread-local attribute costs an
    exception each time."""
    np_shape = False
    np_array = False


STATE = NumpySemantics()
