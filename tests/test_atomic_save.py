"""Saving never loses or misplaces data: every file neomx writes is replaced atomically,
through symbolic links, keeping its mode, and a killed save leaves the old file intact."""
import glob
import os
import signal
import stat
import subprocess
import sys
import time

import numpy as np
import pytest

import neomx as mx
from neomx import recordio
from neomx.base import AtomicFile, MXNetError, atomic_write


def _leftovers(folder):
    return glob.glob(os.path.join(str(folder), '.*.tmp'))


# ------------------------------------------------------------- atomic_write itself
def test_a_symlink_is_written_through(tmp_path):
    target = tmp_path / 'real.params'
    link = tmp_path / 'link.params'
    mx.nd.save(str(target), [mx.nd.zeros((2,))])
    link.symlink_to(target)
    mx.nd.save(str(link), [mx.nd.ones((2,))])
    assert link.is_symlink()
    np.testing.assert_array_equal(mx.nd.load(str(target))[0].asnumpy(), [1, 1])
    assert not _leftovers(tmp_path)


def test_a_relative_symlink_into_another_folder_is_written_through(tmp_path):
    (tmp_path / 'store').mkdir()
    (tmp_path / 'store' / 'w.bin').write_bytes(b'old')
    (tmp_path / 'w.bin').symlink_to(os.path.join('store', 'w.bin'))
    atomic_write(tmp_path / 'w.bin', [b'new'])
    assert (tmp_path / 'store' / 'w.bin').read_bytes() == b'new'
    assert (tmp_path / 'w.bin').is_symlink()


@pytest.mark.parametrize('mode', [0o600, 0o640, 0o755])
def test_the_mode_of_the_replaced_file_is_kept(tmp_path, mode):
    path = tmp_path / 'w.params'
    path.write_bytes(b'old')
    os.chmod(path, mode)
    mx.nd.save(str(path), [mx.nd.ones((2,))])
    assert stat.S_IMODE(os.stat(path).st_mode) == mode


def test_a_new_file_gets_the_umask_mode(tmp_path):
    old = os.umask(0o027)
    try:
        atomic_write(tmp_path / 'new.bin', [b'x'])
    finally:
        os.umask(old)
    assert stat.S_IMODE(os.stat(tmp_path / 'new.bin').st_mode) == 0o640


def test_a_failing_producer_leaves_the_old_file_and_no_temporary(tmp_path):
    path = tmp_path / 'w.bin'
    path.write_bytes(b'old')

    def chunks():
        yield b'partial'
        raise KeyboardInterrupt
    with pytest.raises(KeyboardInterrupt):
        atomic_write(path, chunks())
    assert path.read_bytes() == b'old'
    assert not _leftovers(tmp_path)


def test_a_failing_rename_leaves_the_old_file_and_no_temporary(tmp_path, monkeypatch):
    path = tmp_path / 'w.bin'
    path.write_bytes(b'old')

    def refuse(src, dst):
        raise OSError(28, 'No space left on device')
    monkeypatch.setattr(os, 'replace', refuse)
    with pytest.raises(MXNetError, match='cannot write .*w.bin: No space left on device'):
        atomic_write(path, [b'new'])
    assert path.read_bytes() == b'old'
    assert not _leftovers(tmp_path)


def test_a_failing_write_leaves_the_old_file_and_no_temporary(tmp_path):
    path = tmp_path / 'w.bin'
    path.write_bytes(b'old')
    with pytest.raises(TypeError):
        atomic_write(path, [b'new', 'not bytes'])
    assert path.read_bytes() == b'old'
    assert not _leftovers(tmp_path)


def test_an_unwritable_folder_names_the_file(tmp_path):
    with pytest.raises(MXNetError, match='cannot write .*missing/w.bin'):
        atomic_write(tmp_path / 'missing' / 'w.bin', [b'x'])


# ------------------------------------------------------------- every writer uses it
def _trained_module():
    data = mx.sym.Variable('data')
    net = mx.sym.FullyConnected(data, num_hidden=2, name='fc')
    net = mx.sym.SoftmaxOutput(net, name='softmax')
    mod = mx.mod.Module(net, context=mx.cpu())
    mod.bind(data_shapes=[('data', (4, 3))], label_shapes=[('softmax_label', (4,))])
    mod.init_params()
    mod.init_optimizer(optimizer='sgd', optimizer_params={'momentum': 0.9})
    batch = mx.io.DataBatch([mx.nd.ones((4, 3))], [mx.nd.zeros((4,))])
    mod.forward_backward(batch)
    mod.update()
    return mod


def _trained_block():
    net = mx.gluon.nn.HybridSequential()
    net.add(mx.gluon.nn.Dense(2, in_units=3))
    net.initialize()
    net.hybridize()
    trainer = mx.gluon.Trainer(net.collect_params(), 'sgd', {'momentum': 0.9})
    with mx.autograd.record():
        loss = net(mx.nd.ones((4, 3))).sum()
    loss.backward()
    trainer.step(4)
    return net, trainer


def _kvstore_with_states():
    kv = mx.kv.create('local')
    kv.set_optimizer(mx.optimizer.SGD(momentum=0.9))
    kv.init(0, mx.nd.ones((2,)))
    kv.push(0, mx.nd.ones((2,)))
    return kv


def _write_records(rec, idx):
    writer = recordio.MXIndexedRecordIO(str(idx), str(rec), 'w')
    writer.write_idx(0, b'record')
    writer.close()


def _download(source, target):
    with open(source, 'wb') as f:
        f.write(b'downloaded')
    mx.gluon.utils.download('file://' + source, path=target, overwrite=True)


def _writers(tmp_path):
    """name -> (function writing, files it writes)."""
    p = str(tmp_path / 'x')
    return {
        'download': (lambda: _download(str(tmp_path / 'source.bin'), p + '.bin'), [p + '.bin']),
        'nd.save': (lambda: mx.nd.save(p + '.params', [mx.nd.ones(2)]), [p + '.params']),
        'Module.save_optimizer_states': (lambda: _trained_module().save_optimizer_states(p + '.states'),
                                         [p + '.states']),
        'Module.save_checkpoint': (lambda: _trained_module().save_checkpoint(p, 3, save_optimizer_states=True),
                                   [p + '-symbol.json', p + '-0003.params', p + '-0003.states']),
        'Trainer.save_states': (lambda: _trained_block()[1].save_states(p + '.states'), [p + '.states']),
        'HybridBlock.export': (lambda: _trained_block()[0].export(p, 1), [p + '-symbol.json', p + '-0001.params']),
        'save_parameters': (lambda: _trained_block()[0].save_parameters(p + '.params'), [p + '.params']),
        'kv.save_optimizer_states': (lambda: _kvstore_with_states().save_optimizer_states(p + '.states'),
                                     [p + '.states']),
        'MXIndexedRecordIO': (lambda: _write_records(p + '.rec', p + '.idx'), [p + '.rec', p + '.idx']),
    }


@pytest.mark.parametrize('writer', ['download', 'nd.save', 'Module.save_optimizer_states', 'Module.save_checkpoint',
                                    'Trainer.save_states', 'HybridBlock.export', 'save_parameters',
                                    'kv.save_optimizer_states', 'MXIndexedRecordIO'])
def test_every_writer_writes_through_links_and_keeps_modes(tmp_path, writer):
    write, files = _writers(tmp_path)[writer]
    store = tmp_path / 'store'
    store.mkdir()
    inodes = {}
    for name in files:
        real = store / os.path.basename(name)
        real.write_bytes(b'stale')
        os.chmod(real, 0o600)
        os.symlink(real, name)
        inodes[name] = os.stat(real).st_ino
    write()
    for name in files:
        real = store / os.path.basename(name)
        assert os.path.islink(name), name
        assert real.read_bytes() != b'stale', name
        assert stat.S_IMODE(os.stat(real).st_mode) == 0o600, name
        # a new file renamed over the old one, not the old one rewritten in place
        assert os.stat(real).st_ino != inodes[name], name
    assert not _leftovers(tmp_path) and not _leftovers(store)


# ------------------------------------------------------------- killed saves
_SIZE = 8 << 20          # float32 values: a 32 MiB file


def _in_child(work):
    """Run ``work(ready)`` in a forked process; ``ready()`` tells the parent where it is."""
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read_end)
        try:
            work(lambda: os.write(write_end, b'.'))
        finally:
            os._exit(0)
    os.close(write_end)
    return pid, read_end


def _kill(pid, read_end, signals, delay=0.0):
    """Wait for ``signals`` signals from the child (then ``delay`` seconds) and SIGKILL it."""
    got = 0
    while got < signals:
        chunk = os.read(read_end, 1)
        assert chunk, 'the child ended early'
        got += len(chunk)
    time.sleep(delay)
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
    os.close(read_end)


def _assert_uniform_params(path):
    """The file holds one complete array of _SIZE equal values; return the value."""
    (values,) = mx.nd.load(str(path))
    values = values.asnumpy()
    assert values.shape == (_SIZE,)
    assert (values == values[0]).all()
    return values[0]


@pytest.mark.parametrize('pause_after', [0, 4, 8])   # chunks of 4 MiB: none, half, all written
def test_a_save_killed_at_any_point_leaves_the_old_file(tmp_path, pause_after):
    path = tmp_path / 'big.params'
    mx.nd.save(str(path), [mx.nd.full((_SIZE,), 7)])
    chunk = b'\x01' * (4 << 20)

    def work(ready):
        def chunks():
            for i in range(8):
                if i == pause_after:
                    ready()
                    time.sleep(60)
                yield chunk
            ready()                 # every byte written; the rename is next
            time.sleep(60)
        atomic_write(path, chunks())
    pid, read_end = _in_child(work)
    _kill(pid, read_end, 1)
    assert _assert_uniform_params(path) == 7
    leftovers = _leftovers(tmp_path)      # where a killed save leaves its temporary file
    assert len(leftovers) == 1 and os.path.basename(leftovers[0]).startswith('.big.params.')
    os.remove(leftovers[0])


# Forks a writer per kill point and SIGKILLs it after its first complete save (plus a
# delay: during a later save). It runs in a fresh interpreter that does no array work before
# forking: torch's CPU thread pool does not survive a fork (a forked child would hang).
_SAVE_LOOP = r"""
import os, signal, sys, time
import neomx as mx
size, folder, delays = int(sys.argv[1]), sys.argv[2], [float(d) for d in sys.argv[3:]]
for k, delay in enumerate(delays):
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            for i in range(1, 1000):
                mx.nd.save(os.path.join(folder, 'big%d.params' % k), [mx.nd.full((size,), i)])
                os.write(write_end, b'.')
        finally:
            os._exit(0)
    os.close(write_end)
    assert os.read(read_end, 1) == b'.'
    time.sleep(delay)
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
    os.close(read_end)
"""


def test_nd_save_killed_in_a_loop_leaves_a_complete_file(tmp_path):
    delays = ['0', '0.1', '0.25']
    for k in range(len(delays)):
        mx.nd.save(str(tmp_path / ('big%d.params' % k)), [mx.nd.full((_SIZE,), 0)])
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    subprocess.run([sys.executable, '-c', _SAVE_LOOP, str(_SIZE), str(tmp_path)] + delays,
                   env=env, check=True, timeout=300)
    for k in range(len(delays)):
        # the newest complete save: at least the first, never a mix or a truncated file
        assert _assert_uniform_params(tmp_path / ('big%d.params' % k)) >= 1


def test_a_killed_recordio_writer_leaves_the_old_files(tmp_path):
    rec, idx = tmp_path / 'data.rec', tmp_path / 'data.idx'
    _write_records(rec, idx)
    old = rec.read_bytes(), idx.read_bytes()

    def work(ready):
        writer = recordio.MXIndexedRecordIO(str(idx), str(rec), 'w')
        for i in range(64):
            writer.write_idx(i, b'\x02' * (1 << 16))
        ready()
        time.sleep(60)
    pid, read_end = _in_child(work)
    _kill(pid, read_end, 1)
    assert (rec.read_bytes(), idx.read_bytes()) == old
    reader = recordio.MXIndexedRecordIO(str(idx), str(rec), 'r')
    assert reader.read_idx(0) == b'record'
    reader.close()


def test_atomic_file_streams_and_commits(tmp_path):
    path = tmp_path / 'stream.bin'
    path.write_bytes(b'old')
    f = AtomicFile(path)
    f.write(b'ab')
    f.write(b'cd')
    assert path.read_bytes() == b'old' and f.tell() == 4
    f.commit()
    assert path.read_bytes() == b'abcd'
    with AtomicFile(path) as g:
        g.write(b'zz')
        g.discard()
    assert path.read_bytes() == b'abcd'
    assert not _leftovers(tmp_path)
