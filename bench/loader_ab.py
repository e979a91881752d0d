"""bench/loader_ab.py: MultiprocessIterator (bench/loader_mp.lua) against
PyTorch's DataLoader (bench/loader_mp.py), alternating (issue 16).

    python3 bench/loader_ab.py [--rounds 7] [-- options for both scripts]

Each round runs one chainlua process and one PyTorch process, the order
flipping every round, so a neighbour's load falls on both alike. Prints
every run, then the median [min-max] samples/s of each side, the ratio of
the medians (chainlua / PyTorch) and the median [min-max] of the ratios
within each round; then the CPU time per sample (the process and its
workers over the timed part), which a busy machine disturbs less. chainlua runs through `luajit` with
LUA_PATH pointing at this checkout's lua/ (CHAINLUA_LIB picks the library),
PyTorch through /usr/bin/python3 (Debian's python3-torch).
"""
import argparse
import os
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def run(cmd, env):
    """(samples/s, CPU us per sample) from one run of a bench script."""
    out = subprocess.run(cmd, env=env, check=True, capture_output=True, text=True).stdout
    figures = {}
    for line in out.splitlines():
        key, _, value = line.partition(' ')
        figures[key] = float(value)
    if 'samples/s' not in figures or 'cpu_us/sample' not in figures:
        raise RuntimeError('no samples/s and cpu_us/sample lines from %s:\n%s' % (' '.join(cmd), out))
    return figures['samples/s'], figures['cpu_us/sample']


def main():
    p = argparse.ArgumentParser()
    p.add_argument('--rounds', type=int, default=7)
    a, rest = p.parse_known_args()
    rest = [r for r in rest if r != '--']
    env = dict(os.environ)
    env['LUA_PATH'] = '%s/lua/?.lua;%s/lua/?/init.lua;;' % (ROOT, ROOT)
    lua = ['luajit', os.path.join(HERE, 'loader_mp.lua')] + rest
    py_rest = list(rest)
    if '--prefetch' in py_rest:   # chainlua's n_prefetch: PyTorch keeps its default prefetch_factor
        k = py_rest.index('--prefetch')
        del py_rest[k:k + 2]
    py = ['/usr/bin/python3', os.path.join(HERE, 'loader_mp.py')] + py_rest
    if subprocess.run(['/usr/bin/python3', '-c', 'import torch'], capture_output=True).returncode != 0:
        sys.exit('bench/loader_ab.py: /usr/bin/python3 cannot import torch; install Debian\'s python3-torch '
                 '(apt-get install -y python3-torch, as bench/run does)')
    results = {'chainlua': [], 'pytorch': []}
    cpu = {'chainlua': [], 'pytorch': []}
    with open('/proc/loadavg') as f:
        print('load average at start:', f.read().split()[:3])
    for r in range(a.rounds):
        order = [('chainlua', lua), ('pytorch', py)]
        if r % 2:
            order.reverse()
        for name, cmd in order:
            v, us = run(cmd, env)
            results[name].append(v)
            cpu[name].append(us)
            print('round %d %-8s %9.1f samples/s %7.2f CPU us/sample' % (r + 1, name, v, us), flush=True)
    med = {}
    for name, vs in results.items():
        med[name] = statistics.median(vs)
        print('%-8s median %9.1f  [%.1f - %.1f] samples/s over %d runs' % (name, med[name], min(vs), max(vs),
                                                                       len(vs)))
    print('ratio chainlua / pytorch (medians): %.2fx' % (med['chainlua'] / med['pytorch']))
    for name, vs in cpu.items():
        print('%-8s median %7.2f  [%.2f - %.2f] CPU us/sample (process and workers, timed part)' % (
            name, statistics.median(vs), min(vs), max(vs)))
    print('CPU per sample, pytorch / chainlua (medians): %.2fx' % (statistics.median(cpu['pytorch']) /
                                                                  statistics.median(cpu['chainlua'])))
    paired = [c / t for c, t in zip(results['chainlua'], results['pytorch'])]
    print('ratio within each round: median %.2fx [%.2f - %.2f]' % (statistics.median(paired), min(paired),
                                                                  max(paired)))


if __name__ == '__main__':
    sys.exit(main())
