"""autograd's per-thread recording and training flags, below everything that reads them on
hot paths (NDArray operators, the operator entries, cached graphs) as well as ``mx.autograd``,
which sets them."""
import threading


class State(threading.local):
    """neomx's autograd state of one thread.

    ``grad_outside``: torch's grad mode when :func:`neomx.autograd.set_recording` turned
    recording on, to restore when it turns it off.
    """
    def __init__(self):
        self.recording = False
        self.training = False
        self.grad_outside = None


STATE = State()
