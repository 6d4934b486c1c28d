"""Run a Kubeflow job manifest on this machine, one process per pod, as its operator would.

    python tests/kubeflow_local.py JOB.yaml --map /opt/neomx=. --map /data=/tmp/vol [--append ARGS]

Each pod gets the environment its operator gives it (``kubeflow_env``), with the job's
service host names replaced by 127.0.0.1 and their ports by free local ports; its command
is the manifest's, with ``python`` and ``torchrun`` run by this interpreter and the path
prefixes of ``--map`` (the image's files, the volumes' mount paths) replaced by local
folders. The job succeeds when every pod exits with 0, as a Kubernetes Job. Pods'
outputs are printed prefixed by their names.
"""
import argparse
import os
import shlex
import socket
import subprocess
import sys
import threading
import time

from kubeflow_env import pods_of
from neomx.base import MXNetError
from neomx.launch._kube_yaml import load_manifest

__all__ = ['local_processes', 'start_job', 'wait_job', 'run_job', 'main']

# Variables of a launcher around us that must not leak into the pods.
_PLACE_VARIABLES = ('RANK', 'WORLD_SIZE', 'LOCAL_RANK', 'LOCAL_WORLD_SIZE', 'GROUP_RANK', 'ROLE_RANK',
                    'MASTER_ADDR', 'MASTER_PORT', 'TORCHELASTIC_RUN_ID', 'TORCHELASTIC_RESTART_COUNT',
                    'TORCHELASTIC_MAX_RESTARTS')


def _free_port():
    with socket.socket() as sock:
        sock.bind(('127.0.0.1', 0))
        return sock.getsockname()[1]


def _localise(value, hosts, ports):
    """``value`` with every service host name (and its port) replaced by the local ones."""
    for host in sorted(hosts, key=len, reverse=True):
        value = value.replace('%s:%d' % (host, hosts[host]), '127.0.0.1:%d' % ports[host])
        value = value.replace('"url":"%s","port":%d' % (host, hosts[host]),
                              '"url":"127.0.0.1","port":%d' % ports[host])
        if value == host:
            value = '127.0.0.1'
    return value


def _host_of_port(name, env):
    """The host a ``*_PORT`` variable goes with (MASTER_PORT: MASTER_ADDR's; DMLC_PS_ROOT_PORT:
    DMLC_PS_ROOT_URI's), or None."""
    if not name.endswith('_PORT'):
        return None
    stem = name[:-len('_PORT')]
    return env.get(stem + '_ADDR', env.get(stem + '_URI'))


def _map_paths(word, mappings):
    for prefix, local in mappings:
        if word == prefix or word.startswith(prefix + '/'):
            return local + word[len(prefix):]
        if '=' in word:
            flag, _, rest = word.partition('=')
            if rest == prefix or rest.startswith(prefix + '/'):
                return flag + '=' + local + rest[len(prefix):]
    return word


def _executable(command):
    program = os.path.basename(command[0]) if command else ''
    if program.startswith('python'):
        return [sys.executable] + command[1:]
    if program == 'torchrun':
        return [sys.executable, '-m', 'torch.distributed.run'] + command[1:]
    return command


def local_processes(job, mappings=(), append=()):
    """[(pod name, argv, env, port)] to run ``job``'s pods here (see the module docstring);
    ``port`` is the local port of the service named after the pod (None if none is)."""
    pods = pods_of(job)
    hosts = {}
    for pod in pods:
        hosts.update(pod.hosts)
    ports = {host: _free_port() for host in hosts}
    base = {k: v for k, v in os.environ.items() if k not in _PLACE_VARIABLES and not k.startswith(('PET_', 'DMLC_'))}
    processes = []
    for pod in pods:
        if not pod.command:
            raise MXNetError('pod %s has no command (the image\'s entrypoint cannot run here)' % pod.name)
        env = dict(base)
        for name, value in pod.env.items():
            host = _host_of_port(name, pod.env)
            env[name] = str(ports[host]) if host in hosts else _localise(value, hosts, ports)
        argv = _executable([_map_paths(w, mappings) for w in pod.command]) + list(append)
        own = [host for host in _rendezvous_hosts(pod.env) if host == pod.name or host.startswith(pod.name + '.')]
        processes.append((pod.name, argv, env, ports[own[0]] if own else None))
    return processes


def _rendezvous_hosts(env):
    """The service names where the pods meet: the master, the DMLC scheduler, the c10d endpoint."""
    names = [env.get(k) for k in ('MASTER_ADDR', 'PET_MASTER_ADDR', 'DMLC_PS_ROOT_URI')]
    names.append(env.get('PET_RDZV_ENDPOINT', '').rpartition(':')[0])
    return {name for name in names if name}


def _wait_listening(port, proc, patience=120):
    """Wait until the pod ``proc`` that owns a service listens on ``port`` (or exits).

    On a cluster only that pod answers at its service name; here every pod is 127.0.0.1,
    and a rendezvous that any agent may host (torchrun's c10d) must be hosted by this one.
    """
    deadline = time.monotonic() + patience
    while time.monotonic() < deadline and proc.poll() is None:
        with socket.socket() as sock:
            if sock.connect_ex(('127.0.0.1', port)) == 0:
                return
        time.sleep(0.1)


def _pump(name, stream, sink, lines):
    for line in stream:
        lines.append(line)
        sink.write('[%s] %s' % (name, line))
        sink.flush()


def start_job(job, mappings=(), append=(), sink=sys.stdout):
    """Start every pod of ``job`` here (each in its own session, as a pod is alone on its node).

    Returns [(pod name, Popen, output lines)]; the lines fill in as the pods print.
    """
    started = []
    for name, argv, env, port in local_processes(job, mappings, append):
        proc = subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                start_new_session=True)
        lines = []
        proc.pump = threading.Thread(target=_pump, args=(name, proc.stdout, sink, lines), daemon=True)
        proc.pump.start()
        started.append((name, proc, lines))
        if port is not None:
            _wait_listening(port, proc)
    return started


def wait_job(started, timeout=None):
    """Wait for the pods of :func:`start_job`: {pod name: (exit code, output lines)}.

    A pod still running at ``timeout`` is killed (exit code None).
    """
    results = {}
    for name, proc, lines in started:
        try:
            code = proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
            code = None
        proc.pump.join()
        results[name] = (code, lines)
    return results


def run_job(job, mappings=(), append=(), timeout=None, sink=sys.stdout):
    """Run every pod of ``job`` here and wait for all: {pod name: (exit code, output lines)}."""
    return wait_job(start_job(job, mappings, append, sink), timeout)


def main(argv=None):
    parser = argparse.ArgumentParser(prog='python tests/kubeflow_local.py', description=__doc__.split('\n\n')[0])
    parser.add_argument('manifest')
    parser.add_argument('--map', action='append', default=[], metavar='PREFIX=LOCAL',
                        help='replace this path prefix of the command (image files, volume mounts)')
    parser.add_argument('--append', default='', help='arguments added to every pod\'s command (quoted)')
    parser.add_argument('--timeout', type=float, default=None)
    args = parser.parse_args(argv)
    mappings = []
    for item in args.map:
        prefix, sep, local = item.partition('=')
        if not sep:
            parser.error('--map takes PREFIX=LOCAL, got %r' % item)
        mappings.append((prefix.rstrip('/'), os.path.abspath(local)))
    results = run_job(load_manifest(args.manifest), mappings, shlex.split(args.append), args.timeout)
    for name, (code, _) in results.items():
        print('%s: %s' % (name, 'timed out' if code is None else 'exit %d' % code))
    return 0 if all(code == 0 for code, _ in results.values()) else 1


if __name__ == '__main__':
    sys.exit(main())
