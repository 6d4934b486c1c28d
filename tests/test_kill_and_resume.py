"""Losing a worker loses nothing: SIGKILL one of 2 workers mid-epoch under
``python -m neomx.launch --max-restarts``; every worker restarts, resumes from the newest
complete checkpoint and the run ends with the parameters of an uninterrupted run."""
import os
import signal
import subprocess
import sys
import threading
import time

import numpy as np
import pytest

import neomx as mx

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TRAIN = os.path.join(ROOT, 'examples', 'train_mnist.py')
BATCHES = 30


def train(checkpoint_dir, *launcher_args):
    argv = [sys.executable, '-m', 'neomx.launch', '-n', '2', *launcher_args, 'python', TRAIN, '--kvstore', 'dist_sync',
            '--epochs', '1', '--max-batches', str(BATCHES), '--batch-size', '32', '--no-progress',
            '--checkpoint-dir', str(checkpoint_dir), '--checkpoint-every', '4', '--resume']
    return subprocess.Popen(argv, env=dict(os.environ, PYTHONPATH=ROOT), stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)


def worker_pids(marker, rank):
    """Our training processes of ``rank``: those whose command line names our own temporary folder."""
    pids = []
    for pid in filter(str.isdigit, os.listdir('/proc')):
        try:
            with open('/proc/%s/cmdline' % pid, 'rb') as f:
                cmdline = f.read().split(b'\0')
            with open('/proc/%s/environ' % pid, 'rb') as f:
                environ = f.read().split(b'\0')
        except OSError:
            continue
        if TRAIN.encode() in cmdline and marker.encode() in b' '.join(cmdline) and b'RANK=%d' % rank in environ:
            pids.append(int(pid))
    return pids


def kill_after_first_checkpoint(folder, killed, deadline):
    while time.time() < deadline:
        if any(name.endswith('.json') for name in os.listdir(folder)):
            for pid in worker_pids(str(folder), rank=1):
                os.kill(pid, signal.SIGKILL)
                killed.append(pid)
            if killed:
                return
        time.sleep(0.05)


def final_parameters(folder):
    return mx.nd.load(os.path.join(folder, 'checkpoint-0001-00000000.params'))


@pytest.mark.skipif(not sys.platform.startswith('linux'), reason='finds the worker to kill in /proc')
def test_killed_worker_restarts_and_the_run_ends_as_an_uninterrupted_one(tmp_path):
    clean, interrupted = tmp_path / 'clean', tmp_path / 'interrupted'
    interrupted.mkdir()
    run = train(interrupted, '--max-restarts', '2')
    killed = []
    killer = threading.Thread(target=kill_after_first_checkpoint, args=(interrupted, killed, time.time() + 240))
    killer.start()
    out_interrupted, _ = run.communicate(timeout=300)
    killer.join()
    reference = train(clean)
    out_clean, _ = reference.communicate(timeout=300)
    assert reference.returncode == 0, out_clean
    assert run.returncode == 0, out_interrupted
    assert killed, 'no worker was killed:\n' + out_interrupted
    assert 'Resumed from epoch 0 batch ' in out_interrupted, out_interrupted
    accuracy = [line.split('Test_acc ')[1].split()[0] for line in out_interrupted.splitlines() if 'Test_acc' in line]
    expected = [line.split('Test_acc ')[1].split()[0] for line in out_clean.splitlines() if 'Test_acc' in line]
    assert accuracy[-1:] == expected[-1:]
    mine, theirs = final_parameters(interrupted), final_parameters(clean)
    assert sorted(mine) == sorted(theirs)
    for name in mine:
        np.testing.assert_allclose(mine[name].asnumpy(), theirs[name].asnumpy(), rtol=1e-5, atol=1e-6)
    # every checkpoint file left is complete: temporary files aside, all load
    for name in os.listdir(interrupted):
        if name.endswith('.params') and not name.startswith('.'):
            mx.nd.load(str(interrupted / name))


@pytest.mark.slow
def test_a_restart_with_fewer_workers_reads_the_rest_of_the_epoch_re_sharded(tmp_path):
    # 2 workers checkpoint at batch 4 and 8; the epoch-end checkpoint never completes (its
    # .json removed, as if the job had died first); the job comes back with 1 worker
    run = train(tmp_path)
    out, _ = run.communicate(timeout=300)
    assert run.returncode == 0, out
    os.remove(tmp_path / 'checkpoint-0001-00000000.json')
    argv = [sys.executable, '-m', 'neomx.launch', '-n', '1', 'python', TRAIN, '--kvstore', 'dist_sync', '--epochs', '1',
            '--max-batches', str(BATCHES), '--batch-size', '32', '--no-progress', '--checkpoint-dir', str(tmp_path),
            '--resume']
    resumed = subprocess.run(argv, env=dict(os.environ, PYTHONPATH=ROOT), capture_output=True, text=True, timeout=300)
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    read = 28 * 32       # batch 28 of 30 was the last complete checkpoint: 28 global batches of 32
    assert 'Resumed from epoch 0 batch 28 (%d samples of the epoch read)' % read in resumed.stdout
    order = mx.gluon.checkpoint.EpochShards(60000, seed=1).order(0)
    # the one worker now reads every sample left, in the epoch's order, 32 a batch (the global batch)
    assert 'Worker 0 of 1: epoch 0, 2 batches from sample %d, first samples %s' % (read, order[read:read + 4].tolist()) \
        in resumed.stdout
