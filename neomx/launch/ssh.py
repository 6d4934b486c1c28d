"""The ssh launcher: one elastic agent per host of the hostfile, reached with ``ssh``.

Each host runs ``python3 -m neomx.launch --launcher local`` with ``--nnodes``/``--node-rank``
and the rendezvous on the first host, in the current directory (or ``--sync-dst-dir``, which
is first filled with ``rsync``), after exporting the ``--env``/``--env-worker`` variables
and this shell's ``OMP_NUM_THREADS``, ``KMP_AFFINITY``, ``LD_LIBRARY_PATH`` and
``DMLC_INTERFACE``, as MXNet's ssh launcher does. The workers are dealt out over the hosts as evenly as
possible, first hosts first; hosts beyond ``-n`` are left out.
"""
import os
import shlex
import subprocess
import sys
import time
import uuid

from .options import DEFAULT_PORT, parse_env_pairs

__all__ = ['host_commands', 'sync_commands', 'run_ssh']

_SSH = ('ssh', '-o', 'StrictHostKeyChecking=no')
# Passed on to every host when set here, as MXNet's ssh launcher does (its cloud keys excepted).
_PASSED_ON = ('OMP_NUM_THREADS', 'KMP_AFFINITY', 'LD_LIBRARY_PATH', 'DMLC_INTERFACE')


def _remote_launcher_argv(args, num_hosts, node_rank, endpoint, run_id):
    argv = ['python3', '-m', 'neomx.launch', '--launcher', 'local',
            '-n', str(args.num_workers), '-s', str(args.num_servers),
            '--nnodes', str(num_hosts), '--node-rank', str(node_rank),
            '--rdzv-endpoint', endpoint, '--rdzv-id', run_id,
            '--rdzv-timeout', '%g' % args.rdzv_timeout, '--max-restarts', str(args.max_restarts)]
    return argv + ['--'] + list(args.command)


def host_commands(args, hosts, run_id, workdir, environ=os.environ):
    """The ssh argv that starts each host's agent, one per used host of ``hosts``.

    ``hosts`` is a list of (host, ssh_port) as :func:`.options.read_hostfile` returns.
    """
    hosts = hosts[:args.num_workers]
    endpoint = args.rdzv_endpoint or '%s:%d' % (hosts[0][0], DEFAULT_PORT)
    env = {name: environ[name] for name in _PASSED_ON if name in environ}
    env.update(parse_env_pairs(args.env, environ))
    env.update(parse_env_pairs(args.env_worker, environ))
    exports = ''.join('export %s=%s; ' % (name, shlex.quote(value)) for name, value in env.items())
    commands = []
    for rank, (host, port) in enumerate(hosts):
        launcher = _remote_launcher_argv(args, len(hosts), rank, endpoint, run_id)
        remote = '%scd %s; %s' % (exports, shlex.quote(workdir), shlex.join(launcher))
        commands.append(list(_SSH) + ['-p', str(port), host, remote])
    return commands


def sync_commands(hosts, local_dir, remote_dir):
    """rsync argv copying ``local_dir`` into ``remote_dir`` of every host."""
    return [['rsync', '-az', '--rsh', shlex.join(_SSH + ('-p', str(port))),
             os.path.join(local_dir, ''), '%s:%s' % (host, remote_dir)] for host, port in hosts]


def _wait_all(processes, hosts):
    """Wait for every ssh; when one fails stop the others. Return the launcher's exit code."""
    running = dict(enumerate(processes))
    while running:
        for rank, proc in list(running.items()):
            code = proc.poll()
            if code is None:
                continue
            del running[rank]
            if code != 0:
                print('neomx.launch: host %s (node rank %d) exited with code %d; stopping the '
                      'other hosts' % (hosts[rank][0], rank, code), file=sys.stderr, flush=True)
                for other in running.values():
                    other.terminate()
                for other in running.values():
                    other.wait()
                return 1
        time.sleep(0.1)
    return 0


def run_ssh(args, hosts):
    """Run the job over ssh on ``hosts``; return the launcher's exit code."""
    hosts = hosts[:args.num_workers]
    workdir = args.sync_dst_dir or os.getcwd()
    if args.sync_dst_dir:
        for argv in sync_commands(hosts, os.getcwd(), args.sync_dst_dir):
            if subprocess.call(argv) != 0:
                print('neomx.launch: %s failed' % shlex.join(argv), file=sys.stderr)
                return 1
    commands = host_commands(args, hosts, args.rdzv_id or uuid.uuid4().hex, workdir)
    processes = [subprocess.Popen(argv) for argv in commands]
    try:
        return _wait_all(processes, hosts)
    except KeyboardInterrupt:
        for proc in processes:
            proc.terminate()
        raise
