"""bench/busy_neighbour.py: the "busy neighbour" benchmark of issue 21.

A small MLP (bench/busy_neighbour.lua: 784-100-100-10, batch 100, SGD, 600
steps) trains on two cores, alone and next to a process that spins on one
of them, at 1 thread and at chainlua's default (2 threads, adaptive: one
while the cores are busy, docs/threads.md), and for comparison at a fixed
2 threads (CHAINLUA_ADAPTIVE_THREADS=0) with libgomp's wait and with
GOMP_SPINCOUNT=1000 (chainlua's default before adaptive threads), and with
OMP_WAIT_POLICY=passive.  Wall seconds, median of
the rounds.  Target: with the neighbour, the default is within 1.5x of
1 thread with the neighbour (a busy neighbour costs at most what losing
that core costs).

  python3 bench/busy_neighbour.py [--build build] [--rounds 3] [--steps 600]

Standard library only; bench/harness.py calls run() for `make bench`.
"""
import argparse
import os
import statistics
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TARGET = 1.5

# (label, environment added to the run); BENCH_THREADS unset = chainlua's default
CONFIGS = [
    ('1 thread', {'BENCH_THREADS': '1'}),
    ('2 threads, chainlua default (adaptive)', {}),
    ('2 threads fixed, libgomp wait', {'CHAINLUA_ADAPTIVE_THREADS': '0'}),
    ('2 threads fixed, GOMP_SPINCOUNT=1000', {'CHAINLUA_ADAPTIVE_THREADS': '0', 'GOMP_SPINCOUNT': '1000'}),
    ('2 threads fixed, OMP_WAIT_POLICY=passive', {'CHAINLUA_ADAPTIVE_THREADS': '0', 'OMP_WAIT_POLICY': 'passive'}),
]
NEIGHBOURS = ['none', 'pinned', 'unpinned']


def two_cores():
    cpus = sorted(os.sched_getaffinity(0))
    return cpus[:2] if len(cpus) >= 2 else None


def start_neighbour(kind, cores):
    """A process that spins forever: on the second core (pinned) or free to
    move between both (unpinned); None for `none`."""
    if kind == 'none':
        return None
    mask = {cores[1]} if kind == 'pinned' else set(cores)
    return subprocess.Popen([sys.executable, '-c', 'while True: pass'],
                            preexec_fn=lambda: os.sched_setaffinity(0, mask))


def run_once(lua_cmd, env, steps, cores, timeout):
    try:
        p = subprocess.run(lua_cmd + [os.path.join('bench', 'busy_neighbour.lua'), str(steps)], cwd=ROOT, env=env,
                           capture_output=True, text=True, timeout=timeout,
                           preexec_fn=lambda: os.sched_setaffinity(0, set(cores)))
    except subprocess.TimeoutExpired:
        return None, 'timed out after %d s' % timeout
    for line in p.stdout.splitlines():
        if line.startswith('RES '):
            f = line.split()
            return {'threads': int(f[4]), 'wall': float(f[6])}, None
    err = (p.stderr or p.stdout).strip().splitlines()
    return None, err[-1] if err else 'exit %d' % p.returncode


def run(lua_cmd, env, rounds=3, steps=600, timeout=300, log=print):
    """Returns {'cores', 'loadavg_start', 'steps', 'rows': [{label, threads, none, pinned, unpinned}], 'ratio'}
    (times are median wall seconds; ratio = default / 1 thread, both with the pinned neighbour)."""
    cores = two_cores()
    if not cores:
        return {'error': 'needs two cores'}
    base = dict(env)
    for k in ('BENCH_THREADS', 'OMP_NUM_THREADS', 'OPENBLAS_NUM_THREADS', 'GOMP_SPINCOUNT', 'OMP_WAIT_POLICY',
              'CHAINLUA_ADAPTIVE_THREADS'):
        base.pop(k, None)
    out = {'cores': cores, 'loadavg_start': os.getloadavg()[0], 'steps': steps, 'rows': []}
    times = {(c, n): [] for c, _ in CONFIGS for n in NEIGHBOURS}
    threads = {}
    errors = {}
    for n in NEIGHBOURS:
        nb = start_neighbour(n, cores)
        try:
            for _ in range(rounds):
                for label, extra in CONFIGS:
                    e = dict(base)
                    e.update(extra)
                    res, err = run_once(lua_cmd, e, steps, cores, timeout)
                    if res:
                        times[(label, n)].append(res['wall'])
                        threads[label] = res['threads']
                    else:
                        errors[(label, n)] = err
                        log('  busy neighbour: %s, neighbour %s: FAILED: %s' % (label, n, err))
        finally:
            if nb:
                nb.kill()
                nb.wait()
        log('  busy neighbour: neighbour %s done' % n)
    for label, _ in CONFIGS:
        row = {'label': label, 'threads': threads.get(label)}
        for n in NEIGHBOURS:
            t = times[(label, n)]
            row[n] = statistics.median(t) if t else None
        out['rows'].append(row)
    one, dflt = out['rows'][0].get('pinned'), out['rows'][1].get('pinned')
    out['ratio'] = dflt / one if one and dflt else None
    out['target'] = TARGET
    out['loadavg_end'] = os.getloadavg()[0]
    return out


def render(r):
    if r.get('error'):
        return 'busy neighbour: %s' % r['error']

    def f(v):
        return '%.2f' % v if v is not None else 'FAILED'
    L = ['| busy neighbour: small MLP, %d steps on cores %s, wall s (median) | alone | neighbour pinned to core %d '
         '| neighbour unpinned |' % (r['steps'], ','.join(map(str, r['cores'])), r['cores'][1]),
         '|---|---|---|---|']
    for row in r['rows']:
        L.append('| %s | %s | %s | %s |' % (row['label'], f(row['none']), f(row['pinned']), f(row['unpinned'])))
    if r.get('ratio'):
        L.append('busy neighbour: default / 1 thread = %.2fx (target <= %.1fx %s); load average %.1f at start, %.1f at end'
                 % (r['ratio'], r['target'], 'met' if r['ratio'] <= r['target'] else 'MISSED',
                    r['loadavg_start'], r['loadavg_end']))
    return '\n'.join(L)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--build', default=os.path.join(ROOT, 'build'))
    ap.add_argument('--rounds', type=int, default=3)
    ap.add_argument('--steps', type=int, default=600)
    ap.add_argument('--timeout', type=int, default=300)
    a = ap.parse_args()
    build = os.path.abspath(a.build)
    env = dict(os.environ)
    env.update(CHAINLUA_LIB=os.path.join(build, 'libchainlua.so'),
               LUA_PATH=os.path.join(ROOT, 'lua', '?.lua') + ';' + os.path.join(ROOT, 'lua', '?', 'init.lua') + ';;')
    exe = os.path.join(build, 'chainlua')
    lua_cmd = [exe] if os.path.exists(exe) else ['luajit']
    r = run(lua_cmd, env, a.rounds, a.steps, a.timeout, log=lambda s: print(s, flush=True))
    print()
    print(render(r))
    return 0 if not r.get('error') else 1


if __name__ == '__main__':
    sys.exit(main())
