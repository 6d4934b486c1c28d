"""``bench_amp``'s training steps by process CPU time: float32 and ``amp.init('bfloat16')`` take
turns, each run in a fresh interpreter (``amp.init`` changes the process for good), and the
medians of their per-step CPU times are compared. On a shared machine, where wall-clock
times at two threads mostly measure the neighbours, this is the figure to trust; use one
thread there (a descheduled thread of two stalls the other, and its wait counts as CPU time).

    python benchmarks/amp_cpu_time.py lenet [--threads 1] [--runs 3]
    python benchmarks/amp_cpu_time.py worker lenet bf16    # one run: CPU ms per step
"""
import os
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
_STEPS = {'lenet': (10, 5), 'resnet': (3, 5)}      # steps per round, rounds


def worker(workload, precision):
    """Median CPU milliseconds per step of ``workload`` in this interpreter."""
    sys.path.insert(0, HERE)
    import train_workloads
    import neomx as mx
    from neomx.contrib import amp
    if precision == 'bf16':
        amp.init('bfloat16')
    step = train_workloads.train_step(mx, workload, hybrid=True)
    for _ in range(3):
        step()
    mx.nd.waitall()
    steps, rounds = _STEPS[workload]
    times = []
    for _ in range(rounds):
        start = time.process_time()
        for _ in range(steps):
            step()
        mx.nd.waitall()
        times.append((time.process_time() - start) / steps * 1e3)
    return statistics.median(times)


def _option(argv, name, default):
    return int(argv[argv.index(name) + 1]) if name in argv else default


def main(argv):
    workload = argv[0]
    threads, runs = _option(argv, '--threads', 1), _option(argv, '--runs', 3)
    env = dict(os.environ, OMP_NUM_THREADS=str(threads))
    times = {'fp32': [], 'bf16': []}
    for _ in range(runs):
        for precision in times:
            out = subprocess.run([sys.executable, os.path.abspath(__file__), 'worker', workload, precision],
                                 capture_output=True, text=True, env=env, check=True)
            times[precision].append(float(out.stdout.split()[-1]))
    fp32, bf16 = statistics.median(times['fp32']), statistics.median(times['bf16'])
    print('%s, %d thread(s), %d runs each: float32 %.2f ms, bfloat16 %.2f ms CPU per step, ratio %.2f'
          % (workload, threads, runs, fp32, bf16, bf16 / fp32))


if __name__ == '__main__':
    if sys.argv[1:2] == ['worker']:
        print(worker(sys.argv[2], sys.argv[3]))
    else:
        main(sys.argv[1:])
