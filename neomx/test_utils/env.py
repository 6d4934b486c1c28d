"""Where and how tests run: default context, GPUs, environment variables, retries."""
import contextlib
import functools
import os
import platform
import sys

from ..context import Context, current_context, num_gpus
from ..util import use_np  # noqa: F401  (MXNet's test_utils exports it)

__all__ = ['default_context', 'set_default_context', 'list_gpus', 'environment', 'discard_stderr',
           'retry', 'is_aarch64_run', 'is_cd_run', 'has_tvm_ops', 'is_op_runnable', 'use_np']


def default_context():
    """The context tests run on: the current context (cpu(0) unless changed)."""
    return current_context()


def set_default_context(ctx):
    """Make ``ctx`` the current context of this thread (what ``default_context`` returns)."""
    Context._default.value = Context(ctx)


def list_gpus():
    """Indices of the GPUs torch can see (empty on a CPU-only machine)."""
    return list(range(num_gpus()))


@contextlib.contextmanager
def environment(*args):
    """Temporarily set environment variables: ``environment('NAME', 'value')`` or a dict.

    A value of None removes the variable; the previous values come back on exit.
    """
    if len(args) == 1 and isinstance(args[0], dict):
        env = args[0]
    elif len(args) == 2:
        env = {args[0]: args[1]}
    else:
        raise ValueError('environment() takes a dict or a name and a value, got %r' % (args,))
    saved = {k: os.environ.get(k) for k in env}
    try:
        for k, v in env.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = str(v)
        yield
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


@contextlib.contextmanager
def discard_stderr():
    """Send what is written to file descriptor 2 (also by native code) to /dev/null meanwhile."""
    sys.stderr.flush()
    saved = os.dup(2)
    try:
        with open(os.devnull, 'w') as devnull:
            os.dup2(devnull.fileno(), 2)
            yield
    finally:
        sys.stderr.flush()
        os.dup2(saved, 2)
        os.close(saved)


def retry(n):
    """Decorator: run a (randomized) test up to ``n`` times until one run passes."""
    if n <= 0:
        raise ValueError('retry needs n > 0, got %r' % (n,))

    def decorate(f):
        @functools.wraps(f)
        def wrapper(*args, **kwargs):
            for attempt in range(n):
                try:
                    return f(*args, **kwargs)
                except AssertionError:
                    if attempt == n - 1:
                        raise
            return None
        return wrapper
    return decorate


def is_aarch64_run():
    """Whether this is an ARM64 machine."""
    return platform.machine() == 'aarch64'


def is_cd_run():
    """Whether tests run in MXNet's release pipeline (``CD_JOB`` set to 1)."""
    return os.environ.get('CD_JOB', '0') == '1'


def has_tvm_ops():
    """neomx has no TVM-generated operators."""
    return False


def is_op_runnable():
    """Whether TVM operators can run here: neomx has none, so the question is moot (True on CPU)."""
    return current_context().device_type == 'cpu' or not has_tvm_ops()
