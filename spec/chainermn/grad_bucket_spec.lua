-- The gradient bucket (chainer/_grad_bucket.lua) that chainermn's mean
-- gradient uses: parameters' gradients as views into one buffer per dtype,
-- written in place by backward.  One process, no MPI: the bucket is made
-- with GradBucket.of, as multi_node_mean_grad makes it; the 2-rank runs of
-- chainermn_spec.lua train through it.
local chainer = require 'chainer'
local GradBucket = require 'chainer._grad_bucket'
local T, L, F = chainer.tensor, chainer.links, chainer.functions

local function mlp(seed, dtype)
  chainer.config.dtype = dtype
  T.random.seed(seed)
  local m = chainer.Sequential(L.Linear(5, 16), F.relu, L.Linear(16, 3))
  chainer.config.dtype = 'float32'
  return m
end

local function loss_of(m, x, t) return F.softmax_cross_entropy(m(x), t) end

local function same_params(a, b)
  local pa = {}
  for name, p in a:namedparams() do pa[name] = p end
  for name, q in b:namedparams() do
    local d = (pa[name].array - q.array):abs():max():item()
    assert.are.equal(0, d, name .. ' differs by ' .. d)
  end
end

local function batch(dtype)
  return T.random.normal(0, 1, { 8, 5 }):astype(dtype), T.random.randint(0, 3, { 8 }):astype('int32')
end

-- Whether every parameter's gradient is its slot in the bucket's buffer.
local function grads_in_bucket(model, bucket)
  local base = {}
  for _, b in ipairs(bucket.buffers) do base[b.dtype] = b.tensor.ptr.data end
  for name, p in model:namedparams() do
    local g = p.grad
    if g == nil or g ~= rawget(p, '_grad_slot') or g.ptr.data ~= base[g.dtype] then return false, name end
  end
  return true
end

describe('gradient bucket', function()
  for _, case in ipairs({ { 'float64', chainer.optimizers.MomentumSGD }, { 'float32', chainer.optimizers.Adam } }) do
    local dtype, Opt = case[1], case[2]
    it('gives the same parameters as fresh gradients over several updates (' .. dtype .. ')', function()
      local a, b = mlp(3, dtype), mlp(3, dtype)
      local bucket = GradBucket.of(a)
      assert.is_not_nil(bucket)
      local oa, ob = Opt(), Opt()
      oa:setup(a)
      ob:setup(b)
      T.random.seed(11)
      for _ = 1, 5 do
        local x, t = batch(dtype)
        oa:update(loss_of, a, x, t)   -- cleargrads, backward, update
        ob:update(loss_of, b, x, t)
        assert.is_true(grads_in_bucket(a, bucket))
        assert.is_nil(rawget(b[1].W, '_grad_slot'))
      end
      same_params(a, b)
      for name, p in a:namedparams() do
        local q
        for n2, p2 in b:namedparams() do if n2 == name then q = p2 end end
        assert.are.equal(0, (p.grad - q.grad):abs():max():item(), name)
      end
    end)
  end

  it('accumulates over two backwards after zerograds, and writes after cleargrads', function()
    local a, b = mlp(5, 'float64'), mlp(5, 'float64')
    local bucket = GradBucket.of(a)
    T.random.seed(2)
    local x1, t1 = batch('float64')
    local x2, t2 = batch('float64')
    for _, m in ipairs({ a, b }) do
      m:zerograds()
      loss_of(m, x1, t1):backward()
      loss_of(m, x2, t2):backward()
    end
    assert.is_true(grads_in_bucket(a, bucket))
    for name, p in a:namedparams() do
      local q
      for n2, p2 in b:namedparams() do if n2 == name then q = p2 end end
      assert.are.equal(0, (p.grad - q.grad):abs():max():item(), name)
    end
    -- cleargrads: nil, then the next backward writes (not adds)
    a:cleargrads()
    for _, p in a:namedparams() do assert.is_nil(p.grad) end
    b:cleargrads()
    loss_of(a, x1, t1):backward()
    loss_of(b, x1, t1):backward()
    assert.is_true(grads_in_bucket(a, bucket))
    assert.are.equal(0, (a[1].W.grad - b[1].W.grad):abs():max():item())
    -- the visible difference: a grad array kept from the previous step is
    -- the slot, overwritten by the next backward
    local kept = a[1].W.grad
    a:cleargrads()
    loss_of(a, x2, t2):backward()
    assert.are.equal(kept, a[1].W.grad)
  end)

  it('keeps a gradient the user set and puts the sum in the slot', function()
    local a, b = mlp(6, 'float32'), mlp(6, 'float32')
    local bucket = GradBucket.of(a)
    T.random.seed(4)
    local x, t = batch('float32')
    local mine = T.ones(a[1].W.shape, 'float32')
    a:cleargrads()
    b:cleargrads()
    a[1].W.grad = mine
    b[1].W.grad = mine:copy()
    loss_of(a, x, t):backward()
    loss_of(b, x, t):backward()
    assert.are.equal(0, (a[1].W.grad - b[1].W.grad):abs():max():item())
    assert.is_true(grads_in_bucket(a, bucket))
    assert.are.equal(0, (mine - 1):abs():max():item())   -- the user's array is not modified
    -- a backward on Variables (retain_grad) puts its sums in the slots too
    a:cleargrads()
    b:cleargrads()
    loss_of(a, x, t):backward({ retain_grad = true })
    loss_of(b, x, t):backward()
    assert.is_true(grads_in_bucket(a, bucket))
    assert.are.equal(0, (a[1].W.grad - b[1].W.grad):abs():max():item())
    -- a grad set outside backward is copied in by take
    local list = {}
    a[3].b.grad = T.full({ 3 }, 0.5, 'float32')
    for _, p in a:namedparams() do list[#list + 1] = { param = p, tensor = p.grad } end
    assert.is_true(bucket:take(list))
    assert.is_true(grads_in_bucket(a, bucket))
    assert.are.equal(0.5, a[3].b.grad:get(0))
  end)

  it('is rebuilt after add_param, a dtype change or a new array shape, never stale', function()
    local a = mlp(7, 'float32')
    local first = GradBucket.of(a)
    assert.are.equal(first, GradBucket.of(a))          -- unchanged model: the same bucket
    a[1]:add_param('extra', { 4 }, 'float32')
    local second = GradBucket.of(a)
    assert.are_not.equal(first, second)
    assert.is_not_nil(rawget(a[1].extra, '_grad_slot'))
    -- a parameter whose array changes dtype loses its slot at once
    a[3].W.array = a[3].W.array:astype('float64')
    assert.is_nil(rawget(a[3].W, '_grad_slot'))
    assert.is_nil(GradBucket.slot(a[3].W))
    local third = GradBucket.of(a)
    assert.are_not.equal(second, third)
    local dtypes = {}
    for _, b in ipairs(third.buffers) do dtypes[#dtypes + 1] = b.dtype end
    assert.are.same({ 'float32', 'float64' }, dtypes)
    -- backward after the change: the new slot, of the new dtype
    a[3].b.array = a[3].b.array:astype('float64')
    local fourth = GradBucket.of(a)
    local x = T.random.normal(0, 1, { 2, 5 }):astype('float32')
    a:cleargrads()
    F.sum(a[3](F.cast(a[1](x), 'float64'))):backward()
    assert.are.equal('float64', a[3].W.grad.dtype)
    assert.are.equal(rawget(a[3].W, '_grad_slot'), a[3].W.grad)
    assert.are.equal(rawget(a[3].b, '_grad_slot'), a[3].b.grad)
    assert.are.equal(fourth.buffers[2].tensor.ptr.data, a[3].b.grad.ptr.data)
    -- a same-dtype array of another shape drops the slot too
    a[1].W.array = T.zeros({ 16, 4 }, 'float32')
    assert.is_nil(rawget(a[1].W, '_grad_slot'))
  end)

  it('is not shared by copies, and leaves serialization alone', function()
    local a = mlp(8, 'float32')
    GradBucket.of(a)
    local c, s = a:copy('copy'), a:copy('share')
    for _, m in ipairs({ c, s }) do
      for _, p in m:namedparams() do assert.is_nil(rawget(p, '_grad_slot')) end
    end
    local path = os.tmpname()
    chainer.serializers.save_npz(path, a)
    local b = mlp(9, 'float32')
    chainer.serializers.load_npz(path, b)
    os.remove(path)
    same_params(a, b)
    assert.is_nil(rawget(b[1].W, '_grad_slot'))
  end)
end)
