-- training.extensions.snapshot_writers: every writer saves the target as it
-- was when it was called (the background ones in forked children while the
-- caller changes the arrays in place), queues keep their order, failures
-- surface, and snapshot{writer = ...} / n_retains work through a trainer.
local chainer = require 'chainer'
local T = require 'chainer.tensor'
local training = require 'chainer.training'
local extensions = require 'chainer.training.extensions'
local W = extensions.snapshot_writers
local S = chainer.serializers
local fs = require 'chainer._fs'
local H = require 'training.helpers'
local write_file = require('helpers').write_file

local ALL = { 'SimpleWriter', 'ThreadWriter', 'ProcessWriter', 'ThreadQueueWriter', 'ProcessQueueWriter' }

-- Blocks until `path` exists (a gate the test opens), at most ~30 s.
local function wait_for(path)
  for _ = 1, 3000 do
    if fs.exists(path) then return end
    os.execute('sleep 0.01')
  end
  error('gate ' .. path .. ' never opened')
end

local function linear_filled(v)
  local l = chainer.links.Linear(200, 200)
  l.W.array:fill_(v)
  return l
end

local function loaded_value(path)
  local l = linear_filled(0)
  S.load_npz(path, l)
  local w = l.W.array
  assert.are.equal(w:min():item(), w:max():item())
  return w:max():item()
end

describe('snapshot_writers', function()
  for _, name in ipairs(ALL) do
    it(name .. ' writes each snapshot as it was at the call, while the caller changes the arrays in place', function()
      local out = H.tmpdir()
      local l = linear_filled(0)
      local w = W[name]()
      for i = 1, 3 do
        l.W.array:fill_(i)
        w('snap_' .. i, out, S.serialize(l))
        l.W.array:fill_(-1)   -- after the call: must not reach the file
        -- the caller keeps working (a product big enough for OpenMP)
        T.ones({ 1000, 200 }, 'float32'):matmul(l.W.array)
      end
      w:finalize()
      for i = 1, 3 do assert.are.equal(i, loaded_value(out .. '/snap_' .. i)) end
      for _, f in ipairs(fs.listdir(out)) do assert.is_nil(f:find('tmp', 1, true), f) end
      H.rmdir(out)
    end)
  end

  for _, name in ipairs({ 'ThreadQueueWriter', 'ProcessQueueWriter' }) do
    it(name .. ' returns at once and runs the tasks one at a time, in order', function()
      local out = H.tmpdir()
      local gate, log = out .. '/gate', out .. '/log'
      local function task(filename, outdir)
        wait_for(gate)
        local f = assert(io.open(log, 'a'))
        f:write(filename, '\n')
        f:close()
        write_file(outdir .. '/' .. filename, 'done')
      end
      local w = W[name](nil, task)
      for i = 1, 4 do w('task_' .. i, out, {}) end
      -- the tasks wait for the gate, so nothing is written yet
      assert.is_false(fs.exists(log))
      write_file(gate, '')
      w:finalize()
      assert.are.equal('task_1\ntask_2\ntask_3\ntask_4\n', H.read(log))
      H.rmdir(out)
    end)
  end

  for _, name in ipairs({ 'ThreadWriter', 'ProcessWriter' }) do
    it(name .. ' joins the previous writer before it starts the next', function()
      local out = H.tmpdir()
      local gate = out .. '/gate'
      local w = W[name](function(path)
        wait_for(gate)
        write_file(path, 'x')
      end)
      w('first', out, {})
      assert.is_false(fs.exists(out .. '/first'))   -- still waiting in the background
      write_file(gate, '')
      w('second', out, {})
      assert.is_true(fs.exists(out .. '/first'))    -- the second call waited for it
      w:finalize()
      assert.is_true(fs.exists(out .. '/second'))
      H.rmdir(out)
    end)
  end

  it("passes kwds to savefun (save_npz's compression)", function()
    local out = H.tmpdir()
    local target = S.serialize(linear_filled(1))
    W.SimpleWriter(S.save_npz, { compression = false })('plain', out, target)
    W.SimpleWriter({ savefun = S.save_npz, compression = true })('packed', out, target)
    -- 200 x 200 float32 ones: 160,000 bytes stored as they are, a few hundred deflated
    assert.is_true(#H.read(out .. '/plain') > 160000)
    assert.is_true(#H.read(out .. '/packed') < 20000)
    assert.are.equal(1, loaded_value(out .. '/plain'))
    assert.are.equal(1, loaded_value(out .. '/packed'))
    H.rmdir(out)
  end)

  it('reports a failed background write at the next call or at finalize, with its message', function()
    local out = H.tmpdir()
    local function broken() error('disk is full') end
    assert.has_error(function() W.SimpleWriter(broken)('a', out, {}) end)
    for _, name in ipairs({ 'ProcessWriter', 'ThreadQueueWriter' }) do
      local w = W[name](broken)
      w('a', out, {})
      local ok, err = pcall(w.finalize, w)
      assert.is_false(ok)
      assert.truthy(tostring(err):find(name .. ': ', 1, true), err)
      assert.truthy(tostring(err):find('disk is full', 1, true), err)
    end
    local w = W.ProcessWriter(broken)
    w('a', out, {})
    local ok, err = pcall(w, 'b', out, {})
    assert.is_false(ok)
    assert.truthy(tostring(err):find('disk is full', 1, true), err)
    w:finalize()
    H.rmdir(out)
  end)

  it('rejects what cannot be a savefun or a task, and the bare Writer cannot write', function()
    assert.has_error(function() W.SimpleWriter(42) end, 'SimpleWriter: savefun must be a function(path, target[, kwds]) (got number)')
    assert.has_error(function() W.ProcessQueueWriter(nil, 'x') end,
      'ProcessQueueWriter: task must be callable as task(filename, outdir, target) (got string)')
    assert.has_error(function() W.ThreadQueueWriter({ nope = 1 }) end)
    assert.has_error(function() W.Writer()('a', '/tmp', {}) end)
  end)

  it('a StandardWriter subclass supplies its own worker through create_worker', function()
    local Sync = W.StandardWriter:extend('SyncWriter')
    local calls = {}
    function Sync:create_worker(filename, outdir, target)
      return {
        start = function() calls[#calls + 1] = 'start ' .. filename end,
        join = function() calls[#calls + 1] = 'join ' .. filename end,
      }
    end
    local w = Sync()
    w('a', '/nonexistent', {})
    w('b', '/nonexistent', {})
    w:finalize()
    w:finalize()
    assert.are.same({ 'start a', 'join a', 'start b', 'join b' }, calls)
  end)
end)

describe('snapshot with a writer', function()
  it('writes through a queue writer, keeps n_retains files, and the newest loads back', function()
    local model = H.model(3)
    local opt = require('chainer.optimizers').SGD():setup(model)
    local u = H.FakeUpdater(2, { main = opt })
    local tr = training.Trainer(u, { 4, 'epoch' }, { out = H.tmpdir() })
    tr:extend(extensions.snapshot_object(model.predictor, 'model_{.updater.epoch}',
      { writer = W.ProcessQueueWriter(), n_retains = 2 }))
    tr:run()
    assert.is_false(fs.exists(tr.out .. '/model_2'))
    assert.is_true(fs.exists(tr.out .. '/model_3'))
    local fresh = H.model(4).predictor
    S.load_npz(tr.out .. '/model_4', fresh)
    assert.are.equal(0, (fresh.l1.W.array - model.predictor.l1.W.array):abs():max():item())
    H.rmdir(tr.out)
  end)

  it("hands savefun the serialized trainer, as Chainer's", function()
    local model = H.model(3)
    local opt = require('chainer.optimizers').SGD():setup(model)
    local u = H.FakeUpdater(2, { main = opt })
    local tr = training.Trainer(u, { 1, 'epoch' }, { out = H.tmpdir() })
    local seen
    tr:extend(extensions.snapshot({ savefun = function(path, target)
      seen = target
      write_file(path, 'x')
    end }))
    tr:run()
    assert.are.equal(getmetatable(seen), nil)
    assert.are.equal(2, seen['updater/iteration']:item())
    H.rmdir(tr.out)
  end)

  it('refuses savefun together with writer, and a writer that cannot be called', function()
    assert.has_error(function() extensions.snapshot({ savefun = S.save_npz, writer = W.SimpleWriter() }) end,
      'snapshot: give savefun or writer, not both')
    assert.has_error(function() extensions.snapshot({ writer = 'fast' }) end)
  end)
end)

describe('savers take a serialized table', function()
  for _, fmt in ipairs({ 'npz', 'hdf5' }) do
    it('save_' .. fmt .. '(path, serialize(obj)) writes what save_' .. fmt .. '(path, obj) writes', function()
      local out = H.tmpdir()
      local l = chainer.links.Linear(3, 2)
      S['save_' .. fmt](out .. '/d', S.serialize(l))
      local back = chainer.links.Linear(3, 2)
      S['load_' .. fmt](out .. '/d', back)
      assert.are.equal(0, (back.W.array - l.W.array):abs():max():item())
      assert.are.equal(0, (back.b.array - l.b.array):abs():max():item())
      H.rmdir(out)
    end)
  end
end)
