-- String arrays: NumPy '<U' / '|S' members of .npy/.npz files and HDF5
-- string datasets read as string arrays (tensor/strings.lua); Lua strings
-- and string arrays written back as '<U' (NumPy reads them); Chainer's
-- LogReport state (JSON text in 0-d '<U' arrays) loads into a LogReport
-- and a whole trainer snapshot round-trips through NumPy.  The fixtures
-- under spec/fixtures/strings come from make_fixtures.py there.
local chainer = require 'chainer'
local T = require 'chainer.tensor'
local S = chainer.serializers
local extensions = require 'chainer.training.extensions'
local H = require 'io.helpers'
local err_of = require('helpers').err_of

local FIX = 'spec/fixtures/strings/'

local function same_items(want, sa)
  assert.are.equal(#want, #sa)
  for i = 1, #want do assert.are.equal(want[i], sa[i], 'item ' .. i) end
end

-- UTF-32LE bytes of code points
local function u32(...)
  local parts = {}
  for i, c in ipairs({ ... }) do parts[i] = H.le(c, 4) end
  return table.concat(parts)
end

local function py_run(py, script)
  local f = H.tmp('.py')
  H.write_file(f, script)
  local p = io.popen(py .. ' ' .. f .. ' 2>&1')
  local out = p:read('*a')
  p:close()
  os.remove(f)
  return out
end

describe('string arrays', function()
  it('reads the NumPy fixture: 0-d, n-d, bytes, big-endian, Fortran order, empty', function()
    local d = T.load_npz(FIX .. 'numpy_strings.npz')
    assert.is_true(T.is_string_array(d.u0))
    assert.are.same({}, d.u0.shape)
    assert.are.equal('U', d.u0.kind)
    assert.are.equal('h\195\169llo \226\152\131 \240\157\132\158', d.u0:item())
    assert.are.same({ 2, 3 }, d.u2.shape)
    same_items({ 'a', 'bc', '', 'd\195\169f', 'g', '\240\157\132\158x' }, d.u2)
    assert.are.equal('S', d.s1.kind)
    same_items({ 'ab', '\255\0z', '' }, d.s1)   -- trailing NULs go, inner ones stay (as NumPy)
    same_items({ 'big', 'endian' }, d.ube)
    assert.are.same({ 2, 3 }, d.ufort.shape)
    same_items({ 'a', 'b', 'c', 'dd', 'ee', 'ff' }, d.ufort)   -- C order
    assert.are.same({ 0, 2 }, d.uempty.shape)
    assert.are.equal(0, #d.uempty)
    assert.are.same({ 0, 1, 2 }, d.f:totable())
    -- the lazy reader too
    local r = T.open_npz(FIX .. 'numpy_strings.npz')
    assert.are.equal('big', r:get('ube')[1])
    r:close()
  end)

  it('round-trips strings, string arrays and lists through .npz and .npy', function()
    local file = H.tmp('.npz')
    local grid = T.string_array({ 'x', '', 'caf\195\169', '\240\159\152\128!' }, { 2, 2 })
    T.savez_compressed(file, { s = 'hello', grid = grid, list = { 'a', 'bb' }, raw = '\255\254',
      bytes = T.string_array({ 'a\0b', 'c' }, { 2 }, 'S'), n = T.arange(3) })
    local d = T.load_npz(file)
    assert.are.equal('hello', d.s:item())
    assert.are.equal('U', d.s.kind)
    assert.are.same({ 2, 2 }, d.grid.shape)
    same_items(grid, d.grid)
    same_items({ 'a', 'bb' }, d.list)
    assert.are.equal('S', d.raw.kind)   -- not UTF-8: stored as bytes
    assert.are.equal('\255\254', d.raw:item())
    same_items({ 'a\0b', 'c' }, d.bytes)
    assert.are.same({ 0, 1, 2 }, d.n:totable())
    os.remove(file)
    local npy = H.tmp('.npy')
    T.save(npy, grid)
    local g = T.load(npy)
    same_items(grid, g)
    assert.are.same({ 2, 2 }, g.shape)
    T.save(npy, '')
    assert.are.equal('', T.load(npy):item())
    os.remove(npy)
  end)

  it('NumPy reads what we write as <U and |S arrays', function()
    local py = H.python_numpy()
    if not py then pending('python3 with numpy is not installed') return end
    local file = H.tmp('.npz')
    T.savez(file, { s = 'h\195\169', grid = T.string_array({ 'x', '', 'yz', '\240\159\152\128' }, { 2, 2 }),
      raw = '\255' })
    local out = py_run(py, string.format([[
import numpy as np
d = np.load('%s')
print(d['s'].dtype.str, d['s'].shape, ascii(str(d['s'])))
print(d['grid'].dtype.str, d['grid'].shape, ascii(d['grid'].tolist()))
print(d['raw'].dtype.str, d['raw'].tolist())
]], file))
    assert.are.equal("<U2 () 'h\\xe9'\n<U2 (2, 2) [['x', ''], ['yz', '\\U0001f600']]\n|S1 b'\\xff'\n", out)
    os.remove(file)
  end)

  it('refuses malformed string members with a clear error', function()
    local f = H.tmp('.npy')
    -- data cut short: 2 items of '<U3' need 24 bytes
    H.write_file(f, H.npy_bytes("{'descr': '<U3', 'fortran_order': False, 'shape': (2,), }", u32(97, 98, 99, 100)))
    assert.has_error(function() T.load(f) end)
    assert.matches('truncated .npy data', err_of(T.load, f))
    -- a byte count that is not a whole number of UTF-32 units
    H.write_file(f, H.npy_bytes("{'descr': '<U1', 'fortran_order': False, 'shape': (2,), }", u32(97) .. 'bc'))
    assert.matches('truncated .npy data %(8 bytes needed%)', err_of(T.load, f))
    -- code units that are not Unicode code points
    H.write_file(f, H.npy_bytes("{'descr': '<U2', 'fortran_order': False, 'shape': (2,), }",
      u32(97, 98, 99, 0x110000)))
    local ok, err = pcall(T.load, f)
    assert.is_false(ok)
    assert.matches("'<U2' item 1 holds 0x110000 at character 1, which is not a Unicode code point", err, 1, true)
    H.write_file(f, H.npy_bytes("{'descr': '<U1', 'fortran_order': False, 'shape': (), }", u32(0xD800)))
    ok, err = pcall(T.load, f)
    assert.matches('holds 0xD800 at character 0', err, 1, true)
    -- an impossible item length
    H.write_file(f, H.npy_bytes("{'descr': '<U-4', 'fortran_order': False, 'shape': (1,), }", ''))
    ok, err = pcall(T.load, f)
    assert.matches("string dtype descr '<U-4' has an impossible item length", err, 1, true)
    os.remove(f)
    -- in an archive the member is named
    local z = H.tmp('.npz')
    T.savez(z, { s = 'abc' })
    local bytes = H.read_file(z)
    local at = bytes:find(u32(97, 98, 99), 1, true)
    H.write_file(z, bytes:sub(1, at - 1) .. u32(97, 0xDFFF, 99) .. bytes:sub(at + 12))
    ok, err = pcall(T.load_npz, z)
    assert.is_false(ok)
    assert.matches("member 's.npy'", err, 1, true)   -- the CRC-32 or the code point: either names the member
    os.remove(z)
    -- writing: text items must be UTF-8
    assert.has_error(function() T.savez(H.tmp('.npz'), { s = T.string_array({ 'ok', '\255' }) }) end,
      "savez: array 's' item 2 is not valid UTF-8 (byte 1); text ('U') items must be UTF-8, use kind 'S' for bytes")
    assert.has_error(function() T.string_array({ 'a', 'b' }, { 3 }) end,
      'string_array: shape (3,) holds 3 items but 2 strings were given')
    assert.has_error(function() T.string_array({ 'a' }, nil, 'X') end,
      "string_array: kind must be 'U' (text) or 'S' (bytes) (got X)")
    assert.has_error(function() T.string_array({ 'a', 'b' }, { 2 }):item() end,
      'item: the string array of shape (2,) has 2 items (expected 1)')
  end)

  it('reads h5py string datasets and writes fixed-length UTF-8 strings', function()
    local d = T.load_hdf5(FIX .. 'h5py_strings.h5')
    same_items({ 'ab', 'cde', '' }, d.fixed)
    assert.are.same({ 3 }, d.fixed.shape)
    assert.are.equal('scalar', d.fixed0d:item())
    assert.are.same({}, d.fixed0d.shape)
    assert.are.equal('caf\195\169 \226\152\131', d.vlen:item())
    same_items({ 'x', 'yz\195\169', '' }, d.vlen1d)
    assert.are.same({ 0, 1 }, d['g/n']:totable())
    local file = H.tmp('.h5')
    local grid = T.string_array({ 'x', '', 'caf\195\169', '\240\159\152\128!' }, { 2, 2 })
    T.save_hdf5(file, { ['a/s'] = 'hello', ['a/grid'] = grid, n = T.arange(2) })
    local back = T.load_hdf5(file)
    assert.are.equal('hello', back['a/s']:item())
    same_items(grid, back['a/grid'])
    assert.are.same({ 2, 2 }, back['a/grid'].shape)
    local h5 = io.popen("/usr/bin/python3 -c 'import h5py' 2>&1"):read('*a')
    if h5 == '' then
      local out = py_run('/usr/bin/python3', string.format([[
import h5py
with h5py.File('%s', 'r') as f:
    print(f['a/s'][()].decode('utf-8') == 'hello', [x.decode('utf-8') for x in f['a/grid'][()].ravel()] == ['x', '', 'caf\u00e9', '\U0001f600!'])
]], file))
      assert.are.equal('True True\n', out)
    end
    os.remove(file)
  end)

  it("loads Chainer's LogReport state (JSON in 0-d '<U' arrays) into a LogReport", function()
    local lr = extensions.LogReport()
    S.load_npz(FIX .. 'chainer_logreport.npz', lr)   -- strict: every key matches
    local log = lr.log
    assert.are.equal(2, #log)
    assert.are.equal(0.6931471805599453, log[1]['main/loss'])
    assert.are.equal(15, log[2].iteration)
    assert.are.equal('caf\195\169 \226\152\131', log[2].note)
  end)

  it('a trainer snapshot stores its log as <U text and loads back, also after a pass through NumPy', function()
    local TH = require 'training.helpers'
    local training = require 'chainer.training'
    local function setup(out, stop)
      local it = chainer.iterators.SerialIterator(TH.problem(24, 0), 8)
      local opt = chainer.optimizers.SGD({ lr = 0.05 }):setup(TH.model(1))
      local trainer = training.Trainer(training.StandardUpdater(it, opt), stop, { out = out })
      trainer:extend(extensions.LogReport())
      return trainer
    end
    local dir = TH.tmpdir()
    local t = setup(dir, { 2, 'epoch' })
    t:run()
    local snap = dir .. '/snap.npz'
    S.save_npz(snap, t)
    local raw = T.open_npz(snap):get('extensions/LogReport/_log')
    assert.is_true(T.is_string_array(raw))
    assert.are.equal('U', raw.kind)
    local t2 = setup(dir, { 2, 'epoch' })
    S.load_npz(snap, t2)
    assert.are.equal(2, #t2:get_extension('LogReport').log)
    assert.are.equal(t:get_extension('LogReport').log[2]['main/loss'], t2:get_extension('LogReport').log[2]['main/loss'])
    local py = H.python_numpy()
    if py then   -- as Chainer would rewrite it: np.load every array, np.savez them again
      local again = dir .. '/again.npz'
      local out = py_run(py, string.format([[
import json, numpy as np
d = np.load('%s')
log = d['extensions/LogReport/_log']
print(log.dtype.kind, len(json.loads(str(log))))
np.savez_compressed('%s', **{k: d[k] for k in d.files})
]], snap, again))
      assert.are.equal('U 2\n', out)
      local t3 = setup(dir, { 2, 'epoch' })
      S.load_npz(again, t3)
      assert.are.equal(t.updater.iteration, t3.updater.iteration)
      assert.are.equal(2, #t3:get_extension('LogReport').log)
    end
    TH.rmdir(dir)
  end)

  it('strings saved by earlier chainlua versions (uint8 byte arrays) still load', function()
    local d = S.NpzDeserializer({ name = T.array({ 104, 105 }, 'uint8') })
    assert.are.equal('hi', d('name', ''))
    local sa = S.NpzDeserializer({ name = T.string_array({ 'a', 'b' }) })
    assert.has_error(function() sa('name', '') end,
      "NpzDeserializer: key 'name' in '<table>' holds 2 strings (shape (2,)) where one string is expected")
    assert.has_error(function() sa('name', T.zeros({ 2 })) end,
      "NpzDeserializer: key 'name' in '<table>' holds a string array of shape (2,) where a tensor is expected")
  end)
end)
