"""mx.profiler, mx.runtime, mx.util and mx.engine against MXNet 1.9.1's observed behaviour."""
import json
import os

import threading

import pytest
import torch

import neomx as mx
from neomx import profiler

# MXNet 1.9.1's mx.runtime.Features().keys(), in order.
MXNET_FEATURES = ['CUDA', 'CUDNN', 'NCCL', 'CUDA_RTC', 'TENSORRT', 'CPU_SSE', 'CPU_SSE2', 'CPU_SSE3',
                  'CPU_SSE4_1', 'CPU_SSE4_2', 'CPU_SSE4A', 'CPU_AVX', 'CPU_AVX2', 'OPENMP', 'SSE', 'F16C',
                  'JEMALLOC', 'BLAS_OPEN', 'BLAS_ATLAS', 'BLAS_MKL', 'BLAS_APPLE', 'LAPACK', 'MKLDNN',
                  'OPENCV', 'CAFFE', 'PROFILER', 'DIST_KVSTORE', 'CXX14', 'INT64_TENSOR_SIZE',
                  'SIGNAL_HANDLER', 'DEBUG', 'TVM_OP']


@pytest.fixture
def fresh_profiler(monkeypatch, tmp_path):
    """A new profiler state writing to tmp_path, so tests do not see each other's records."""
    monkeypatch.setattr(profiler, '_PROFILER', profiler._Profiler())
    profiler.set_config(filename=str(tmp_path / 'profile.json'))
    yield tmp_path / 'profile.json'
    profiler.set_state('stop')


def _trace(path):
    with open(path) as f:
        return json.load(f)['traceEvents']


# ---------------------------------------------------------------------------- profiler

def test_profile_operators_annotations_trace_and_stats(fresh_profiler):
    profiler.set_config(profile_all=True, aggregate_stats=True)
    profiler.set_state('run')
    with mx.cpu():      # the lanes and memory statistics below are the CPU's (a GPU adds its own)
        a = mx.nd.ones((8, 8))
        mx.nd.dot(a, a + a)
        domain = profiler.Domain('train')
        task = domain.new_task('step')
        task.start()
        a * 2
        task.stop()
    frame = domain.new_frame('iteration')
    frame.start()
    frame.stop()
    event = profiler.Event('load')
    event.start()
    event.stop()
    counter = domain.new_counter('batches', 5)
    counter += 3
    counter.decrement(2)
    assert counter.value == 6 and str(counter) == 'batches'
    domain.new_marker('epoch_end').mark('global')
    profiler.set_state('stop')

    profiler.dump()
    events = _trace(fresh_profiler)
    lanes = {e['pid']: e['args']['name'] for e in events if e['ph'] == 'M'}
    assert set(lanes.values()) == {'cpu/0', 'train', 'train,frame', 'event', 'train,instant_marker'}
    ranges = {(e['cat'], e['name']) for e in events if e['ph'] == 'X'}
    # MXNet's operator names, with the torch calls inside them in the trace too
    assert {('operator', 'dot'), ('operator', 'broadcast_add'), ('operator', '_mul_scalar'),
            ('operator', '_ones'), ('operator', 'aten::mm'), ('operator', 'aten::mul'),
            ('train', 'step'), ('train,frame', 'iteration'), ('event', 'load')} <= ranges
    assert [e['args'] for e in events if e['ph'] == 'C'] == [{'batches': 5}, {'batches': 8}, {'batches': 6}]
    marker, = [e for e in events if e['ph'] == 'i']
    assert (marker['name'], marker['s'], lanes[marker['pid']]) == ('epoch_end', 'g', 'train,instant_marker')
    step, = [e for e in events if e['name'] == 'step']
    mul, = [e for e in events if e['name'] == '_mul_scalar']
    assert step['ts'] <= mul['ts'] and mul['ts'] + mul['dur'] <= step['ts'] + step['dur']   # one clock

    stats = json.loads(profiler.dumps(format='json'))
    assert stats['Unit'] == {'Time': 'ms', 'Memory': 'kB'}
    ops = stats['Time']['operator']
    assert ops['dot']['Count'] == 1 and ops['broadcast_add']['Count'] == 1
    assert not [name for name in ops if name.startswith('aten::')]     # calls inside operators not counted
    assert stats['Time']['train']['step']['Count'] == 1
    assert set(stats['Time']['train']['step']) == {'Count', 'Total', 'Min', 'Max', 'Avg'}
    assert stats['Memory']['Device Storage']['Memory: cpu/0']['Count'] >= 1

    table = profiler.dumps(sort_by='count', reset=True).split('\n')
    assert table[:3] == ['', 'Profile Statistics:', '\tNote the difference in units for different entries.']
    header = table.index('operator') + 2
    assert table[header] == ('Name                          Total Count        Time (ms)    Min Time (ms)'
                             '    Max Time (ms)    Avg Time (ms)')
    assert table[header + 1].startswith('----                          -----------        ---------')
    assert profiler.dumps() == '\nProfile Statistics:\n\tNote the difference in units for different entries.\n'


def test_pause_resume_and_dump_lifecycle(fresh_profiler):
    with pytest.raises(mx.MXNetError, match="Profiler hasn't been run"):
        profiler.dump()
    profiler.set_config(profile_imperative=True, profile_symbolic=False, profile_memory=False)
    profiler.set_state('run')
    domain = profiler.Domain('d')
    profiler.pause()
    hidden = domain.new_task('while_paused')
    hidden.start()
    hidden.stop()
    mx.nd.ones((2,)) - 1
    profiler.resume()
    mx.nd.ones((2,)) + 1
    profiler.dump(finished=False)               # writes what it has and goes on recording
    names = {e['name'] for e in _trace(fresh_profiler)}
    assert 'aten::add' in names and 'aten::sub' not in names and 'while_paused' not in names
    mx.nd.ones((2,)) * 4
    profiler.dump()                             # finished: stops and forgets
    assert {'aten::add', 'aten::mul'} <= {e['name'] for e in _trace(fresh_profiler)}
    assert not profiler._PROFILER.running
    with pytest.raises(mx.MXNetError, match="Profiler hasn't been run"):
        profiler.dump()
    assert profiler.dumps() == ''               # aggregate_stats was never on


def test_annotations_without_running_profiler_record_nothing(fresh_profiler):
    task = profiler.Task(profiler.Domain('idle'), 'work')
    task.start()
    task.stop()
    profiler.Event('never_started').stop()
    assert profiler._PROFILER.trace == []
    assert str(task) == 'work' and str(profiler.Domain('idle')) == 'idle'


def test_config_and_state_errors(fresh_profiler):
    with pytest.raises(mx.MXNetError, match="Cannot find argument 'foo'"):
        profiler.set_config(foo=1)
    with pytest.raises(mx.MXNetError, match="Invalid Parameter format for profile_all expect boolean but value='maybe'"):
        profiler.set_config(profile_all='maybe')
    with pytest.raises(mx.MXNetError, match='expect float'):
        profiler.set_config(dump_period='x')
    with pytest.raises(TypeError):
        profiler.set_config(True)
    with pytest.raises(mx.MXNetError, match="valid values are: {'server', 'worker'}"):
        profiler.set_config(profile_process='foo')
    with pytest.raises(mx.MXNetError, match='KVStore server'):
        profiler.set_config(profile_process='server')
    with pytest.raises(KeyError):
        profiler.set_state('go')
    with pytest.raises(KeyError):
        profiler.set_state('run', profile_process='foo')
    with pytest.raises(AssertionError, match='format: xml'):
        profiler.dumps(format='xml')
    with pytest.raises(AssertionError, match='sort_by: name'):
        profiler.dumps(sort_by='name')
    with pytest.raises(mx.MXNetError, match="Invalid Input: 'foo'"):
        profiler.Marker(profiler.Domain('d'), 'm').mark('foo')
    profiler.set_config(profile_all='True', aggregate_stats='1', continuous_dump=0, dump_period=2)
    assert profiler._PROFILER.config['profile_all'] is True and profiler._PROFILER.config['dump_period'] == 2.0
    profiler.pause()                            # no-ops while stopped, as MXNet
    profiler.resume()
    profiler.set_state('stop')


def test_deprecated_spellings(fresh_profiler):
    # UserWarnings as MXNet 1.9.1's (a DeprecationWarning is hidden by default, so the scripts of
    # example/profiler would not see them)
    with pytest.warns(UserWarning, match=r'profiler_set_config\(\) is deprecated') as caught:
        profiler.profiler_set_config('all', str(fresh_profiler))
    assert [w.category for w in caught] == [UserWarning]
    assert profiler._PROFILER.config['profile_all'] is True
    with pytest.warns(UserWarning, match=r'profiler_set_state\(\) is deprecated') as caught:
        profiler.profiler_set_state('run')
    assert [w.category for w in caught] == [UserWarning]
    with pytest.warns(UserWarning, match=r'dump_profile\(\) is deprecated') as caught:
        profiler.dump_profile()
    assert [w.category for w in caught] == [UserWarning]
    assert os.path.exists(fresh_profiler)


# ---------------------------------------------------------------------------- runtime

def test_features_names_and_truth():
    features = mx.runtime.Features()
    assert features is mx.runtime.Features()
    assert list(features.keys()) == MXNET_FEATURES
    assert features['CUDA'].enabled == torch.cuda.is_available()
    assert features['MKLDNN'].enabled == torch.backends.mkldnn.is_available()
    assert features['OPENMP'].enabled == torch.backends.openmp.is_available()
    assert features['LAPACK'].enabled and features['INT64_TENSOR_SIZE'].enabled
    assert not features['DEBUG'].enabled and not features['TVM_OP'].enabled
    assert not features['DIST_KVSTORE'].enabled
    assert features.is_enabled('cpu_sse') == features['CPU_SSE'].enabled
    assert repr(features['TVM_OP']) == '✖ TVM_OP' and repr(features['LAPACK']) == '✔ LAPACK'
    assert repr(features).startswith('[%s CUDA, ' % ('✔' if torch.cuda.is_available() else '✖'))
    with pytest.raises(RuntimeError, match="Feature 'FOO' is unknown, known features are:"):
        features.is_enabled('foo')
    assert [f.name for f in mx.runtime.feature_list()] == MXNET_FEATURES


# ---------------------------------------------------------------------------- util

def test_numpy_array_semantics_switch_per_thread_and_in_scopes():
    assert mx.util.is_np_array() is False and mx.util.is_np_shape() is False
    assert mx.util.set_np_shape(False) is False
    with mx.util.np_shape(False), mx.util.np_array(False):
        assert not mx.util.is_np_shape()
    with mx.util.np_array(True):
        assert mx.util.is_np_array() and not mx.util.is_np_shape()
    assert not mx.util.is_np_array()
    mx.util.set_np()
    try:
        assert mx.util.is_np_array() and mx.util.is_np_shape()
        seen = []
        worker = threading.Thread(target=lambda: seen.append((mx.util.is_np_array(), mx.util.is_np_shape())))
        worker.start()
        worker.join()
        assert seen == [(False, False)]
        with pytest.raises(ValueError, match='while NumPy array semantics is still active'):
            mx.util.set_np_shape(False)
    finally:
        mx.util.reset_np()
    assert not mx.util.is_np_array() and not mx.util.is_np_shape()
    with pytest.raises(ValueError, match='NumPy Shape semantics is required'):
        mx.util.set_np(shape=False, array=True)

    @mx.util.use_np
    class Probe:
        def method(self):
            return mx.util.is_np_array(), mx.util.is_np_shape()

        @property
        def prop(self):
            return mx.util.is_np_array()
    assert Probe().method() == (True, True) and Probe().prop is True
    assert mx.util.use_np_array(len)([1]) == 1 and not mx.util.is_np_array()
    with pytest.raises(TypeError, match='use_np_array can only decorate'):
        mx.util.use_np_array(3)


def test_numpy_ufunc_keyword_checks():
    add = mx.util.wrap_np_binary_func(lambda x1, x2, out=None: x1 + x2)
    assert add(1, 2, casting='same_kind') == 3
    with pytest.raises(NotImplementedError, match='casting=unsafe is not implemented'):
        add(1, 2, casting='unsafe')
    with pytest.raises(TypeError, match="axis is an invalid keyword"):
        add(1, 2, axis=0)
    with pytest.raises(TypeError, match='dtype=complex not understood'):
        add(1, 2, dtype='complex')


def test_numpy_shape_semantics_switch_per_thread():
    assert mx.util.set_np_shape(True) is False
    try:
        assert mx.util.is_np_shape()
        seen = []
        worker = threading.Thread(target=lambda: seen.append(mx.util.is_np_shape()))
        worker.start()
        worker.join()
        assert seen == [False]          # a per-thread switch, as MXNet's
        with mx.util.np_shape(False):
            assert not mx.util.is_np_shape()
        assert mx.util.is_np_shape()
    finally:
        assert mx.util.set_np_shape(False) is True

    @mx.util.use_np_shape
    def scalar_one():
        """doc"""
        return mx.util.is_np_shape(), mx.nd.ones(shape=()).shape
    assert scalar_one() == (True, ()) and scalar_one.__doc__ == 'doc'
    assert not mx.util.is_np_shape()
    # in NumPy shape semantics 0 is a size, so a zero-size argument is known
    with mx.util.np_shape():
        assert (mx.sym.var('x') * 2).infer_shape(x=(0, 3))[1] == [(0, 3)]
    with pytest.warns(UserWarning, match='Cannot decide'):
        assert (mx.sym.var('x') * 2).infer_shape(x=(0, 3)) == (None, None, None)


def test_util_helpers(monkeypatch):
    assert mx.util.get_gpu_count() == torch.cuda.device_count()
    with pytest.raises(ValueError, match='Expecting a gpu context'):
        mx.util.get_cuda_compute_capability(mx.cpu())
    if not torch.cuda.is_available():
        with pytest.raises(mx.MXNetError, match='not available'):
            mx.util.get_gpu_memory(0)

    @mx.util.set_module('neomx.custom')
    def f():
        return 1
    assert f.__module__ == 'neomx.custom'

    monkeypatch.delenv('NEOMX_TEST_ENV', raising=False)
    assert mx.util.getenv('NEOMX_TEST_ENV') is None
    mx.util.setenv('NEOMX_TEST_ENV', '1')
    assert mx.util.getenv('NEOMX_TEST_ENV') == '1' == os.environ['NEOMX_TEST_ENV']
    mx.util.setenv('NEOMX_TEST_ENV', None)
    assert mx.util.getenv('NEOMX_TEST_ENV') is None


# ---------------------------------------------------------------------------- engine

def test_bulk_size_is_recorded_per_scope():
    mx.engine.set_bulk_size(0)
    assert mx.engine.set_bulk_size(4) == 0
    assert mx.engine.set_bulk_size(15) == 4
    with mx.engine.bulk(3) as scope:
        assert scope is not None
        assert mx.engine.set_bulk_size(3) == 3
    assert mx.engine.set_bulk_size(0) == 15
    for bad in ('a', 2.5, None):
        with pytest.raises(TypeError):
            mx.engine.set_bulk_size(bad)


def _run_script(tmp_path, body):
    """Run ``body`` in a fresh interpreter (exit hooks only fire at interpreter exit)."""
    import subprocess
    import sys
    import textwrap
    repo = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env = dict(os.environ, PYTHONPATH=repo + os.pathsep + os.environ.get('PYTHONPATH', ''))
    script = 'import neomx as mx\n' + textwrap.dedent(body)
    subprocess.run([sys.executable, '-c', script], cwd=str(tmp_path), env=env, check=True, timeout=300)


def test_profile_never_dumped_is_written_at_exit(tmp_path):
    # MXNet's example/profiler scripts only call set_state('run') / set_state('stop'): the file
    # appears when the process ends.
    _run_script(tmp_path, """
        mx.profiler.set_config(filename='run.json', profile_all=True)
        mx.profiler.set_state('run')
        (mx.nd.ones((2, 2)) + 1).asnumpy()
        mx.profiler.set_state('stop')
    """)
    names = {e['name'] for e in _trace(tmp_path / 'run.json') if e.get('cat') == 'operator'}
    assert '_plus_scalar' in names


def test_profile_dumped_or_never_run_is_not_rewritten_at_exit(tmp_path):
    _run_script(tmp_path, """
        mx.profiler.set_config(filename='dumped.json')
        mx.profiler.set_state('run')
        mx.nd.ones((2, 2)).asnumpy()
        mx.profiler.set_state('stop')
        mx.profiler.dump()
        with open('dumped.json', 'a') as f:
            f.write('MARK')
        mx.profiler.set_config(filename='never.json')
    """)
    assert (tmp_path / 'dumped.json').read_text().endswith('MARK')
    assert not (tmp_path / 'never.json').exists()
