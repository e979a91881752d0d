-- .npz: round trips, the real-Chainer oracle archives, lazy reader, atomic
-- writes, corruption fuzzing and (when NumPy is around) interop.
local T = require 'chainer.tensor'
local ffi = require 'ffi'
local H = require 'io.helpers'
local json = require 'chainer.utils.json'
local err_of = require('helpers').err_of

local ORACLE = '/work/shared/oracle/vectors-v2'
local function oracle_dir()
  for _, d in ipairs({ ORACLE, '../shared/oracle/vectors-v2' }) do
    if H.exists(d .. '/index.json') then return d end
  end
end

local function sample_table()
  local tbl = {}
  for _, dt in ipairs(H.dtypes) do
    tbl[dt .. '/matrix'] = H.sample(dt, { 3, 5 })
    tbl[dt .. '/scalar'] = H.sample(dt, {})
    tbl[dt .. '/empty'] = H.sample(dt, { 0, 4 })
  end
  tbl['big'] = H.sample('float32', { 300, 200 })
  return tbl
end

describe('tensor.savez / load_npz', function()
  for _, variant in ipairs({ 'savez', 'savez_compressed' }) do
    it(variant .. ' round-trips every dtype, 0-d and empty arrays', function()
      local p = H.tmp('.npz')
      local tbl = sample_table()
      T[variant](p, tbl)
      local back = T.load_npz(p)
      local n = 0
      for k, v in pairs(tbl) do
        n = n + 1
        assert.is_not_nil(back[k], k)
        assert.is_true(H.same(v, back[k]), k)
      end
      for _ in pairs(back) do n = n - 1 end
      assert.are.equal(0, n)
      -- T.load recognises the zip magic
      assert.is_true(H.same(tbl.big, T.load(p).big))
      os.remove(p)
    end)
  end

  it('stores members uncompressed for savez and deflated for savez_compressed', function()
    local tbl = { z = T.zeros({ 1000 }) }
    local a, b = H.tmp('.npz'), H.tmp('.npz')
    T.savez(a, tbl)
    T.savez_compressed(b, tbl)
    local sa, sb = H.read_file(a), H.read_file(b)
    assert.are.equal('PK\3\4', sa:sub(1, 4))
    assert.are.equal(0, sa:byte(9))        -- method 0: stored
    assert.are.equal(8, sb:byte(9))        -- method 8: deflate
    assert.is_true(#sb < #sa / 10)
    assert.are.equal('z.npy', sa:sub(31, 35))
    os.remove(a)
    os.remove(b)
  end)

  it('writes the same bytes for the same tensors (fixed timestamps)', function()
    local a, b = H.tmp('.npz'), H.tmp('.npz')
    T.savez(a, { x = T.arange(5) })
    T.savez(b, { x = T.arange(5) })
    assert.are.equal(H.read_file(a), H.read_file(b))
    os.remove(a)
    os.remove(b)
  end)

  it('saves non-contiguous inputs in logical order', function()
    local p = H.tmp('.npz')
    local t = H.sample('int32', { 4, 3 })
    T.savez(p, { t = t:transpose(), f = t:flip(0) })
    local back = T.load_npz(p)
    assert.are.same(t:transpose():totable(), back.t:totable())
    assert.are.same(t:flip(0):totable(), back.f:totable())
    os.remove(p)
  end)

  it('reads every oracle archive written by NumPy, with the keys and shapes of index.json', function()
    local dir = oracle_dir()
    if not dir then
      pending('oracle vectors not present')
      return
    end
    local index = json.read_file(dir .. '/index.json')
    local files, arrays = 0, 0
    for name in pairs(index.files) do
      local data = T.load_npz(dir .. '/' .. name)
      files = files + 1
      for _ in pairs(data) do arrays = arrays + 1 end
    end
    assert.is_true(files >= 180)
    assert.is_true(arrays > 3000)
    local checked = 0
    for _, case in ipairs(index.cases) do
      local r = T.open_npz(dir .. '/' .. case.file)
      for _, inp in ipairs(case.inputs) do
        local t = r:get(inp.key)
        assert.are.same(inp.shape, t.shape)
        assert.are.equal(inp.dtype, t.dtype)
        checked = checked + 1
      end
      r:close()
    end
    assert.is_true(checked > 500)
    -- known values (read with NumPy 1.24)
    local x = T.load_npz(dir .. '/relu.npz')['basic/float64/in/x']
    assert.are.same({ 3, 4 }, x.shape)
    assert.is_true(math.abs(x:get(0, 0) - 0.76262499) < 1e-8)
    assert.is_true(math.abs(x:get(0, 1) + 0.43058348) < 1e-8)
    assert.is_true(math.abs(x:get(0, 2) + 0.39906737) < 1e-8)
    local a = T.load_npz(dir .. '/add.npz')['basic/float64/in/a']
    local flat = a:reshape(-1)
    assert.is_true(math.abs(flat:get(0) + 0.47004615) < 1e-8)
    assert.is_true(math.abs(flat:get(2) - 1.10224727) < 1e-8)
  end)

  it('offers a lazy reader with sorted keys, get, has and idempotent close', function()
    local p = H.tmp('.npz')
    T.savez(p, { b = T.ones({ 2 }), a = T.zeros({ 3 }, 'int64'), ['c/d'] = T.array(true) })
    local r = T.open_npz(p)
    assert.are.same({ 'a', 'b', 'c/d' }, r:keys())
    assert.is_true(r:has('c/d'))
    assert.is_false(r:has('zzz'))
    assert.are.same({ 0, 0, 0 }, r:get('a'):totable())
    assert.are.equal(true, r:get('c/d'):item())
    assert.matches("has no array named 'missing'", err_of(r.get, r, 'missing'))
    r:close()
    r:close()
    assert.matches('is closed', err_of(r.keys, r))
    -- an unclosed reader is closed by the garbage collector
    T.open_npz(p)
    collectgarbage()
    collectgarbage()
    os.remove(p)
  end)

  it('get(name, dtype) converts as it decodes, the same numbers as get(name):astype(dtype)', function()
    local p = H.tmp('.npz')
    local bytes = T.array({ { 0, 7, 255 }, { 128, 1, 2 } }, 'uint8')
    local big = T.array({ 1.5, -2.25, 3e10 }, 'float64')
    T.savez_compressed(p, { b = bytes, f = big, flag = T.array({ true, false }), s = T.array(3, 'int16') })
    local r = T.open_npz(p)
    local x = r:get('b', 'float32')
    assert.equal('float32', x.dtype)
    assert.same({ 2, 3 }, x.shape)
    assert.same({ { 0, 7, 255 }, { 128, 1, 2 } }, x:totable())
    assert.same(big:astype('float32'):totable(), r:get('f', 'float32'):totable())
    assert.same({ 1, 0 }, r:get('flag', 'int32'):totable())
    assert.equal('int16', r:get('s', 'int16').dtype)
    assert.equal(3, r:get('s', 'float64'):item())
    local err = err_of(r.get, r, 'b', 'float13')
    assert.matches('get', err)
    assert.matches('float13', err)
    assert.matches("has no array named 'missing'", err_of(r.get, r, 'missing', 'float32'))
    r:close()
    os.remove(p)
  end)

  it('get(name, dtype) reads big-endian and Fortran-order members right', function()
    -- hand-made .npy members: '>i4' (2,) and '<f4' (2, 2) in Fortran order
    local function npy(descr, fortran, shape, payload)
      local h = string.format("{'descr': '%s', 'fortran_order': %s, 'shape': %s, }", descr, fortran, shape)
      h = h .. string.rep(' ', 63 - (10 + #h) % 64) .. '\n'
      return '\147NUMPY\1\0' .. string.char(#h % 256, math.floor(#h / 256)) .. h .. payload
    end
    local dir = H.tmp('')
    os.execute('mkdir -p ' .. dir)
    local function write(name, data) local f = assert(io.open(dir .. '/' .. name, 'wb')) f:write(data) f:close() end
    write('be.npy', npy('>i4', 'False', '(2,)', '\0\0\1\0' .. '\255\255\255\254'))
    local f4 = ffi.new('float[4]', { 1, 2, 3, 4 })
    write('fo.npy', npy('<f4', 'True', '(2, 2)', ffi.string(f4, 16)))
    local p = dir .. '/m.npz'
    -- zipped by Python's standard library (the writer here makes only C-order little-endian members)
    local made = io.popen('cd ' .. dir .. ' && python3 -c "import zipfile; z = zipfile.ZipFile(\'m.npz\', \'w\'); ' ..
      'z.write(\'be.npy\'); z.write(\'fo.npy\'); z.close(); print(\'ok\')" 2>&1'):read('*a')
    if made ~= 'ok\n' then pending('python3 is not available') return end
    local r = T.open_npz(p)
    assert.same({ 256, -2 }, r:get('be', 'float64'):totable())
    assert.same(r:get('fo'):totable(), r:get('fo', 'float64'):totable())
    assert.same({ { 1, 3 }, { 2, 4 } }, r:get('fo', 'float64'):totable())
    r:close()
    os.execute('rm -rf ' .. dir)
  end)

  it('writes atomically and leaves nothing when an add fails', function()
    local dir = H.tmp('')
    os.execute('mkdir -p ' .. dir)
    local freed = T.ones({ 3 })
    freed:free()
    assert.matches('was freed', err_of(T.savez, dir .. '/m.npz', { good = T.ones({ 2 }), bad = freed }))
    assert.are.equal('', io.popen('ls -A ' .. dir):read('*a'))
    -- an existing file survives a failed overwrite
    T.savez(dir .. '/m.npz', { x = T.ones({ 2 }) })
    pcall(T.savez, dir .. '/m.npz', { good = T.ones({ 2 }), bad = freed })
    assert.are.same({ 1, 1 }, T.load_npz(dir .. '/m.npz').x:totable())
    assert.are.equal('m.npz\n', io.popen('ls -A ' .. dir):read('*a'))
    os.execute('rm -rf ' .. dir)
  end)

  it('rejects bad arguments with clear messages', function()
    local ok, err = pcall(T.savez, H.tmp('.npz'), T.ones({ 2 }))
    assert.matches('savez: arrays must be a table', err)
    assert.matches('savez: array names must be non%-empty strings',
      err_of(T.savez, H.tmp('.npz'), { [1] = T.ones({ 2 }) }))
    assert.matches("load_npz: cannot open '/nonexistent/x.npz'", err_of(T.load_npz, '/nonexistent/x.npz'))
  end)

  it('turns 300 truncations and byte flips of a valid archive into errors naming the file', function()
    local stored, deflated = H.tmp('.npz'), H.tmp('.npz')
    local bad = H.tmp('.npz')
    local tbl = { w = H.sample('float32', { 20, 10 }), b = H.sample('int64', { 10 }), s = T.array(3.5, 'float64') }
    local math_random = math.random
    math.randomseed(20240601)
    T.savez(stored, tbl)
    T.savez_compressed(deflated, tbl)
    local stored_bytes, deflated_bytes = H.read_file(stored), H.read_file(deflated)
    local errors, intact = 0, 0
    for round = 1, 300 do
      local bytes = round % 2 == 0 and deflated_bytes or stored_bytes
      local kind = round % 3
      local mutated
      if kind == 0 then
        mutated = bytes:sub(1, math_random(0, #bytes - 1))          -- truncation
      else
        local b = { bytes:byte(1, -1) }
        for _ = 1, math_random(1, 4) do
          local i = math_random(1, #b)
          b[i] = (b[i] + math_random(1, 255)) % 256                 -- flip a byte
        end
        mutated = string.char(unpack(b))
      end
      H.write_file(bad, mutated)
      local ok, res = pcall(T.load_npz, bad)
      if ok then
        -- a flip in a field nobody checks (a timestamp, an attribute) must
        -- still give exactly the original arrays: never silently wrong data
        for k, v in pairs(tbl) do assert.is_true(H.same(v, res[k]), 'silently changed ' .. k) end
        intact = intact + 1
      else
        assert.is_truthy(tostring(res):find(bad, 1, true), res)
        errors = errors + 1
      end
    end
    assert.is_true(errors > 250, 'errors ' .. errors)
    os.remove(stored)
    os.remove(deflated)
    os.remove(bad)
  end)

  describe('NumPy interop', function()
    local py = H.python_numpy()

    it('NumPy reads what we write', function()
      if not py then pending('python3 with numpy is not available') return end
      local a, b = H.tmp('.npz'), H.tmp('.npz')
      local tbl = sample_table()
      T.savez(a, tbl)
      T.savez_compressed(b, tbl)
      local script = H.tmp('.py')
      H.write_file(script, [[
import sys, numpy as np
for path in sys.argv[1:]:
    d = np.load(path)
    assert d['float32/matrix'].dtype == np.float32 and d['float32/matrix'].shape == (3, 5)
    assert d['float64/scalar'].shape == () and d['bool/matrix'].dtype == np.bool_
    assert d['float16/empty'].shape == (0, 4) and d['float16/empty'].dtype == np.float16
    n = 3 * 5
    want = (np.arange(n) - n / 2) * 0.375
    assert np.array_equal(d['float64/matrix'].ravel(), want)
    assert np.array_equal(d['uint8/matrix'].ravel(), (np.arange(n) * 37) % 256)
    assert d['big'].shape == (300, 200)
print('ok')
]])
      local out = io.popen(py .. ' ' .. script .. ' ' .. a .. ' ' .. b .. ' 2>&1'):read('*a')
      assert.are.equal('ok\n', out)
      os.remove(a)
      os.remove(b)
      os.remove(script)
    end)

    it('we read what NumPy writes, including big-endian, Fortran order and data descriptors', function()
      if not py then pending('python3 with numpy is not available') return end
      local a, b, c = H.tmp('.npz'), H.tmp('.npz'), H.tmp('.npz')
      local script = H.tmp('.py')
      H.write_file(script, [[
import sys, io, zipfile, numpy as np
x = np.arange(12, dtype=np.float64).reshape(3, 4) / 8
np.savez(sys.argv[1], f=x.astype('>f4'), fo=np.asfortranarray(x), i=np.array([-1, 2], '>i8'),
         b=np.array([True, False]), h=x.astype(np.float16), s=np.float64(2.5), u=np.array([65535], np.uint16))
np.savez_compressed(sys.argv[2], x=x, e=np.zeros((0, 3), np.int32))
class Unseekable(io.RawIOBase):
    def __init__(self, f): self.f = f
    def writable(self): return True
    def write(self, b): return self.f.write(b)
with open(sys.argv[3], 'wb') as raw:
    with zipfile.ZipFile(Unseekable(raw), 'w', zipfile.ZIP_DEFLATED) as z:
        buf = io.BytesIO(); np.save(buf, x); z.writestr('x.npy', buf.getvalue())
        with z.open('y.npy', 'w') as m: np.lib.format.write_array(m, np.arange(5))
print('ok')
]])
      assert.are.equal('ok\n', io.popen(py .. ' ' .. script .. ' ' .. a .. ' ' .. b .. ' ' .. c .. ' 2>&1'):read('*a'))
      local want = {}
      for i = 0, 2 do
        want[i + 1] = {}
        for j = 0, 3 do want[i + 1][j + 1] = (i * 4 + j) / 8 end
      end
      local d = T.load_npz(a)
      assert.are.equal('float32', d.f.dtype)
      assert.are.same(want, d.f:totable())
      assert.are.same(want, d.fo:totable())
      assert.are.same({ -1, 2 }, d.i:totable())
      assert.are.same({ true, false }, d.b:totable())
      assert.are.same(want, d.h:totable())
      assert.are.equal(2.5, d.s:item())
      assert.are.same({ 65535 }, d.u:totable())
      local e = T.load_npz(b)
      assert.are.same(want, e.x:totable())
      assert.are.same({ 0, 3 }, e.e.shape)
      local f = T.load_npz(c)      -- members with data descriptors (flag bit 3)
      assert.are.equal(8, H.read_file(c):byte(7))
      assert.are.same(want, f.x:totable())
      assert.are.same({ 0, 1, 2, 3, 4 }, f.y:totable())
      for _, p in ipairs({ a, b, c, script }) do os.remove(p) end
    end)
  end)
end)
