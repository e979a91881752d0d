"""bench/harness.py: runs the workloads of bench/workloads.{lua,py} side by
side and prints/writes the comparison table (called by bench/run).

Each workload runs in separate processes, chainlua and PyTorch alternating
(the order flips every round), with the same thread count.  Each process
warms up and times several rounds; the table shows the median, min and max
over all rounds of all processes, and the ratio chainlua / PyTorch of the
medians (for times: PyTorch / chainlua, so that > 1 always means chainlua
is better).  Standard library only.
"""
import argparse
import datetime
import json
import os
import platform
import re
import statistics
import subprocess
import sys

import busy_neighbour

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TORCH_PY = '/usr/bin/python3'
ALL = ['micro', 'node', 'infer', 'mlp', 'lenet', 'resnet18', 'vgg', 'lstm', 'nstep_lstm', 'busy']
TITLES = {
    'mlp': 'MLP 784-1000-1000-10, batch 100, SGD',
    'lenet': 'LeNet, batch 64, SGD',
    'resnet18': 'ResNet-18 32x32, batch 64, momentum SGD',
    'vgg': 'VGG-style 32x32 (BN), batch 64, momentum SGD',
    'lstm': 'LSTM LM (10000, 2x200, BPTT 35, batch 20)',
    'nstep_lstm': 'NStepLSTM LM (same model, whole sequence; PyTorch nn.LSTM)',
    'node': 'per-node overhead (fwd+bwd, 10 elements)',
    'infer': 'MLP inference, batch 1, no backprop',
}
# issue 19's targets (chainlua's advantage); the MLP's is 85 % of the GEMM roofline instead
TARGETS = {'lenet': 1.5, 'resnet18': 1.2, 'vgg': 1.2, 'lstm': 2.0, 'nstep_lstm': 1.2, 'node': 6.0, 'infer': 6.0}
MLP_ROOFLINE_TARGET = 0.85


def run(cmd, env, timeout):
    try:
        p = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return None, 'timed out after %d s' % timeout
    for line in p.stdout.splitlines():
        if line.startswith('RESULT '):
            return json.loads(line[7:]), None
    err = (p.stderr or p.stdout).strip().splitlines()
    return None, (err[-1] if err else 'no RESULT line (exit %d)' % p.returncode)


def figures(r):
    """Per-round figures in the workload's unit (rate or microseconds)."""
    out = []
    for t in r['times']:
        if t <= 0:
            continue
        if r.get('lower_is_better'):
            out.append(t * 1e6 / r['per_iter'])
        else:
            out.append(r['per_iter'] / t)
    return out


def c_baselines(build, env):
    res = {}
    for exe, pat in (('sgemm_c', r'cblas_sgemm (\d+): ([\d.]+) GFLOP/s'), ('membw', r'(\w+)_gbs ([\d.]+)'),
                     ('mlp_gemms_c', r'of a step: ([\d.]+) ms, ([\d.]+) GFLOP/s')):
        path = os.path.join(build, 'bench', exe)
        if not os.path.exists(path):
            continue
        try:
            out = subprocess.run([path], env=env, capture_output=True, text=True, timeout=600).stdout
        except subprocess.TimeoutExpired:
            continue
        if exe == 'mlp_gemms_c':
            # the mlp step's eight products alone, through cblas_sgemm
            m = re.search(pat, out)
            if m:
                res['mlp_gemms_ms'], res['mlp_gemms_gflops'] = float(m.group(1)), float(m.group(2))
            continue
        for m in re.finditer(pat, out):
            key = ('cblas_sgemm_%s_gflops' if exe == 'sgemm_c' else '%s_gbs') % m.group(1)
            res[key] = float(m.group(2))
        m = re.search(r'via sgemv: ([\d.]+) us', out)
        if m:
            res['cblas_sgemv_b1_us'] = float(m.group(1))
        if exe == 'sgemm_c' and env.get('OPENBLAS_CORETYPE'):
            # the environment pins OpenBLAS's kernels (AVX2 on an AVX-512
            # CPU: half its FMA width); the machine's ceiling is what
            # OpenBLAS reaches with the kernels it picks itself
            # (the best of two processes: one run in a slow phase of a VM
            # once put this ceiling at 203 GFLOP/s instead of 330-370)
            native = {k: v for k, v in env.items() if k != 'OPENBLAS_CORETYPE'}
            for _ in range(2):
                try:
                    out = subprocess.run([path], env=native, capture_output=True, text=True, timeout=600).stdout
                except subprocess.TimeoutExpired:
                    continue
                for m in re.finditer(pat, out):
                    key = 'cblas_sgemm_%s_native_gflops' % m.group(1)
                    res[key] = max(res.get(key, 0.0), float(m.group(2)))
    return res


def gemm_ceiling(c):
    """The machine's sgemm 2048 ceiling: cblas_sgemm from C, with the
    kernels the environment pins or the ones OpenBLAS picks, whichever is
    faster."""
    return max(c.get('cblas_sgemm_2048_gflops') or 0, c.get('cblas_sgemm_2048_native_gflops') or 0) or None


def fmt(v):
    if v is None:
        return '-'
    if v >= 1000:
        return '%.0f' % v
    if v >= 10:
        return '%.1f' % v
    return '%.3g' % v


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--build', default=os.path.join(ROOT, 'build'))
    ap.add_argument('--workloads', default=','.join(ALL))
    ap.add_argument('--rounds', type=int, default=3, help='processes per framework and workload')
    ap.add_argument('--reps', type=int, default=5, help='timed rounds per process')
    ap.add_argument('--warmup', type=int, default=3)
    ap.add_argument('--threads', type=int, default=os.cpu_count())
    ap.add_argument('--quick', action='store_true', help='short runs (checks the harness, numbers are rough)')
    ap.add_argument('--json', default=os.path.join(ROOT, 'bench', 'results', 'latest.json'))
    ap.add_argument('--timeout', type=int, default=900)
    a = ap.parse_args()

    build = os.path.abspath(a.build)
    env = dict(os.environ)
    env.update(BENCH_THREADS=str(a.threads), BENCH_REPS=str(a.reps), BENCH_WARMUP=str(a.warmup),
               BENCH_QUICK='1' if a.quick else '0', OMP_NUM_THREADS=str(a.threads),
               OPENBLAS_NUM_THREADS=str(a.threads),
               CHAINLUA_LIB=os.path.join(build, 'libchainlua.so'),
               LUA_PATH=os.path.join(ROOT, 'lua', '?.lua') + ';' + os.path.join(ROOT, 'lua', '?', 'init.lua') + ';;')
    lua_cmd = [os.path.join(build, 'chainlua')] if os.path.exists(os.path.join(build, 'chainlua')) else ['luajit']
    workloads = [w for w in a.workloads.split(',') if w]

    def versions():
        v = {}
        try:
            v['chainlua'] = subprocess.run(lua_cmd + ['-v'], env=env, capture_output=True, text=True,
                                           timeout=60).stdout.strip().replace('\n', '; ')
        except Exception as e:  # noqa: BLE001 (a version string is optional)
            v['chainlua'] = 'unknown (%s)' % e
        try:
            v['pytorch'] = subprocess.run([TORCH_PY, '-c', 'import torch; print(torch.__version__)'],
                                          capture_output=True, text=True, timeout=120).stdout.strip()
        except Exception as e:  # noqa: BLE001
            v['pytorch'] = 'unknown (%s)' % e
        return v

    meta = {
        'date': datetime.datetime.now().isoformat(timespec='seconds'),
        'machine': platform.node(), 'cpu': cpu_model(), 'cores': os.cpu_count(),
        'threads': a.threads, 'loadavg_start': os.getloadavg()[0], 'quick': a.quick,
        'rounds': a.rounds, 'reps': a.reps, 'versions': versions(),
    }
    print('chainlua vs PyTorch, %d thread(s), %d process(es) x %d round(s) per framework; load average %.1f'
          % (a.threads, a.rounds, a.reps, meta['loadavg_start']), flush=True)
    meta['c'] = c_baselines(build, env)

    results = {}
    raw_mlp = []
    for w in workloads:
        if w == 'busy':  # chainlua alone, next to a spinning process (issue 21)
            results[w] = busy_neighbour.run(lua_cmd, env, rounds=a.rounds, steps=100 if a.quick else 600,
                                            timeout=a.timeout,
                                            log=lambda s: print(s, flush=True))
            print('  %s done' % w, flush=True)
            continue
        raw = {'chainlua': [], 'pytorch': []}
        errors = {}
        for r in range(a.rounds):
            order = ['chainlua', 'pytorch'] if r % 2 == 0 else ['pytorch', 'chainlua']
            for fw in order:
                if fw == 'chainlua':
                    cmd = lua_cmd + [os.path.join('bench', 'workloads.lua'), w]
                else:
                    cmd = [TORCH_PY, os.path.join('bench', 'workloads.py'), w]
                res, err = run(cmd, env, a.timeout)
                if res is None:
                    errors[fw] = err
                    print('  %s %s: FAILED: %s' % (w, fw, err), flush=True)
                else:
                    raw[fw].append(res)
        results[w] = summarize(w, raw, errors)
        if w == 'mlp':
            raw_mlp = raw['chainlua']
        print('  %s done' % w, flush=True)

    if 'mlp' in results and results['mlp'].get('chainlua'):
        flop = results['mlp'].get('gemm_flop_per_iter')
        ceiling = gemm_ceiling(meta['c'])
        if flop and ceiling:
            roof = 100 / (flop / (ceiling * 1e9))
            results['mlp']['roofline_samples_s'] = roof
            results['mlp']['roofline_fraction'] = results['mlp']['chainlua']['median'] / roof
            results['mlp']['pytorch_roofline_fraction'] = (results['mlp']['pytorch']['median'] / roof
                                                            if results['mlp'].get('pytorch') else None)
        # the same processes' products alone (bench/workloads.lua): the step
        # split into its products and the rest, on the same machine state
        pt = [t for r in raw_mlp for t in r.get('products_times') or [] if t > 0]
        if pt:
            results['mlp']['products_ms'] = {'median': 1e3 * statistics.median(pt), 'min': 1e3 * min(pt),
                                             'max': 1e3 * max(pt)}

    table = render(meta, results)
    print()
    print(table)
    out = {'meta': meta, 'results': results, 'table': table}
    os.makedirs(os.path.dirname(os.path.abspath(a.json)), exist_ok=True)
    with open(a.json, 'w') as f:
        json.dump(out, f, indent=1, sort_keys=True)
    print('\nJSON written to %s' % os.path.relpath(a.json, ROOT))


def cpu_model():
    try:
        with open('/proc/cpuinfo') as f:
            for line in f:
                if line.startswith('model name'):
                    return line.split(':', 1)[1].strip()
    except OSError:
        pass
    return platform.processor()


def summarize(w, raw, errors):
    s = {'errors': errors}
    for fw, runs in raw.items():
        if not runs:
            continue
        if w == 'micro':
            keys = sorted(set().union(*[r['micro'].keys() for r in runs]))
            s[fw] = {k: statistics.median([r['micro'][k] for r in runs if k in r['micro']]) for k in keys}
            s[fw + '_peak_rss_mib'] = max(r.get('peak_rss_mib') or 0 for r in runs)
            continue
        v = [x for r in runs for x in figures(r)]
        s['unit'] = runs[0]['unit']
        s['lower_is_better'] = bool(runs[0].get('lower_is_better'))
        s[fw] = {'median': statistics.median(v), 'min': min(v), 'max': max(v), 'n': len(v),
                 'peak_rss_mib': max(r.get('peak_rss_mib') or 0 for r in runs)}
        cpu = [c for r in runs for c in r.get('cpu_times') or []]
        if cpu:  # process CPU seconds per iteration: less disturbed by neighbours than wall time
            s[fw]['cpu_ms_per_iter'] = {'median': 1e3 * statistics.median(cpu), 'min': 1e3 * min(cpu),
                                        'max': 1e3 * max(cpu)}
        if 'gemm_flop_per_iter' in runs[0]:
            s['gemm_flop_per_iter'] = runs[0]['gemm_flop_per_iter']
    if s.get('chainlua') and s.get('pytorch') and w != 'micro':
        c, p = s['chainlua']['median'], s['pytorch']['median']
        s['advantage'] = p / c if s['lower_is_better'] else c / p
        s['target'] = TARGETS.get(w)
    return s


def render(meta, results):
    L = []
    L.append('date %s, %s (%s, %d cores), %d thread(s), load average at start %.1f%s'
             % (meta['date'], meta['machine'], meta['cpu'], meta['cores'], meta['threads'],
                meta['loadavg_start'], ', QUICK run (rough)' if meta['quick'] else ''))
    L.append('versions: chainlua: %s | PyTorch %s' % (meta['versions'].get('chainlua'), meta['versions'].get('pytorch')))
    L.append('')
    L.append('| workload | unit | chainlua median (min-max) | PyTorch median (min-max) | chainlua advantage | target |')
    L.append('|---|---|---|---|---|---|')
    for w in ['mlp', 'lenet', 'resnet18', 'vgg', 'lstm', 'nstep_lstm', 'node', 'infer']:
        s = results.get(w)
        if not s:
            continue

        def cell(fw):
            d = s.get(fw)
            if not d:
                return 'FAILED: %s' % s['errors'].get(fw, '?')
            return '%s (%s-%s)' % (fmt(d['median']), fmt(d['min']), fmt(d['max']))
        adv = s.get('advantage')
        tgt = s.get('target')
        if tgt:
            verdict = '>= %.1fx %s' % (tgt, 'met' if adv and adv >= tgt else 'MISSED')
        elif w == 'mlp' and s.get('roofline_fraction'):
            verdict = '>= %.0f%% of the roofline: %.0f%% %s' % (
                100 * MLP_ROOFLINE_TARGET, 100 * s['roofline_fraction'],
                'met' if s['roofline_fraction'] >= MLP_ROOFLINE_TARGET else 'MISSED')
        else:
            verdict = '-'
        L.append('| %s | %s | %s | %s | %s | %s |' % (
            TITLES[w], s.get('unit', '?'), cell('chainlua'), cell('pytorch'),
            ('%.2fx' % adv) if adv else '-', verdict))
    cpu = [(w, results[w]) for w in ('resnet18', 'vgg', 'lstm', 'nstep_lstm')
           if w in results and 'cpu_ms_per_iter' in (results[w].get('chainlua') or results[w].get('pytorch') or {})]
    if cpu:
        L.append('')
        L.append('| process CPU time per iteration, ms median (min-max) | chainlua | PyTorch | advantage |')
        L.append('|---|---|---|---|')
        for w, s in cpu:
            c = (s.get('chainlua') or {}).get('cpu_ms_per_iter')
            p = (s.get('pytorch') or {}).get('cpu_ms_per_iter')
            cell = lambda d: '%s (%s-%s)' % (fmt(d['median']), fmt(d['min']), fmt(d['max'])) if d else '-'
            L.append('| %s | %s | %s | %s |' % (TITLES[w], cell(c), cell(p),
                                                ('%.2fx' % (p['median'] / c['median'])) if c and p else '-'))
    mem = [(w, results[w]) for w in ('mlp', 'lenet', 'resnet18', 'vgg', 'lstm', 'nstep_lstm') if w in results]
    if mem:
        L.append('')
        L.append('| peak RSS (MiB) | chainlua | PyTorch | target: chainlua <= PyTorch |')
        L.append('|---|---|---|---|')
        for w, s in mem:
            c = s.get('chainlua', {}).get('peak_rss_mib')
            p = s.get('pytorch', {}).get('peak_rss_mib')
            L.append('| %s | %s | %s | %s |' % (w, fmt(c), fmt(p), ('met' if c <= p else 'MISSED') if c and p else '-'))
    m = results.get('mlp', {})
    if m.get('roofline_samples_s'):
        L.append('')
        L.append('MLP GEMM roofline: %.2f GFLOP per iteration at %.1f GFLOP/s (cblas_sgemm 2048 from C, the faster '
                 'of the pinned and OpenBLAS\'s own kernels) = %.0f samples/s; '
                 'chainlua reaches %.0f%% (target %.0f%%), PyTorch %.0f%%'
                 % (m['gemm_flop_per_iter'] / 1e9, gemm_ceiling(meta['c']), m['roofline_samples_s'],
                    100 * m['roofline_fraction'], 100 * MLP_ROOFLINE_TARGET,
                    100 * (m.get('pytorch_roofline_fraction') or 0)))
        pm = m.get('products_ms')
        if pm:
            step_ms = 1e5 / m['chainlua']['median']
            L.append('The step\'s 8 products alone through chainlua\'s T.gemm, in the same processes: %.2f ms '
                     '(%.2f-%.2f), %.0f%% of the roofline; the step (%.2f ms) is %.0f%% products and %.2f ms the rest'
                     % (pm['median'], pm['min'], pm['max'],
                        100 * m['gemm_flop_per_iter'] / (pm['median'] * 1e-3) / (gemm_ceiling(meta['c']) * 1e9),
                        step_ms, 100 * pm['median'] / step_ms, step_ms - pm['median']))
        g = meta['c'].get('mlp_gemms_gflops')
        if g:
            # what no framework on this BLAS can pass: the step's products alone
            L.append('The step\'s 8 products alone, through cblas_sgemm from C (bench/mlp_gemms_c.c): %.2f ms, '
                     '%.0f%% of the roofline (%.0f samples/s)'
                     % (meta['c']['mlp_gemms_ms'], 100 * g / gemm_ceiling(meta['c']),
                        100 / (meta['c']['mlp_gemms_ms'] / 1e3)))
    if results.get('busy'):
        L.append('')
        L.append(busy_neighbour.render(results['busy']))
    mi = results.get('micro')
    if mi and (mi.get('chainlua') or mi.get('pytorch')):
        c, p, cc = mi.get('chainlua', {}), mi.get('pytorch', {}), meta['c']
        L.append('')
        L.append('| micro (issue 2) | chainlua | PyTorch | C ceiling |')
        L.append('|---|---|---|---|')
        rows = [('add 10^7 float32 into out, GB/s', 'add_1e7_gbs', cc.get('copy_gbs'), 'memory copy (r+w)'),
                ('add 10^7 float32 new result, GB/s', 'add_1e7_alloc_gbs', cc.get('copy_gbs'), 'memory copy (r+w)'),
                ('sum 10^7 float32, GB/s', 'sum_1e7_gbs', cc.get('read_gbs'), 'memory read'),
                ('sgemm 1024, GFLOP/s', 'sgemm_1024_gflops', cc.get('cblas_sgemm_1024_gflops'), 'cblas_sgemm'),
                ('sgemm 2048, GFLOP/s', 'sgemm_2048_gflops', cc.get('cblas_sgemm_2048_gflops'), 'cblas_sgemm'),
                ('sgemm 2048, GFLOP/s', 'sgemm_2048_gflops', cc.get('cblas_sgemm_2048_native_gflops'),
                 'cblas_sgemm, OpenBLAS\'s own kernels'),
                ('add of 10 elements, ns/call', 'small_add_ns', None, ''),
                ('add of 10 elements into out, ns/call', 'small_add_out_ns', None, ''),
                ('matmul (3,2,4)@(3,4,1), ns/call', 'small_bmm_ns', None, '')]
        for title, k, ceil, what in rows:
            L.append('| %s | %s | %s | %s |' % (title, fmt(c.get(k)), fmt(p.get(k)),
                                                ('%s (%s)' % (fmt(ceil), what)) if ceil else '-'))
    return '\n'.join(L)


if __name__ == '__main__':
    sys.exit(main())
