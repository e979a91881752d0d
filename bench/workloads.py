"""bench/workloads.py: the PyTorch side of `make bench` (bench/run).

    /usr/bin/python3 bench/workloads.py WORKLOAD

The same workloads as bench/workloads.lua (same shapes, float32 random data,
forward + loss + backward + SGD update, same thread count), printed as one
line `RESULT {json}`.  Needs Debian's python3-torch.
"""
import json
import os
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

threads = int(os.environ.get('BENCH_THREADS') or 0) or os.cpu_count()
torch.set_num_threads(threads)
warmup = int(os.environ.get('BENCH_WARMUP') or 3)
reps = int(os.environ.get('BENCH_REPS') or 5)
quick = os.environ.get('BENCH_QUICK') == '1'
train_warmup = warmup if quick else max(warmup, 200)  # mlp and lenet: the steady state, as workloads.lua
torch.manual_seed(0)


def timed(fn, iters, warm):
    for _ in range(warm):
        fn()
    out = []
    for _ in range(reps):
        t0 = time.perf_counter()
        for _ in range(iters):
            fn()
        out.append((time.perf_counter() - t0) / iters)
    return out


def timed_cpu(fn, iters, warm, rounds):
    """As timed, also returning the process CPU seconds per call of each round."""
    for _ in range(warm):
        fn()
    wall, cpu = [], []
    for _ in range(rounds):
        c0, t0 = time.process_time(), time.perf_counter()
        for _ in range(iters):
            fn()
        wall.append((time.perf_counter() - t0) / iters)
        cpu.append((time.process_time() - c0) / iters)
    return wall, cpu


def peak_rss_mib():
    with open('/proc/self/status') as f:
        for line in f:
            if line.startswith('VmHWM:'):
                return int(line.split()[1]) / 1024
    return None


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.l1 = nn.Linear(784, 1000)
        self.l2 = nn.Linear(1000, 1000)
        self.l3 = nn.Linear(1000, 10)

    def forward(self, x):
        return self.l3(F.relu(self.l2(F.relu(self.l1(x)))))


def train_step(model, opt, x, t):
    def step():
        loss = F.cross_entropy(model(x), t)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
    return step


def mlp():
    model = MLP()
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    x = torch.rand(100, 784) * 2 - 1
    t = torch.randint(0, 10, (100,))
    times, cpu = timed_cpu(train_step(model, opt, x, t), 3 if quick else 20, train_warmup, 1 if quick else reps)
    return dict(unit='samples/s', per_iter=100, times=times, cpu_times=cpu)


class LeNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 20, 5)
        self.conv2 = nn.Conv2d(20, 50, 5)
        self.fc3 = nn.Linear(800, 500)
        self.fc4 = nn.Linear(500, 10)

    def forward(self, x):
        h = F.max_pool2d(F.relu(self.conv1(x)), 2)
        h = F.max_pool2d(F.relu(self.conv2(h)), 2)
        return self.fc4(F.relu(self.fc3(h.flatten(1))))


def lenet():
    model = LeNet()
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    x = torch.rand(64, 1, 28, 28)
    t = torch.randint(0, 10, (64,))
    times = timed(train_step(model, opt, x, t), 2 if quick else 10, train_warmup)
    return dict(unit='samples/s', per_iter=64, times=times)


class BasicBlock(nn.Module):
    """ResNet's BasicBlock (as torchvision's, convolutions without bias)."""

    def __init__(self, cin, cout, stride):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(cout)
        self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(cout)
        self.shortcut = None
        if stride != 1 or cin != cout:
            self.shortcut = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, 0, bias=False), nn.BatchNorm2d(cout))

    def forward(self, x):
        h = F.relu(self.bn1(self.conv1(x)))
        h = self.bn2(self.conv2(h))
        return F.relu(h + (self.shortcut(x) if self.shortcut is not None else x))


class ResNet18(nn.Module):
    """ResNet-18 in its CIFAR form: 3x3 stem, 64-128-256-512, global average pooling, fc 10."""

    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 64, 3, 1, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(64)
        blocks, cin = [], 64
        for i, cout in enumerate((64, 128, 256, 512)):
            blocks += [BasicBlock(cin, cout, 1 if i == 0 else 2), BasicBlock(cout, cout, 1)]
            cin = cout
        self.blocks = nn.Sequential(*blocks)
        self.fc = nn.Linear(512, 10)

    def forward(self, x):
        h = self.blocks(F.relu(self.bn1(self.conv1(x))))
        return self.fc(F.avg_pool2d(h, 4).flatten(1))


VGG_CFG = (64, 64, 'M', 128, 128, 'M', 256, 256, 'M', 512, 'M')


class VGG(nn.Module):
    """3x3 conv + BN + ReLU, max pooling 2: 64-64-M-128-128-M-256-256-M-512-M, fc 10."""

    def __init__(self):
        super().__init__()
        layers, cin = [], 3
        for c in VGG_CFG:
            if c == 'M':
                layers.append(nn.MaxPool2d(2))
            else:
                layers += [nn.Conv2d(cin, c, 3, 1, 1, bias=False), nn.BatchNorm2d(c), nn.ReLU()]
                cin = c
        self.features = nn.Sequential(*layers)
        self.fc = nn.Linear(512 * 2 * 2, 10)

    def forward(self, x):
        return self.fc(self.features(x).flatten(1))


def cnn(model):
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    x = torch.rand(64, 3, 32, 32)
    t = torch.randint(0, 10, (64,))
    times, cpu = timed_cpu(train_step(model, opt, x, t), 1, min(warmup, 1), 1 if quick else reps)
    return dict(unit='samples/s', per_iter=64, times=times, cpu_times=cpu)


def resnet18():
    return cnn(ResNet18())


def vgg():
    return cnn(VGG())


class RNNLM(nn.Module):
    """Chainer's PTB example (without dropout): LSTMCell per step."""

    def __init__(self, n_vocab, n_units):
        super().__init__()
        self.embed = nn.Embedding(n_vocab, n_units)
        self.l1 = nn.LSTMCell(n_units, n_units)
        self.l2 = nn.LSTMCell(n_units, n_units)
        self.l3 = nn.Linear(n_units, n_vocab)
        self.state = None

    def forward(self, x):
        h = self.embed(x)
        if self.state is None:
            s1 = self.l1(h)
            s2 = self.l2(s1[0])
        else:
            s1 = self.l1(h, self.state[0])
            s2 = self.l2(s1[0], self.state[1])
        self.state = (s1, s2)
        return self.l3(s2[0])

    def detach_state(self):
        self.state = tuple((h.detach(), c.detach()) for h, c in self.state)


def lstm():
    vocab, units, bptt, batch = 10000, 200, 35, 20
    model = RNNLM(vocab, units)
    opt = torch.optim.SGD(model.parameters(), lr=1.0)
    words = [torch.randint(0, vocab, (batch,)) for _ in range(bptt + 1)]

    def update():
        loss = 0
        for k in range(bptt):
            loss = loss + F.cross_entropy(model(words[k]), words[k + 1])
        opt.zero_grad(set_to_none=True)
        loss.backward()
        model.detach_state()
        opt.step()
    times, cpu = timed_cpu(update, 1 if quick else 4, warmup, reps)
    return dict(unit='words/s', per_iter=bptt * batch, times=times, cpu_times=cpu)


class NStepLM(nn.Module):
    """The same language model with nn.LSTM (2 layers) over the whole sequence."""

    def __init__(self, n_vocab, n_units):
        super().__init__()
        self.embed = nn.Embedding(n_vocab, n_units)
        self.rnn = nn.LSTM(n_units, n_units, num_layers=2)
        self.out = nn.Linear(n_units, n_vocab)

    def forward(self, words, state):
        ys, state = self.rnn(self.embed(words), state)
        return self.out(ys.reshape(-1, ys.shape[-1])), state


def nstep_lstm():
    vocab, units, bptt, batch = 10000, 200, 35, 20
    model = NStepLM(vocab, units)
    opt = torch.optim.SGD(model.parameters(), lr=1.0)
    words = torch.randint(0, vocab, (bptt, batch))  # time-major, as nn.LSTM takes it
    targets = torch.randint(0, vocab, (bptt * batch,))
    state = [None]

    def update():
        logits, st = model(words, state[0])
        loss = F.cross_entropy(logits, targets)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        state[0] = tuple(s.detach() for s in st)
        opt.step()
    times, cpu = timed_cpu(update, 1 if quick else 4, warmup, reps)
    return dict(unit='words/s', per_iter=bptt * batch, times=times, cpu_times=cpu)


def node():
    a = torch.full((10,), 1.001, requires_grad=True)
    b = torch.full((10,), 0.001, requires_grad=True)
    x = torch.full((10,), 0.5, requires_grad=True)

    def step():
        h = x
        for _ in range(50):
            h = h * a + b
        h.sum().backward()
        x.grad = None
        a.grad = None
        b.grad = None
    times = timed(step, 20 if quick else 200, max(warmup, 200))
    return dict(unit='us/node', per_iter=101, times=times, lower_is_better=True)


def infer():
    model = MLP()
    x = torch.rand(1, 784) * 2 - 1
    with torch.no_grad():
        times = timed(lambda: model(x), 20 if quick else 500, max(warmup, 50 if quick else 4000))  # as workloads.lua
    return dict(unit='us/call', per_iter=1, times=times, lower_is_better=True)


def micro():
    out = {}
    n = 10 ** 7
    a, b = torch.rand(n), torch.rand(n)
    c = torch.empty(n)
    med = lambda v: sorted(v)[(len(v) - 1) // 2]
    out['add_1e7_gbs'] = 12 * n / med(timed(lambda: torch.add(a, b, out=c), 2 if quick else 10, 2)) / 1e9
    out['add_1e7_alloc_gbs'] = 12 * n / med(timed(lambda: a + b, 2 if quick else 10, 2)) / 1e9
    out['sum_1e7_gbs'] = 4 * n / med(timed(lambda: a.sum(), 2 if quick else 10, 2)) / 1e9
    for m in (1024, 2048):
        x, y = torch.rand(m, m), torch.rand(m, m)
        out['sgemm_%d_gflops' % m] = 2 * m ** 3 / med(timed(lambda: x @ y, 1, 1)) / 1e9
    s1, s2 = torch.full((10,), 1.0), torch.full((10,), 2.0)

    def adds():
        for _ in range(1000):
            torch.add(s1, s2)
    out['small_add_ns'] = min(timed(adds, 5 if quick else 50, 5)) / 1000 * 1e9
    so = torch.empty(10)

    def adds_out():
        for _ in range(1000):
            torch.add(s1, s2, out=so)
    out['small_add_out_ns'] = min(timed(adds_out, 5 if quick else 50, 5)) / 1000 * 1e9
    ba, bb = torch.ones(3, 2, 4), torch.ones(3, 4, 1)

    def bmms():
        for _ in range(100):
            torch.matmul(ba, bb)
    out['small_bmm_ns'] = min(timed(bmms, 5 if quick else 50, 5)) / 100 * 1e9
    return dict(unit='micro', micro=out, times=[0])


if __name__ == '__main__':
    name = sys.argv[1] if len(sys.argv) > 1 else 'mlp'
    fn = {'mlp': mlp, 'lenet': lenet, 'lstm': lstm, 'nstep_lstm': nstep_lstm, 'node': node, 'infer': infer, 'micro': micro,
          'resnet18': resnet18, 'vgg': vgg}.get(name)
    if fn is None:
        sys.exit('workloads.py: unknown workload %s' % name)
    r = fn()
    r.update(workload=name, threads=torch.get_num_threads(), framework='pytorch ' + torch.__version__,
             peak_rss_mib=peak_rss_mib())
    print('RESULT ' + json.dumps(r), flush=True)
