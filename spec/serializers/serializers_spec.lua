-- chainer.serializers: Chainer's key layout, NPZ and HDF5 round trips,
-- strict loading, paths, ignore_names, corrupt files, NumPy interop.
local chainer = require 'chainer'
local T = chainer.tensor
local L = chainer.links
local F = chainer.functions
local S = chainer.serializers

local tmp = os.tmpname()
os.remove(tmp)
local dir = tmp .. '_ser'
os.execute('mkdir -p ' .. dir)

local MLP = chainer.Chain:extend('SerMLP')
function MLP:init()
  self.l1 = L.Linear(3, 4)
  self.bn = L.BatchNormalization(4)
  self.l2 = L.Linear(4, 2)
end
function MLP:forward(x) return self.l2(F.relu(self.bn(self.l1(x)))) end

local function sorted_keys(t)
  local ks = {}
  for k in pairs(t) do ks[#ks + 1] = k end
  table.sort(ks)
  return ks
end

local function trained_model()
  local m = L.Classifier(MLP())
  m.predictor(T.random.randn({ 5, 3 }))          -- updates BN running stats
  return m
end

local keys_expected = { 'predictor/bn/N', 'predictor/bn/avg_mean', 'predictor/bn/avg_var', 'predictor/bn/beta',
  'predictor/bn/gamma', 'predictor/l1/W', 'predictor/l1/b', 'predictor/l2/W', 'predictor/l2/b' }

describe('serializers', function()
  it('DictionarySerializer uses Chainer keys and value types', function()
    local s = S.DictionarySerializer()
    s:save(trained_model())
    assert.same(keys_expected, sorted_keys(s.target))
    assert.equal('int64', s.target['predictor/bn/N'].dtype)
    assert.same({}, s.target['predictor/bn/N'].shape)
    local c = s:child('/a/b/')
    c('x', 1.5)
    c('flag', true)
    assert.equal('float64', s.target['a/b/x'].dtype)
    assert.equal('bool', s.target['a/b/flag'].dtype)
    assert.equal(3, s('/t', 3))                  -- a serializer returns the value
    assert.equal('int64', s.target['t'].dtype)
  end)

  for _, fmt in ipairs({ 'npz', 'hdf5' }) do
    local save, load = S['save_' .. fmt], S['load_' .. fmt]
    local path = dir .. '/model.' .. fmt

    it(fmt .. ': a round trip reproduces the outputs exactly (train and test mode)', function()
      local m = trained_model()
      save(path, m)
      local m2 = L.Classifier(MLP())
      load(path, m2)
      local x = T.random.randn({ 4, 3 })
      assert.equal(0, (m.predictor(x).array - m2.predictor(x).array):abs():max():item())
      chainer.using_config('train', false, function()
        assert.equal(0, (m.predictor(x).array - m2.predictor(x).array):abs():max():item())
      end)
      assert.equal(m.predictor.bn.N, m2.predictor.bn.N)
    end)

    it(fmt .. ': strict loading reports every missing and unexpected key', function()
      local m = trained_model()
      save(path, m)
      local Other = chainer.Chain:extend('Other')
      function Other:init() self.l1 = L.Linear(3, 4); self.l3 = L.Linear(4, 2) end
      local o = L.Classifier(Other())
      local ok, err = pcall(load, path, o)
      assert.is_false(ok)
      assert.truthy(err:find('load_' .. fmt, 1, true))
      assert.truthy(err:find(path, 1, true))
      assert.truthy(err:find('2 missing keys: predictor/l3/W, predictor/l3/b', 1, true))
      assert.truthy(err:find('7 unexpected keys: predictor/bn/N, predictor/bn/avg_mean', 1, true))
      load(path, o, { strict = false })               -- loads what matches
      assert.equal(0, (o.predictor.l1.W.array - m.predictor.l1.W.array):abs():max():item())
      -- ignore_names: a list or a function
      local names = { 'predictor/l2/W', 'predictor/l2/b' }
      for _, k in ipairs(keys_expected) do if k:find('bn') then names[#names + 1] = k end end
      local o2 = L.Classifier(Other())
      assert.has_error(function() load(path, o2, { ignore_names = names }) end)   -- l3 still missing
      local o3 = L.Classifier(chainer.Chain { l1 = L.Linear(3, 4) })
      load(path, o3, { ignore_names = function(k) return not k:find('l1', 1, true) end })
    end)

    it(fmt .. ': path selects a sub-tree; shapes are checked', function()
      local m = trained_model()
      save(path, m)
      local p = MLP()
      load(path, p, { path = 'predictor/' })
      assert.equal(0, (p.l2.b.array - m.predictor.l2.b.array):abs():max():item())
      local bad = L.Linear(3, 5)
      local ok, err = pcall(load, path, bad, { path = 'predictor/l1/' })
      assert.is_false(ok)
      assert.truthy(err:find("key 'predictor/l1/W'", 1, true))
      assert.truthy(err:find('(4, 3)', 1, true))
    end)

    it(fmt .. ': uninitialised parameters are initialised from the file', function()
      local l = L.Linear(3, 2)
      save(path, l)
      local lazy = L.Linear(2)
      load(path, lazy)
      assert.same({ 2, 3 }, lazy.W.shape)
      assert.equal(0, (lazy.W.array - l.W.array):abs():max():item())
      -- an uninitialised parameter is not written; as in Chainer, a strict
      -- load of a file without its key is an error naming the key
      save(path, L.Linear(2))
      local again = L.Linear(2)
      local ok, err = pcall(load, path, again)
      assert.is_false(ok)
      assert.equal(string.format("load_%s: '%s' does not match the object (1 missing key: W); " ..
        'pass {strict = false} to skip missing and extra keys', fmt, path), err)
      assert.is_nil(again.W.array)
      load(path, again, { strict = false })
      assert.is_nil(again.W.array)
    end)

    it(fmt .. ': a lazy layer that has not run needs its key in a strict load', function()
      -- Chainer's deserializer raises KeyError for an absent key even when the
      -- parameter is uninitialised; the layer would otherwise start at random
      save(path, chainer.Sequential(L.Linear(3, 4), L.Linear(nil, 2)))   -- 1/W not written
      local lazy = chainer.Sequential(L.Linear(3, 4), L.Linear(nil, 2))
      local ok, err = pcall(load, path, lazy)
      assert.is_false(ok)
      assert.equal(string.format("load_%s: '%s' does not match the object (1 missing key: 1/W); " ..
        'pass {strict = false} to skip missing and extra keys', fmt, path), err)
      -- a deserializer used directly raises at once, naming the key
      local D = fmt == 'npz' and S.NpzDeserializer or S.HDF5Deserializer
      local ok2, err2 = pcall(function() return D(path, { path = '1/' })('W', nil) end)
      assert.is_false(ok2)
      assert.truthy(err2:find(string.format("Deserializer: key '1/W' is not in '%s'", path), 1, true), err2)
    end)

    it(fmt .. ': a corrupt or missing file is an error naming the file', function()
      local f = io.open(path, 'wb')
      f:write('this is not a model file')
      f:close()
      local ok, err = pcall(load, path, L.Linear(3, 2))
      assert.is_false(ok)
      assert.truthy(err:find(path, 1, true))
      local ok2, err2 = pcall(load, dir .. '/none.' .. fmt, L.Linear(3, 2))
      assert.is_false(ok2)
      assert.truthy(err2:find('none.' .. fmt, 1, true))
    end)

    it(fmt .. ': a failed save leaves the previous file intact', function()
      local l = L.Linear(3, 2)
      save(path, l)
      local Bad = chainer.Link:extend('BadSer')
      function Bad:serialize(s) s('a', T.ones({ 2 })); error('boom') end
      assert.has_error(function() save(path, Bad()) end)
      local l2 = L.Linear(3, 2)
      load(path, l2)
      assert.equal(0, (l2.W.array - l.W.array):abs():max():item())
    end)
  end

  it('deserializers: value conversions and missing keys outside load', function()
    local src = { ['t'] = T.array(7, 'int64'), ['lr'] = T.array(0.5, 'float64'), ['on'] = T.array(true, 'bool'),
      ['s'] = T.array({ 104, 105 }, 'uint8'), ['v'] = T.array({ 1, 2 }) }
    local d = S.NpzDeserializer(src)
    assert.equal(7, d('t', 0))
    assert.equal(0.5, d('lr', 1))
    assert.is_true(d('on', false))
    assert.equal('hi', d('s', ''))
    local v = T.zeros({ 2 }, 'float64')
    assert.equal(v, d('v', v))
    assert.same({ 1, 2 }, v:totable())
    assert.same({ 1, 2 }, d('v', nil):totable())
    assert.has_error(function() d('nope', 1) end, "NpzDeserializer: key 'nope' is not in '<table>'")
    assert.equal(1, S.NpzDeserializer(src, { strict = false })('nope', 1))
    assert.equal(7, S.NpzDeserializer({ ['a/b/t'] = T.array(7, 'int64') }):child('/a/'):child('b/')('/t', 0))
    -- strings round trip through our files
    local ds = S.DictionarySerializer()
    ds('name', 'chainlua')
    assert.equal('chainlua', S.NpzDeserializer(ds.target)('name', ''))
  end)

  it('argument errors', function()
    assert.has_error(function() S.save_npz(3, L.Linear(1, 1)) end,
      'save_npz: file must be a non-empty path string (got number)')
    assert.has_error(function() S.save_npz(dir .. '/x.npz', 3) end)
    assert.has_error(function() S.load_npz(dir .. '/x.npz', L.Linear(1, 1), 'path') end)
  end)

  it('NumPy reads our npz with the same keys and values', function()
    local py = '/usr/bin/python3'
    local ok = os.execute(py .. ' -c "import numpy" 2>/dev/null')
    if ok ~= 0 and ok ~= true then
      pending('python3 with numpy is not installed')
      return
    end
    local m = trained_model()
    local file = dir .. '/np.npz'
    S.save_npz(file, m)
    local out = dir .. '/np.txt'
    local script = string.format(
      "import numpy as np; d = np.load('%s'); f = open('%s', 'w')\n" ..
      "for k in sorted(d.keys()): f.write('%%s %%s %%s %%r\\n' %% (k, d[k].dtype, d[k].shape, float(np.asarray(d[k], dtype=np.float64).sum())))",
      file, out)
    os.execute(py .. " -c \"" .. script:gsub('"', '\\"') .. "\"")
    local lines = {}
    for line in io.lines(out) do lines[#lines + 1] = line end
    assert.equal(#keys_expected, #lines)
    local s = S.DictionarySerializer()
    s:save(m)
    for i, k in ipairs(keys_expected) do
      local name, dtype, _, sum = lines[i]:match('^(%S+) (%S+) (%b()) (%S+)$')
      assert.equal(k, name)
      assert.equal(s.target[k].dtype, dtype)
      local want = s.target[k]:astype('float64'):sum():item()
      assert.is_true(math.abs(tonumber(sum) - want) <= 1e-6 * (1 + math.abs(want)), k)
    end
  end)
end)
