"""The per-thread NumPy semantics switches (``mx.util.is_np_shape``/``is_np_array``), below
the modules that read them on hot paths (``Block.__call__`` reads ``np_array`` on every
call, where a function call would cost more than the read)."""
import threading

from ._thread_switches import ThreadCount


class NumpySemantics(threading.local):
    """This thread's NumPy semantics; off by default in every thread. Class attributes as the
    defaults: ``getattr`` with a default on a missing thread-local attribute costs an
    exception each time."""
    np_shape = False
    np_array = False


STATE = NumpySemantics()
# The threads with NumPy array semantics on: hot paths test ``ARRAY_ON.on[0] and
# STATE.np_array`` (while no thread has them on, the thread-local read is skipped)
ARRAY_ON = ThreadCount()


def set_np_array(active):
    """Turn NumPy array semantics on or off in this thread."""
    active = bool(active)
    ARRAY_ON.turned(STATE.np_array, active)
    STATE.np_array = active
