"""bench/node_overhead.py: the same loop as node_overhead.lua in PyTorch eager mode.

A chain of 100 tiny elementwise nodes (h = h * a + b, 50 times, on 10-element
float32 tensors), then sum and backward; prints microseconds per node
(forward + backward).  Usage: python3 bench/node_overhead.py [iterations]
"""
import sys
import time

import torch

torch.set_num_threads(1)
iters = int(sys.argv[1]) if len(sys.argv) > 1 else 4000
steps = 50
nodes = 2 * steps + 1

a = torch.full((10,), 1.001, requires_grad=True)
b = torch.full((10,), 0.001, requires_grad=True)
x = torch.full((10,), 0.5, requires_grad=True)


def run_once():
    h = x
    for _ in range(steps):
        h = h * a + b
    loss = h.sum()
    loss.backward()
    x.grad = None
    a.grad = None
    b.grad = None


# the best of many short batches (robust on a busy machine)
for _ in range(200):
    run_once()
batch = 10
best = float('inf')
for _ in range(max(1, iters // batch)):
    t0 = time.perf_counter()
    for _ in range(batch):
        run_once()
    best = min(best, (time.perf_counter() - t0) / batch)
print('pytorch %s eager: %.3f us per node (forward+backward, %d nodes, 10 elements)'
      % (torch.__version__, best / nodes * 1e6, nodes))
