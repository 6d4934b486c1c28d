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
# Whether NumPy array semantics were ever turned on, in any thread: until then every
# thread's ``np_array`` is off, and hot paths test this list (a global read) before
# ``STATE.np_array`` (a thread-local read, several times dearer).
ARRAY_EVER_ON = [False]


def set_np_array(active):
    """Turn NumPy array semantics on or off in this thread."""
    if active:
        ARRAY_EVER_ON[0] = True
    STATE.np_array = bool(active)
