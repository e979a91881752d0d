# bench/mlp_cpu.py MODE N: the PyTorch side of bench/mlp_cpu.lua (process CPU time).
import time, torch, torch.nn as nn, torch.nn.functional as F, sys
torch.set_num_threads(int(__import__('os').environ.get('NT','1')))
class MLP(nn.Module):
    def __init__(s):
        super().__init__(); s.l1=nn.Linear(784,1000); s.l2=nn.Linear(1000,1000); s.l3=nn.Linear(1000,10)
    def forward(s,x): return s.l3(F.relu(s.l2(F.relu(s.l1(x)))))
m=MLP(); opt=torch.optim.SGD(m.parameters(), lr=0.01)
x=torch.rand(100,784)*2-1; t=torch.randint(0,10,(100,))
mode=sys.argv[1] if len(sys.argv)>1 else 'train'; n=int(sys.argv[2]) if len(sys.argv)>2 else 60
ts=[]
if mode=='train':
    def step():
        loss=F.cross_entropy(m(x),t); opt.zero_grad(set_to_none=True); loss.backward(); opt.step()
    for i in range(10): step()
    for i in range(n):
        t0=time.process_time(); step(); ts.append(time.process_time()-t0)
else:
    x1=torch.rand(1,784)*2-1
    with torch.no_grad():
        for i in range(4000): m(x1)
        for i in range(n):
            t0=time.process_time()
            for k in range(20): m(x1)
            ts.append((time.process_time()-t0)/20)
ts.sort()
print('RES %s min %.1f med %.1f'%(mode, ts[0]*1e6, ts[len(ts)//2]*1e6))
