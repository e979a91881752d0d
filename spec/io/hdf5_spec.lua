-- HDF5: h5py-style layout (groups per path component), every dtype, modes,
-- atomic 'w', errors naming the file and the dataset path.
local T = require 'chainer.tensor'
local H = require 'io.helpers'
local err_of = require('helpers').err_of

describe('HDF5 files', function()
  it('round-trips every dtype, 0-d and empty tensors through save_hdf5/load_hdf5', function()
    local p = H.tmp('.h5')
    local tbl = {}
    for _, dt in ipairs(H.dtypes) do
      tbl['m/' .. dt] = H.sample(dt, { 3, 4 })
      tbl['s/' .. dt] = H.sample(dt, {})
      tbl['e/' .. dt] = H.sample(dt, { 0, 2 })
    end
    tbl['predictor/l1/W'] = H.sample('float32', { 5, 3 }):transpose()   -- non-contiguous input
    T.save_hdf5(p, tbl)
    local back = T.load_hdf5(p)
    for k, v in pairs(tbl) do
      assert.is_not_nil(back[k], k)
      assert.are.equal(v.dtype, back[k].dtype, k)
      assert.are.same(v.shape, back[k].shape, k)
      assert.are.same(v:totable(), back[k]:totable(), k)
    end
    os.remove(p)
  end)

  it('lays out groups per path component and enumerates datasets sorted', function()
    local p = H.tmp('.h5')
    T.save_hdf5(p, { ['predictor/l2/b'] = T.zeros({ 2 }), ['predictor/l1/W'] = T.ones({ 2, 2 }),
      ['optimizer/t'] = T.array(3, 'int64'), top = T.ones({ 1 }) })
    local f = T.open_hdf5(p)
    assert.are.same({ 'optimizer/t', 'predictor/l1/W', 'predictor/l2/b', 'top' }, f:keys())
    assert.is_true(f:exists('predictor'))          -- a group
    assert.is_true(f:exists('predictor/l1'))
    assert.is_true(f:exists('/predictor/l1/W'))    -- a leading '/' is the root
    assert.is_false(f:exists('predictor/l3/W'))
    assert.are.equal(0, f:read('optimizer/t').ndim)
    assert.are.equal(3, f:read('optimizer/t'):item())
    assert.matches("'predictor/l1' is a group, not a dataset", err_of(f.read, f, 'predictor/l1'))
    local ok, err = pcall(f.read, f, 'nope/x')
    assert.is_truthy(err:find(p, 1, true))
    assert.matches("has no dataset 'nope/x'", err)
    assert.matches("opened read%-only", err_of(f.write, f, 'x', T.ones({ 1 })))
    f:close()
    f:close()
    assert.matches('is closed', err_of(f.keys, f))
    os.remove(p)
  end)

  it('writes the types h5py uses (bool enum, IEEE half, scalar dataspace)', function()
    local p = H.tmp('.h5')
    T.save_hdf5(p, { b = T.array({ true, false }), h = T.array({ 1.5, -2 }, 'float16'), s = T.array(2.5, 'float64') })
    local has_h5dump = os.execute('command -v h5dump >/dev/null 2>&1') == 0
    if has_h5dump then
      local dump = io.popen('h5dump -H ' .. p):read('*a')
      assert.matches('H5T_ENUM', dump)
      assert.matches('FALSE', dump)
      assert.matches('SCALAR', dump)
    end
    local back = T.load_hdf5(p)
    assert.are.same({ true, false }, back.b:totable())
    assert.are.same({ 1.5, -2 }, back.h:totable())
    assert.are.equal('float16', back.h.dtype)
    assert.are.same({}, back.s.shape)
    os.remove(p)
  end)

  it("commits 'w' files on close only, and abort leaves nothing", function()
    local dir = H.tmp('')
    os.execute('mkdir -p ' .. dir)
    local p = dir .. '/m.h5'
    local f = T.open_hdf5(p, 'w')
    f:write('a/b', T.ones({ 2 }))
    assert.is_false(H.exists(p))
    f:close()
    assert.is_true(H.exists(p))
    local g = T.open_hdf5(dir .. '/n.h5', 'w')
    g:write('x', T.ones({ 1 }))
    g:abort()
    assert.are.equal('m.h5\n', io.popen('ls -A ' .. dir):read('*a'))
    -- 'a' adds and overwrites datasets in place
    local a = T.open_hdf5(p, 'a')
    a:write('a/b', T.zeros({ 3 }, 'int32'))
    a:write('c', T.ones({ 1 }))
    assert.are.same({ 'a/b', 'c' }, a:keys())
    local ok, err = pcall(a.write, a, 'a', T.ones({ 1 }))
    assert.matches("'a' is a group, not a dataset", err)
    a:close()
    local back = T.load_hdf5(p)
    assert.are.same({ 0, 0, 0 }, back['a/b']:totable())
    os.execute('rm -rf ' .. dir)
  end)

  it('reports files that are not HDF5 and bad modes clearly', function()
    local p = H.tmp('.h5')
    H.write_file(p, 'not an hdf5 file at all')
    local err = err_of(T.load_hdf5, p)
    assert.matches('is not an HDF5 file', err)
    assert.is_truthy(err:find(p, 1, true))
    os.remove(p)
    assert.matches("open_hdf5: mode must be 'r', 'w' or 'a'", err_of(T.open_hdf5, p, 'x'))
    assert.matches("cannot open '/nonexistent/m.h5'", err_of(T.load_hdf5, '/nonexistent/m.h5'))
  end)

  it('closes files left open when they are garbage collected', function()
    local p = H.tmp('.h5')
    local f = T.open_hdf5(p, 'w')
    f:write('x', T.ones({ 2 }))
    f = nil
    collectgarbage()
    collectgarbage()
    assert.are.same({ 1, 1 }, T.load_hdf5(p).x:totable())
    os.remove(p)
  end)

  it('is readable by h5py when it is installed', function()
    local py = H.python_numpy()
    if not py or os.execute(py .. " -c 'import h5py' >/dev/null 2>&1") ~= 0 then
      pending('h5py not installed (layout checked through our own enumeration above)')
      return
    end
    local p = H.tmp('.h5')
    T.save_hdf5(p, { ['g/x'] = T.arange(6, 'float32'):reshape(2, 3), ['g/b'] = T.array({ true, false }) })
    local out = io.popen(py .. [[ -c "import h5py, numpy as np, sys
f = h5py.File(sys.argv[1], 'r')
assert f['g/x'].dtype == np.float32 and f['g/x'].shape == (2, 3)
assert f['g/b'].dtype == np.bool_ and list(f['g/b'][()]) == [True, False]
print('ok')" ]] .. p):read('*a')
    assert.are.equal('ok\n', out)
    -- and we read what h5py writes
    os.execute(py .. [[ -c "import h5py, numpy as np, sys
f = h5py.File(sys.argv[1], 'w')
f['a/b'] = np.array([True, False]); f['h'] = np.array([1.5], np.float16); f['s'] = np.float32(2.0)
f['u'] = np.array([7], np.uint16); f.close()" ]] .. p)
    local d = T.load_hdf5(p)
    assert.are.same({ true, false }, d['a/b']:totable())
    assert.are.equal('float16', d.h.dtype)
    assert.are.same({ 1.5 }, d.h:totable())
    assert.are.equal(0, d.s.ndim)
    assert.are.equal(2, d.s:item())
    assert.are.equal('int32', d.u.dtype)
    os.remove(p)
  end)
end)
