"""neomx.compat: unmodified ``import mxnet`` scripts run on neomx.

Every test runs in a subprocess, so the ``mxnet`` alias never leaks into this process.
"""
import json
import os
import subprocess
import sys
import textwrap

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

SCRIPT = '''
import json
import sys

import mxnet
import mxnet as mx
import mxnet.gluon.nn
import mxnet.ndarray
from mxnet import gluon, nd
from mxnet.ndarray import NDArray

import sibling          # found beside the script, as when run directly

import neomx
try:
    import mxnet.no_such_module
    missing = None
except ModuleNotFoundError as err:
    missing = str(err)
print(json.dumps({
    'argv': sys.argv, 'name': __name__, 'sibling': sibling.VALUE,
    'same_modules': [mxnet is neomx, mx.nd is neomx.nd, nd is neomx.nd, gluon is neomx.gluon,
                     mxnet.ndarray is neomx.ndarray, mxnet.gluon.nn is neomx.gluon.nn],
    'same_class': NDArray is neomx.nd.NDArray,
    'sum': float(nd.array([1, 2, 3]).sum().asscalar()),
    'missing': missing,
}))
sys.exit(int(sys.argv[1]))
'''


def _env():
    env = dict(os.environ, OMP_NUM_THREADS='1')
    env['PYTHONPATH'] = ROOT + os.pathsep + env.get('PYTHONPATH', '')
    return env


def _run(args, cwd):
    return subprocess.run([sys.executable] + args, cwd=str(cwd), env=_env(), capture_output=True, text=True,
                          timeout=120)


def test_script_runs_as_if_started_directly(tmp_path):
    folder = tmp_path / 'project'
    folder.mkdir()
    (folder / 'train.py').write_text(SCRIPT)
    (folder / 'sibling.py').write_text('VALUE = 42\n')
    # Started from another folder: the script's own folder must still come first on sys.path.
    proc = _run(['-m', 'neomx.compat', str(folder / 'train.py'), '3', '--lr', '0.1'], tmp_path)
    assert proc.returncode == 3, proc.stderr            # the script's exit status is kept
    out = json.loads(proc.stdout.splitlines()[0])
    assert out['argv'] == [str(folder / 'train.py'), '3', '--lr', '0.1']
    assert out['name'] == '__main__'
    assert out['sibling'] == 42
    assert all(out['same_modules']) and out['same_class']
    assert out['sum'] == 6.0
    assert out['missing'] == "No module named 'mxnet.no_such_module'"


def test_script_errors_propagate(tmp_path):
    (tmp_path / 'bad.py').write_text('import mxnet\nraise ValueError("boom")\n')
    proc = _run(['-m', 'neomx.compat', 'bad.py'], tmp_path)
    assert proc.returncode == 1
    assert 'ValueError: boom' in proc.stderr


def test_run_module_form(tmp_path):
    (tmp_path / 'tool.py').write_text(textwrap.dedent('''
        import sys
        import mxnet as mx
        print(__name__, sys.argv[1:], mx.nd.ones((2,)).shape)
    '''))
    proc = _run(['-m', 'neomx.compat', '-m', 'tool', 'x'], tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "__main__ ['x'] (2,)"


def test_usage_without_arguments(tmp_path):
    proc = _run(['-m', 'neomx.compat'], tmp_path)
    assert proc.returncode == 2 and 'usage' in proc.stderr


def test_install_and_uninstall_in_process(tmp_path):
    code = textwrap.dedent('''
        import sys
        import neomx.compat
        neomx.compat.install()
        neomx.compat.install()                      # idempotent
        import mxnet.ndarray.ndarray
        from mxnet.base import MXNetError
        import neomx
        assert mxnet.ndarray.ndarray is neomx.ndarray.ndarray and MXNetError is neomx.MXNetError
        neomx.compat.uninstall()
        assert not any(n.startswith('mxnet') for n in sys.modules)
        try:
            import mxnet
        except ImportError:
            print('gone')
        else:
            print('still', mxnet.__name__)         # only if a real MXNet is installed
    ''')
    proc = _run(['-c', code], tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() in ('gone', 'still mxnet')
