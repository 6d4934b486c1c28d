"""neomx imports with only its core dependencies (numpy, torch); optional packages fail
where they are used, naming the package and the extra that installs it."""
import os
import subprocess
import sys
import textwrap

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# A meta-path finder that makes the optional packages unimportable in a fresh interpreter,
# as on a machine where only the core dependencies are installed.
_BLOCK = textwrap.dedent('''
    import sys
    OPTIONAL = {'PIL', 'graphviz', 'tqdm', 'yaml', 'jsonschema', 'scipy', 'matplotlib', 'cv2', 'aiohttp', 's3fs', 'gcsfs'}
    class Blocker:
        def find_spec(self, name, path=None, target=None):
            if name.split('.')[0] in OPTIONAL:
                raise ImportError('blocked optional package: ' + name)
    sys.meta_path.insert(0, Blocker())
''')


def _run(code):
    env = dict(os.environ, PYTHONPATH=ROOT)
    return subprocess.run([sys.executable, '-c', _BLOCK + textwrap.dedent(code)], cwd=ROOT,
                          env=env, capture_output=True, text=True, timeout=300)


def test_every_namespace_imports_with_only_core_dependencies():
    proc = _run('''
        import neomx as mx
        for name in ['nd', 'sym', 'gluon', 'kv', 'mod', 'io', 'image', 'recordio', 'init',
                     'optimizer', 'metric', 'autograd', 'viz', 'rnn', 'profiler', 'test_utils']:
            assert getattr(mx, name) is not None, name
        from neomx.gluon import nn, rnn, loss, data, model_zoo, contrib
        from neomx.gluon.data import vision
        import neomx.launch, neomx.kvstore, neomx.compat, neomx.gluon.checkpoint
        net = nn.Dense(3)
        net.initialize()
        print(net(mx.nd.ones((2, 4))).shape)
        leaked = sorted(m for m in sys.modules if m.split('.')[0] in OPTIONAL)
        print('leaked', leaked)
    ''')
    assert proc.returncode == 0, proc.stderr
    assert '(2, 3)' in proc.stdout
    assert 'leaked []' in proc.stdout


@pytest.mark.parametrize('call, extra', [
    ("mx.image.imdecode(b'\\x89PNG')", 'vision'),
    ("mx.viz.plot_network(mx.sym.var('x') + 1)", 'viz'),
])
def test_a_missing_optional_package_fails_where_used_naming_the_extra(call, extra):
    proc = _run('''
        import neomx as mx
        try:
            %s
        except mx.base.MXNetError as err:
            assert isinstance(err, ImportError)
            print('ERROR', err)
    ''' % call)
    assert proc.returncode == 0, proc.stderr
    assert 'ERROR' in proc.stdout
    assert 'pip install "neomx[%s]"' % extra in proc.stdout
