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
