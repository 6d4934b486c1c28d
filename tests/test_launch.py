"""neomx.launch (MXNet's tools/launch.py on torchrun's machinery) and data sharding by worker.

The launches start real worker processes on this host (small scripts that import nothing
heavy); the ssh launcher is checked through the commands it builds.
"""
import os
import socket
import subprocess
import sys
import time

import numpy as np
import pytest

import neomx as mx
from neomx.base import MXNetError
from neomx.launch import main
from neomx.launch.local import worker_counts
from neomx.launch.options import parse_args, parse_env_pairs, read_hostfile
from neomx.launch.ssh import host_commands, sync_commands

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SHOW_PLACE = """
import os, sys
names = ['RANK', 'WORLD_SIZE', 'LOCAL_RANK', 'DMLC_ROLE', 'DMLC_NUM_WORKER', 'DMLC_NUM_SERVER', 'GREETING']
# one write of the whole line: the workers share the launcher's stdout
os.write(1, ('place %s\\n' % ' '.join(os.environ.get(n, '-') for n in names)).encode())
if len(sys.argv) > 1 and os.environ['RANK'] == sys.argv[1]:
    if sys.argv[2] == 'once':           # fails on the first attempt only
        sys.exit(3 if os.environ['TORCHELASTIC_RESTART_COUNT'] == '0' else 0)
    if sys.argv[2] == 'kill':
        import signal
        os.kill(os.getpid(), signal.SIGKILL)
    sys.exit(int(sys.argv[2]))
"""


def launch(tmp_path, *argv, timeout=120):
    script = tmp_path / 'show_place.py'
    script.write_text(SHOW_PLACE)
    argv = [a.replace('SCRIPT', str(script)) for a in argv]
    env = dict(os.environ, PYTHONPATH=ROOT)
    return subprocess.run([sys.executable, '-m', 'neomx.launch'] + argv, capture_output=True,
                          text=True, timeout=timeout, env=env, cwd=str(tmp_path))


def places(stdout):
    return sorted(tuple(line.split()[1:]) for line in stdout.splitlines() if line.startswith('place '))


# ---------------------------------------------------------------- arguments
def test_mxnet_launch_flags_parse():
    args = parse_args(['-n', '4', '-s', '2', '-H', 'hosts', '--launcher', 'ssh', '--env', 'A:1',
                       '--env-worker', 'B:2', '--env-server', 'C:3', '--sync-dst-dir', '/tmp/x',
                       'python', 'train.py', '--kv-store', 'dist_sync', '-n', '9'])
    assert (args.num_workers, args.num_servers, args.hostfile, args.launcher) == (4, 2, 'hosts', 'ssh')
    assert (args.env, args.env_worker, args.env_server) == (['A:1'], ['B:2'], ['C:3'])
    assert args.sync_dst_dir == '/tmp/x'
    # everything after the command is the command's, even flags the launcher also has
    assert args.command == ['python', 'train.py', '--kv-store', 'dist_sync', '-n', '9']
    assert (args.max_restarts, args.rdzv_timeout, args.nnodes, args.node_rank) == (0, 300, 1, 0)


def test_defaults_follow_mxnet_and_pick_the_launcher():
    args = parse_args(['--num-workers', '3', '--', 'python', 'x.py'])
    assert (args.num_servers, args.launcher, args.command) == (3, 'local', ['python', 'x.py'])
    assert parse_args(['-n', '2', '-H', 'h', 'prog']).launcher == 'ssh'
    args = parse_args(['-n', '2', '--max-restarts', '3', '--rdzv-timeout', '7.5', 'prog'])
    assert (args.max_restarts, args.rdzv_timeout) == (3, 7.5)


@pytest.mark.parametrize('argv,message', [
    (['python', 'x.py'], 'num-workers'),
    (['-n', '2'], 'command'),
    (['-n', '0', 'prog'], 'at least 1'),
    (['-n', '2', '--launcher', 'pbs', 'prog'], 'invalid choice'),
    (['-n', '2', '--nnodes', '2', '--node-rank', '2', 'prog'], 'node-rank 2'),
])
def test_bad_arguments_exit_with_usage(argv, message, capsys):
    with pytest.raises(SystemExit) as e:
        parse_args(argv)
    assert e.value.code == 2 and message in capsys.readouterr().err


def test_env_pairs_and_hostfile(tmp_path):
    assert parse_env_pairs(['A:1', 'B:x:y', 'HOME'], {'HOME': '/h'}) == {'A': '1', 'B': 'x:y', 'HOME': '/h'}
    with pytest.raises(MXNetError, match="'UNSET_NAME'"):
        parse_env_pairs(['UNSET_NAME'], {})
    hostfile = tmp_path / 'hosts'
    hostfile.write_text('node1\n\n# spare\nnode2:2222  \n')
    assert read_hostfile(str(hostfile)) == [('node1', 22), ('node2', 2222)]
    hostfile.write_text('node1:ssh\n')
    with pytest.raises(MXNetError, match='line 1'):
        read_hostfile(str(hostfile))
    with pytest.raises(MXNetError, match='cannot read hostfile'):
        read_hostfile(str(tmp_path / 'missing'))


def test_workers_are_dealt_over_hosts():
    assert worker_counts(5, 2) == [3, 2]
    assert worker_counts(4, 4) == [1, 1, 1, 1]
    with pytest.raises(MXNetError, match='2 workers cannot occupy 3 hosts'):
        worker_counts(2, 3)


# ------------------------------------------------------------- ssh commands
def test_ssh_launcher_builds_one_agent_per_host():
    args = parse_args(['-n', '3', '-s', '1', '-H', 'hosts', '--env', 'OMP_NUM_THREADS:2',
                       '--env-worker', 'MSG:a b', '--max-restarts', '1', 'python', 'train.py',
                       '--kvstore', 'dist_sync'])
    hosts = [('node1', 22), ('node2', 2222), ('node3', 22), ('node4', 22)]
    commands = host_commands(args, hosts, 'job7', '/work/dir', environ={'LD_LIBRARY_PATH': '/opt/lib'})
    assert len(commands) == 3                      # a fourth host would have no worker
    # LD_LIBRARY_PATH is passed on from this shell, as MXNet's ssh launcher does
    remote = ("export LD_LIBRARY_PATH=/opt/lib; export OMP_NUM_THREADS=2; export MSG='a b'; cd /work/dir; "
              "python3 -m neomx.launch --launcher local -n 3 -s 1 --nnodes 3 --node-rank %d --rdzv-endpoint node1:29500 "
              "--rdzv-id job7 --rdzv-timeout 300 --max-restarts 1 -- python train.py --kvstore dist_sync")
    assert commands[0] == ['ssh', '-o', 'StrictHostKeyChecking=no', '-p', '22', 'node1', remote % 0]
    assert commands[1] == ['ssh', '-o', 'StrictHostKeyChecking=no', '-p', '2222', 'node2', remote % 1]
    assert commands[2][-1] == remote % 2
    assert sync_commands(hosts[1:2], '/src', '/dst') == [
        ['rsync', '-az', '--rsh', 'ssh -o StrictHostKeyChecking=no -p 2222', '/src/', 'node2:/dst']]


def run_main(argv, capsys):
    """The launcher's exit code and stderr, run in this process (for launches that start nothing)."""
    code = main(argv)
    return code, capsys.readouterr().err


def test_ssh_launcher_needs_a_hostfile(capsys):
    code, err = run_main(['-n', '2', '--launcher', 'ssh', 'python', 'x.py'], capsys)
    assert code == 2 and 'the ssh launcher needs -H HOSTFILE' in err


def test_unsupported_launchers_say_what_to_do(capsys):
    code, err = run_main(['-n', '2', '--launcher', 'mpi', 'python', 'x.py'], capsys)
    assert code == 2 and '--launcher mpi is not supported' in err


FAKE_SSH = """#!/bin/sh
# stands in for ssh: ssh -o OPTION -p PORT HOST COMMAND runs COMMAND on this host
exec sh -c "$6"
"""


def free_endpoint():
    with socket.socket() as s:
        s.bind(('127.0.0.1', 0))
        return '127.0.0.1:%d' % s.getsockname()[1]


@pytest.mark.slow
def test_ssh_launcher_runs_one_agent_per_host_through_ssh(tmp_path, monkeypatch):
    (tmp_path / 'bin').mkdir()
    (tmp_path / 'bin' / 'ssh').write_text(FAKE_SSH)
    (tmp_path / 'bin' / 'ssh').chmod(0o755)
    (tmp_path / 'hosts').write_text('127.0.0.1\nlocalhost\n')
    monkeypatch.setenv('PATH', '%s:%s' % (tmp_path / 'bin', os.environ['PATH']))
    result = launch(tmp_path, '-n', '3', '-H', 'hosts', '--rdzv-endpoint', free_endpoint(),
                    '--env', 'PYTHONPATH:' + ROOT, '--env', 'GREETING:hello', 'python', 'SCRIPT')
    assert result.returncode == 0, result.stderr
    # 3 workers over 2 hosts: 2 on the first, 1 on the second; ranks 0..2 in all
    seen = places(result.stdout)
    assert [p[0] for p in seen] == ['0', '1', '2'] and {p[1] for p in seen} == {'3'}
    assert sorted(p[2] for p in seen) == ['0', '0', '1']
    assert {p[3:] for p in seen} == {('worker', '3', '3', 'hello')}


# ------------------------------------------------------------ local launches
KV_SCRIPT = SHOW_PLACE + """
import neomx as mx
kv = mx.kv.create('dist_sync')
kv.init('w', mx.nd.zeros((2, 3)))
kv.push('w', mx.nd.ones((2, 3)) * (kv.rank + 1))
out = mx.nd.zeros((2, 3))
kv.pull('w', out=out)
os.write(1, ('kv %d %d %s\\n' % (kv.rank, kv.num_workers, out.asnumpy().ravel().tolist())).encode())
"""


def test_local_launch_places_every_worker_in_a_dist_sync_store(tmp_path):
    (tmp_path / 'kv.py').write_text(KV_SCRIPT)
    result = launch(tmp_path, '-n', '2', '-s', '1', '--launcher', 'local', '--env', 'GREETING:hi',
                    'python', str(tmp_path / 'kv.py'))
    assert result.returncode == 0, result.stderr
    assert places(result.stdout) == [('0', '2', '0', 'worker', '2', '1', 'hi'),
                                     ('1', '2', '1', 'worker', '2', '1', 'hi')]
    lines = sorted(line for line in result.stdout.splitlines() if line.startswith('kv '))
    assert lines == ['kv 0 2 %s' % ([3.0] * 6), 'kv 1 2 %s' % ([3.0] * 6)]


LISTENING_WORKER = """
import os, sys, time
import neomx as mx
kv = mx.kv.create(sys.argv[1])
kv.init(3, mx.nd.ones(2))
if sys.argv[1] == 'dist_async':
    kv.set_optimizer(mx.optimizer.SGD(learning_rate=0.1))
kv.push(3, mx.nd.ones(2))
open(os.path.join(sys.argv[2], 'ready%s' % os.environ['RANK']), 'w').close()
deadline = time.monotonic() + 100
while not os.path.exists(os.path.join(sys.argv[2], 'release')) and time.monotonic() < deadline:
    time.sleep(0.05)
"""


@pytest.mark.skipif(not os.path.exists('/proc/net/tcp'), reason='reads Linux /proc')
@pytest.mark.parametrize('kvstore', ['dist_sync', 'dist_async'])
def test_a_local_job_listens_on_loopback_only(tmp_path, kvstore):
    """While two workers hold a store (rendezvous, process group, rpc for dist_async), no
    process of the job listens outside 127.0.0.0/8."""
    from listening_sockets import is_loopback, listening_addresses, process_tree
    script = tmp_path / 'worker.py'
    script.write_text(LISTENING_WORKER)
    env = dict(os.environ, PYTHONPATH=ROOT, OMP_NUM_THREADS='1')
    for name in ('GLOO_SOCKET_IFNAME', 'TP_SOCKET_IFNAME', 'MASTER_ADDR', 'MASTER_PORT', 'RANK', 'WORLD_SIZE'):
        env.pop(name, None)
    job = subprocess.Popen([sys.executable, '-m', 'neomx.launch', '-n', '2', '--launcher', 'local',
                            sys.executable, str(script), kvstore, str(tmp_path)],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=str(tmp_path))
    try:
        deadline = time.monotonic() + 120
        while not all((tmp_path / ('ready%d' % r)).exists() for r in range(2)):
            assert job.poll() is None, job.communicate()
            assert time.monotonic() < deadline, 'the workers did not get ready'
            time.sleep(0.1)
        pids = process_tree(job.pid)
        addresses = listening_addresses(pids)
    finally:
        (tmp_path / 'release').touch()
        out, err = job.communicate(timeout=120)
    assert job.returncode == 0, err[-3000:]
    assert len(pids) >= 3 and addresses          # the launcher, two workers, and their stores
    assert all(is_loopback(address) for address, _ in addresses), addresses


def test_the_listening_scan_sees_this_process_and_tells_loopback():
    from listening_sockets import is_loopback, listening_addresses, process_tree
    with socket.socket() as server:
        server.bind(('127.0.0.1', 0))
        server.listen()
        assert ('127.0.0.1', server.getsockname()[1]) in listening_addresses(process_tree(os.getpid()))
    assert is_loopback('127.0.0.2') and is_loopback('::1') and is_loopback('::ffff:127.0.0.1')
    assert not is_loopback('0.0.0.0') and not is_loopback('::') and not is_loopback('192.0.2.2')


def test_stores_listen_on_the_address_given_when_it_is_this_hosts():
    from listening_sockets import listening_addresses, process_tree
    from neomx import _listen
    fd, port = _listen.bound_listener('127.0.0.1', 0)
    try:
        assert port > 0 and ('127.0.0.1', port) in listening_addresses(process_tree(os.getpid()))
    finally:
        os.close(fd)
    assert _listen.bound_listener('198.51.100.7', 0) is None     # TEST-NET-2: not an address of ours


@pytest.mark.parametrize('how,said', [('3', 'exited with code 3'), ('kill', 'killed by signal SIGKILL')])
def test_a_dead_worker_fails_the_launch_and_is_named(tmp_path, how, said):
    result = launch(tmp_path, '-n', '2', 'python', 'SCRIPT', '1', how)
    assert result.returncode == 1
    assert 'neomx.launch: worker rank 1 (local rank 1, pid ' in result.stderr
    assert said in result.stderr.split('worker rank 1')[1].splitlines()[0]


def test_max_restarts_restarts_every_worker_after_a_failure(tmp_path):
    result = launch(tmp_path, '-n', '2', '--max-restarts', '1', 'python', 'SCRIPT', '0', 'once')
    assert result.returncode == 0, result.stderr
    # rank 0 ran twice: its first attempt failed and the agent restarted the group (rank 1's
    # first attempt may be stopped before it prints)
    seen = places(result.stdout)
    assert seen.count(('0', '2', '0', 'worker', '2', '2', '-')) == 2
    assert 1 <= seen.count(('1', '2', '1', 'worker', '2', '2', '-')) <= 2 and len(seen) <= 4


def test_a_host_that_never_arrives_times_out_naming_the_rendezvous(tmp_path):
    endpoint = free_endpoint()
    result = launch(tmp_path, '-n', '2', '--nnodes', '2', '--rdzv-endpoint', endpoint,
                    '--rdzv-timeout', '2', 'python', 'SCRIPT')
    assert result.returncode == 1
    assert 'rendezvous at %s failed: the 2 hosts of --nnodes did not all arrive within 2 s' % endpoint \
        in result.stderr
    assert places(result.stdout) == []


# ----------------------------------------------------------------- sharding
def _padded_records(tmp_path):
    """11 one-colour 8x8 PNG records padded to fixed sizes, so byte offsets do not depend on zlib."""
    sizes = [300, 5000, 500, 2800, 350, 900, 7600, 300, 1300, 400, 3400]
    rec, idx = str(tmp_path / 'p.rec'), str(tmp_path / 'p.idx')
    writer = mx.recordio.MXIndexedRecordIO(idx, rec, 'w')
    for i, size in enumerate(sizes):
        image = np.full((8, 8, 3), i * 20, np.uint8)
        png = mx.recordio.unpack(mx.recordio.pack_img((0, float(i), i, 0), image, img_fmt='.png'))[1]
        writer.write_idx(i, mx.recordio.pack((0, float(i), i, 0), png + b'\0' * (size - len(png))))
    writer.close()
    return rec, idx


# What MXNet 1.9.1's ImageRecordIter read from the file above, part by part (None: MXNet
# fails on the empty part). Without an index the file is cut in byte ranges, with one the
# records are cut by count.
MXNET_PARTS = {
    (False, 2): [[0, 1, 2, 3, 4, 5, 6], [7, 8, 9, 10]],
    (False, 3): [[0, 1, 2, 3], [4, 5, 6], [7, 8, 9, 10]],
    (False, 4): [[0, 1, 2], [3, 4, 5, 6], None, [7, 8, 9, 10]],
    (False, 5): [[0, 1], [2, 3, 4, 5], [6], [7, 8], [9, 10]],
    (True, 2): [[0, 1, 2, 3, 4, 5], [6, 7, 8, 9, 10]],
    (True, 3): [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9, 10]],
    (True, 5): [[0, 1, 2], [3, 4, 5], [6, 7, 8], [9, 10], None],
}


@pytest.mark.parametrize('indexed,num_parts', sorted(MXNET_PARTS))
def test_image_record_iter_parts_match_mxnet(tmp_path, indexed, num_parts):
    rec, idx = _padded_records(tmp_path)
    for part_index, want in enumerate(MXNET_PARTS[indexed, num_parts]):
        kwargs = dict(path_imgrec=rec, path_imgidx=idx if indexed else '', data_shape=(3, 8, 8),
                      batch_size=1, num_parts=num_parts, part_index=part_index, device_id=-1)
        if want is None:
            with pytest.raises(MXNetError, match='part %d of %d of .*p.rec holds no record'
                               % (part_index, num_parts)):
                mx.io.ImageRecordIter(**kwargs)
            continue
        batches = list(mx.io.ImageRecordIter(**kwargs))
        assert [int(b.label[0].asnumpy()[0]) for b in batches] == want
        for b in batches:
            np.testing.assert_array_equal(b.data[0].asnumpy(), np.full((1, 3, 8, 8), b.label[0].asnumpy()[0] * 20))


def test_image_record_iter_part_index_out_of_range(tmp_path):
    rec, _ = _padded_records(tmp_path)
    with pytest.raises(MXNetError, match=r'part_index 2 is not in \[0, num_parts 2\)'):
        mx.io.ImageRecordIter(path_imgrec=rec, data_shape=(3, 8, 8), batch_size=1, num_parts=2, part_index=2)


def test_dataset_shard_by_worker_covers_the_data_once():
    data = mx.gluon.data.ArrayDataset(np.arange(11, dtype=np.float32) * 10, np.arange(11))
    parts = [data.shard(3, rank) for rank in range(3)]
    assert [[int(label) for _, label in part] for part in parts] == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9, 10]]
    loader = mx.gluon.data.DataLoader(parts[1], batch_size=3)
    np.testing.assert_array_equal(np.concatenate([x.asnumpy() for x, _ in loader]), [40, 50, 60, 70])


def test_train_mnist_workers_share_each_epoch_once():
    # train_mnist's cut: every worker takes every n-th sample of the epoch's order (EpochShards)
    shards = mx.gluon.checkpoint.EpochShards(10, seed=1)
    parts = [shards.indices(0, rank, 3) for rank in range(3)]
    assert [len(p) for p in parts] == [4, 3, 3]
    assert sorted(np.concatenate(parts).tolist()) == list(range(10))


@pytest.mark.slow
@pytest.mark.parametrize('kvstore', ['dist_sync', 'dist_async'])
def test_train_mnist_on_two_workers(tmp_path, kvstore):
    result = launch(tmp_path, '-n', '2', 'python', os.path.join(ROOT, 'examples', 'train_mnist.py'),
                    '--kvstore', kvstore, '--epochs', '1', '--max-batches', '50', '--no-progress',
                    timeout=900)
    assert result.returncode == 0, result.stderr
    epochs = [line for line in result.stdout.splitlines() if line.startswith('Epoch ')]
    assert len(epochs) == 1                      # worker 0 alone prints
    test_accuracy = float(epochs[0].split('Test_acc ')[1].split()[0])
    assert test_accuracy > 0.6                   # 50 steps of batch 64: about 0.8
