# bench/lenet_conv.py: PyTorch twin of lenet_conv.lua (same shapes, float32,
# torch.nn.functional.conv2d forward + backward, same thread count).
#   python3 bench/lenet_conv.py [threads] [iterations] [wall|cpu]
import sys, time
import torch
import torch.nn.functional as F

threads = int(sys.argv[1]) if len(sys.argv) > 1 else 2
iters = int(sys.argv[2]) if len(sys.argv) > 2 else 200
use_cpu = len(sys.argv) > 3 and sys.argv[3] == 'cpu'
clock = time.process_time if use_cpu else time.perf_counter
torch.set_num_threads(threads)
torch.manual_seed(0)

def layer(n, c, h, co, k, need_gx):
    x = (torch.rand(n, c, h, h) * 2 - 1).requires_grad_(need_gx)
    W = ((torch.rand(co, c, k, k) * 2 - 1) * 0.1).requires_grad_(True)
    b = torch.zeros(co, requires_grad=True)
    oh = h - k + 1
    gy = torch.rand(n, co, oh, oh) * 2 - 1
    def fwd():
        with torch.no_grad():
            return F.conv2d(x, W, b)
    def step():
        y = F.conv2d(x, W, b)
        y.backward(gy)
        W.grad = None; b.grad = None; x.grad = None
    return fwd, step

def timeit(fn):
    for _ in range(10): fn()
    rounds = []
    for _ in range(5):
        t0 = clock()
        for _ in range(iters): fn()
        rounds.append((clock() - t0) / iters * 1e3)
    rounds.sort()
    return rounds[len(rounds) // 2], rounds[0]

f1, s1 = layer(64, 1, 28, 20, 5, False)
f2, s2 = layer(64, 20, 12, 50, 5, True)
r = [('conv1 forward', timeit(f1)), ('conv1 fwd+bwd', timeit(s1)),
     ('conv2 forward', timeit(f2)), ('conv2 fwd+bwd', timeit(s2))]
print('torch %s, %d threads, %s clock, mkldnn=%s' % (torch.__version__, threads, 'cpu' if use_cpu else 'wall',
      torch.backends.mkldnn.is_available()))
for name, (med, best) in r:
    print('  %-14s %8.3f ms median %8.3f ms min' % (name, med, best))
print('  %-14s %8.3f ms median %8.3f ms min' % ('both fwd+bwd', r[1][1][0] + r[3][1][0], r[1][1][1] + r[3][1][1]))
