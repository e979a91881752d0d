"""bench/cnn_profile.py: the PyTorch side of bench/cnn_profile.lua.

    /usr/bin/python3 bench/cnn_profile.py [resnet18|vgg] [threads] [batch] [reps]

Per distinct convolution shape of the model: forward, filter gradient and
data gradient in process CPU milliseconds (timed as differences, as the Lua
script does), then torch.autograd.profiler's per-op table of one training
step of the whole model (self CPU time), which shows what oneDNN spends on
convolutions against batch normalization and the rest.
"""
import sys
import time

import torch
import torch.nn.functional as F

sys.path.insert(0, __file__.rsplit('/', 1)[0])
import workloads  # noqa: E402  (the same models as make bench)

model = sys.argv[1] if len(sys.argv) > 1 else 'resnet18'
threads = int(sys.argv[2]) if len(sys.argv) > 2 else 1
N = int(sys.argv[3]) if len(sys.argv) > 3 else 64
reps = int(sys.argv[4]) if len(sys.argv) > 4 else 3
torch.set_num_threads(threads)
torch.manual_seed(0)

SHAPES = {  # (count, Cin, Cout, H, k, stride, pad)
    'resnet18': [(1, 3, 64, 32, 3, 1, 1), (4, 64, 64, 32, 3, 1, 1),
                 (1, 64, 128, 32, 3, 2, 1), (3, 128, 128, 16, 3, 1, 1), (1, 64, 128, 32, 1, 2, 0),
                 (1, 128, 256, 16, 3, 2, 1), (3, 256, 256, 8, 3, 1, 1), (1, 128, 256, 16, 1, 2, 0),
                 (1, 256, 512, 8, 3, 2, 1), (3, 512, 512, 4, 3, 1, 1), (1, 256, 512, 8, 1, 2, 0)],
    'vgg': [(1, 3, 64, 32, 3, 1, 1), (1, 64, 64, 32, 3, 1, 1), (1, 64, 128, 16, 3, 1, 1),
            (1, 128, 128, 16, 3, 1, 1), (1, 128, 256, 8, 3, 1, 1), (1, 256, 256, 8, 3, 1, 1),
            (1, 256, 512, 4, 3, 1, 1)],
}


def best(fn):
    fn()
    m = float('inf')
    for _ in range(reps):
        c0 = time.process_time()
        fn()
        m = min(m, time.process_time() - c0)
    return m * 1e3


print('%s, batch %d, %d thread(s), process CPU ms (min of %d)' % (model, N, threads, reps))
print('%-30s %5s %9s %9s %9s %9s %8s' % ('conv (Cin->Cout, HxW, k, s)', 'count', 'forward', 'bwd filt', 'bwd data',
                                         'total', 'GFLOP/s'))
tot = [0.0, 0.0, 0.0]
for cnt, ci, co, h, k, st, pad in SHAPES[model]:
    oh = (h + 2 * pad - k) // st + 1
    xa = torch.rand(N, ci, h, h) * 2 - 1
    xv = xa.clone().requires_grad_(True)
    W = (torch.rand(co, ci, k, k) * 0.2 - 0.1).requires_grad_(True)
    gy = torch.rand(N, co, oh, oh) * 2 - 1

    def run(x, back):
        y = F.conv2d(x, W, None, st, pad)
        if back:
            y.backward(gy)
        W.grad = None
        xv.grad = None
    f = best(lambda: run(xa.detach(), False))
    ff = best(lambda: run(xa, True))
    ffd = best(lambda: run(xv, True))
    p = (f, max(ff - f, 0), max(ffd - ff, 0))
    flop = 3 * 2 * N * co * oh * oh * ci * k * k
    print('%-30s %5d %9.1f %9.1f %9.1f %9.1f %8.1f' % ('%d->%d, %dx%d, %dx%d, s%d' % (ci, co, h, h, k, k, st), cnt,
                                                       p[0], p[1], p[2], cnt * sum(p), flop / (ffd * 1e-3) / 1e9))
    for i in range(3):
        tot[i] += cnt * p[i]
print('%-36s %9.1f %9.1f %9.1f %9.1f' % ('all convolutions (x count)', tot[0], tot[1], tot[2], sum(tot)))

net = workloads.ResNet18() if model == 'resnet18' else workloads.VGG()
opt = torch.optim.SGD(net.parameters(), lr=0.01, momentum=0.9)
x = torch.rand(N, 3, 32, 32)
t = torch.randint(0, 10, (N,))
step = workloads.train_step(net, opt, x, t)
step()
c0 = time.process_time()
step()
print('\nwhole step: %.1f ms CPU' % ((time.process_time() - c0) * 1e3))
with torch.autograd.profiler.profile() as prof:
    step()
print(prof.key_averages().table(sort_by='self_cpu_time_total', row_limit=14))
