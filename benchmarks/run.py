"""Run the benchmark suite and write benchmarks/RESULTS.md.

    python benchmarks/run.py                 # every bench_*.py module
    python benchmarks/run.py bench_ops       # selected modules

Each figure is neomx's time divided by raw PyTorch's time for the same work, measured in
the same process, interleaved; the target is the ratio each issue asks for. Each module
runs in a fresh interpreter, so that what one module leaves behind (arrays, thread pools,
allocator state, compiled graphs) cannot weigh on the next one's figures.
"""
import dataclasses
import datetime
import importlib
import json
import os
import platform
import subprocess
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.dirname(HERE))
from common import Result  # noqa: E402


def _modules(names):
    if names:
        return [importlib.import_module(n) for n in names]
    # every module with rows for this table; standalone scripts (bench_input, bench_sparse...) have none
    found = sorted(f[:-3] for f in os.listdir(HERE) if f.startswith('bench_') and f.endswith('.py'))
    return [m for m in map(importlib.import_module, found) if hasattr(m, 'BENCHMARKS')]


_ROW_TAG = 'benchmarks/run.py row '


def main(argv):
    if argv[:1] == ['--in-process']:        # one module, in this interpreter: rows as JSON lines
        for bench in _modules(argv[1:2])[0].BENCHMARKS:
            results = bench()       # one Result, or a list of them (one row each)
            for res in results if isinstance(results, list) else [results]:
                _print(res)
                print(_ROW_TAG + json.dumps(dataclasses.asdict(res)), flush=True)
        return
    rows = []
    modules = _modules(argv)
    for mod in modules:
        for res in _run_apart(mod.__name__):
            rows.append((mod.__name__, res))
    _write(rows, {mod.__name__ for mod in modules}, partial=bool(argv))


def _run_apart(module):
    """The Results of ``module``'s benchmarks, run in a fresh interpreter (its output shown)."""
    proc = subprocess.Popen([sys.executable, os.path.abspath(__file__), '--in-process', module],
                            stdout=subprocess.PIPE, text=True)
    results = []
    for line in proc.stdout:
        if line.startswith(_ROW_TAG):
            results.append(Result(**json.loads(line[len(_ROW_TAG):])))
        else:
            print(line, end='', flush=True)
    if proc.wait():
        raise SystemExit('benchmarks/run.py: %s failed (exit code %d)' % (module, proc.returncode))
    return results


def _print(res):
    print('%-55s neomx %10.2f us  torch %10.2f us  ratio %5.2f  target <= %.2f  %s'
                  % (res.name, res.neomx_s * 1e6, res.torch_s * 1e6, res.ratio, res.target,
                     'ok' if res.ok else 'MISSED'), flush=True)


def _write(rows, ran, partial):
    """Rewrite RESULTS.md: a re-run module's rows replace all its earlier ones. A full run
    drops the rows of modules that are gone, but keeps those of modules with nothing to
    measure on this machine (``bench_gpu`` without a GPU); the notes under the header stay."""
    path = os.path.join(HERE, 'RESULTS.md')
    rerun = {mod for mod, _ in rows}
    old = {name: row for name, row in _existing_rows(path).items()
           if row[0] not in rerun and (partial or row[0] in ran)}
    for mod, res in rows:
        old[res.name] = (mod, res)
    lines = ['# Benchmark results', '',
             'Written by `python benchmarks/run.py` on %s: %s, %s, torch %s, %d threads.'
             % (datetime.date.today().isoformat(), platform.machine(), platform.processor() or 'cpu',
                torch.__version__, torch.get_num_threads()),
             'Ratio = neomx time / raw PyTorch time for the same work in the same run (lower is better).',
             ''] + _existing_notes(path) + [
             '| module | benchmark | neomx (us) | torch (us) | ratio | target | met | note |',
             '|---|---|---:|---:|---:|---:|---|---|']
    for name, (mod, res) in old.items():
        if isinstance(res, str):
            lines.append(res)
            continue
        lines.append('| %s | %s | %.2f | %.2f | %.2f | <= %.2f | %s | %s |'
                     % (mod, name, res.neomx_s * 1e6, res.torch_s * 1e6, res.ratio, res.target,
                        'yes' if res.ok else '**no**', res.note))
    with open(path + '.tmp', 'w') as f:
        f.write('\n'.join(lines) + '\n')
    os.replace(path + '.tmp', path)


def _existing_notes(path):
    """The paragraphs between the header and the table of an earlier RESULTS.md (each
    followed by its blank line), written by hand: how and when the figures were taken."""
    if not os.path.exists(path):
        return []
    lines = open(path).read().split('\n')
    try:
        start = next(i for i, l in enumerate(lines) if l.startswith('Ratio = ')) + 2
        end = next(i for i, l in enumerate(lines) if l.startswith('| module |'))
    except (ValueError, StopIteration):
        return []
    return lines[start:end]


def _existing_rows(path):
    """Rows of an earlier RESULTS.md, kept when only some modules are re-run."""
    rows = {}
    if os.path.exists(path):
        for line in open(path):
            cells = [c.strip() for c in line.strip().strip('|').split('|')]
            if line.startswith('| bench_') and len(cells) >= 2:
                rows[cells[1]] = (cells[0], line.rstrip('\n'))
    return rows


if __name__ == '__main__':
    main(sys.argv[1:])
