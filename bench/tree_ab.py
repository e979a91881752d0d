#!/usr/bin/env python3
"""bench/tree_ab.py: the same command under several settings, alternating run by
run, process CPU time per run; medians with min-max (bench/README.md, session 12).

  python3 bench/tree_ab.py ROUNDS NAME=K=V[|K=V...] NAME=... -- COMMAND...

Each NAME=K=V|K=V sets environment variables for that variant (e.g. the Lua tree:
before=LUA_PATH=/work/wt-base/lua/?.lua;...).  A run's figure is the `cpu_us X`
its output prints (bench/probe.lua's PROBE_TIME=1), else the child's own CPU time
(user + system, from wait4) in milliseconds, with the run's wall time.  The variants run in a rotating
order, round after round, so a slow spell of a shared machine hits them alike.
"""
import os, statistics, subprocess, sys, time

def main():
    argv = sys.argv[1:]
    sep = argv.index('--')
    rounds, variants, cmd = int(argv[0]), argv[1:sep], argv[sep + 1:]
    envs = []
    for v in variants:
        name, _, sets = v.partition('=')
        env = dict(os.environ)
        for kv in filter(None, sets.split('|')):
            k, _, val = kv.partition('=')
            env[k] = val
        envs.append((name, env))
    got = {name: [] for name, _ in envs}
    unit = {}
    wall = {name: [] for name, _ in envs}
    for r in range(rounds):
        order = envs[r % len(envs):] + envs[:r % len(envs)]
        for name, env in order:
            t0 = time.perf_counter()
            p = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
            out = p.stdout.read().decode()
            _, status, ru = os.wait4(p.pid, 0)
            p.returncode = status
            wall[name].append((time.perf_counter() - t0) * 1e3)
            if status != 0:
                sys.exit('%s failed:\n%s' % (name, out))
            words = out.split()
            if 'cpu_us' in words:
                value, unit[name] = float(words[words.index('cpu_us') + 1]), 'cpu_us'
            else:
                value, unit[name] = (ru.ru_utime + ru.ru_stime) * 1e3, 'process_cpu_ms'
            got[name].append(value)
            print('round %d %s %.2f (wall %.1f ms)' % (r + 1, name, value, wall[name][-1]), flush=True)
    first = envs[0][0]
    for name, _ in envs:
        v = got[name]
        wins = sum(1 for a, b in zip(v, got[first]) if a < b)
        w = wall[name]
        print('%s: %s median %.2f [%.2f-%.2f] over %d runs%s; wall ms median %.1f [%.1f-%.1f]' % (
            name, unit[name], statistics.median(v), min(v), max(v), len(v),
            '' if name == first else ', below %s in %d of %d rounds' % (first, wins, len(v)),
            statistics.median(w), min(w), max(w)))

main()
