"""bench/loader_mp.py: PyTorch's DataLoader on augmented 28x28 images, the
counterpart of bench/loader_mp.lua (issue 16); bench/loader_ab.py runs both.

    python3 bench/loader_mp.py [--workers 2] [--batch 128] [--images 10000] [--epochs 2]

The same dataset and transform: random float32 images of 1x28x28 with int64
labels; a random 24x24 crop and a horizontal flip with probability 1/2
(Python's random, which DataLoader seeds per worker). DataLoader(shuffle=True,
num_workers=workers, drop_last=True: full batches, as the repeating iterator
gives) with its defaults otherwise (prefetch_factor 2, default collate).
Timed: `epochs` epochs after one warm-up batch. Prints "samples/s <rate>" and
"cpu_us/sample <us>" (CPU time of this process and its workers, per sample).
"""
import argparse
import os
import random
import time

import torch

CROP = 24


class Augmented(torch.utils.data.Dataset):
    def __init__(self, x, t):
        self.x, self.t = x, t

    def __len__(self):
        return len(self.x)

    def __getitem__(self, i):
        top, left = random.randint(0, 28 - CROP), random.randint(0, 28 - CROP)
        img = self.x[i, :, top:top + CROP, left:left + CROP]
        if random.random() < 0.5:
            img = img.flip(2)
        return img, self.t[i]


def main():
    p = argparse.ArgumentParser()
    p.add_argument('--workers', type=int, default=2)
    p.add_argument('--batch', type=int, default=128)
    p.add_argument('--images', type=int, default=10000)
    p.add_argument('--epochs', type=float, default=2)
    a = p.parse_args()
    torch.set_num_threads(1)
    torch.manual_seed(0)
    x = torch.rand(a.images, 1, 28, 28)
    t = torch.randint(0, 10, (a.images,))
    loader = torch.utils.data.DataLoader(Augmented(x, t), batch_size=a.batch, shuffle=True,
                                         num_workers=a.workers, persistent_workers=True,
                                         drop_last=True)
    batches = int(a.epochs * a.images // a.batch)
    it = iter(loader)

    def next_batch():
        nonlocal it
        try:
            return next(it)
        except StopIteration:
            it = iter(loader)
            return next(it)

    imgs, _ = next_batch()
    assert imgs.shape == (a.batch, 1, CROP, CROP)
    pids = ['self'] + [w.pid for w in it._workers]   # the worker processes of the persistent iterator

    def cpu_all():
        return sum(cpu_seconds(pid) for pid in pids)

    cpu0, start = cpu_all(), time.monotonic()
    for _ in range(batches):
        next_batch()
    elapsed, cpu = time.monotonic() - start, cpu_all() - cpu0
    print('samples/s %.1f' % (batches * a.batch / elapsed))
    print('cpu_us/sample %.2f' % (cpu / (batches * a.batch) * 1e6))


def cpu_seconds(pid):
    """CPU seconds (user + system) used so far by process pid."""
    with open('/proc/%s/stat' % pid) as f:
        fields = f.read().rsplit(')', 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf('SC_CLK_TCK')


if __name__ == '__main__':
    main()
