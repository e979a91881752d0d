-- .npy: NumPy's header byte for byte, round trips, foreign layouts, bad files.
local T = require 'chainer.tensor'
local H = require 'io.helpers'

describe('tensor.save / tensor.load (.npy)', function()
  it('writes the exact header NumPy 1.24 writes for a (2, 3) float32 array', function()
    local p = H.tmp('.npy')
    T.save(p, T.zeros({ 2, 3 }))
    local s = H.read_file(p)
    local dict = "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }"
    -- NumPy leaves 21 - #"2" spare spaces, then pads with spaces and '\n' to 64 bytes
    local want = '\147NUMPY\1\0v\0' .. dict .. string.rep(' ', 128 - 10 - #dict - 1) .. '\n'
    assert.are.equal(152, #s)
    assert.are.equal(want, s:sub(1, 128))
    assert.are.equal(string.rep('\0', 24), s:sub(129))
    os.remove(p)
  end)

  it('formats 0-d and 1-d shapes and descrs like NumPy', function()
    local cases = {
      { T.zeros({}, 'bool'), "{'descr': '|b1', 'fortran_order': False, 'shape': (), }" },
      { T.zeros({ 5 }, 'float16'), "{'descr': '<f2', 'fortran_order': False, 'shape': (5,), }" },
      { T.zeros({ 1, 2, 3 }, 'int64'), "{'descr': '<i8', 'fortran_order': False, 'shape': (1, 2, 3), }" },
      { T.zeros({ 0 }, 'uint8'), "{'descr': '|u1', 'fortran_order': False, 'shape': (0,), }" },
      { T.zeros({ 12345, 0 }, 'int8'), "{'descr': '|i1', 'fortran_order': False, 'shape': (12345, 0), }" },
    }
    for _, c in ipairs(cases) do
      local p = H.tmp('.npy')
      T.save(p, c[1])
      local s = H.read_file(p)
      local hlen = s:byte(9) + 256 * s:byte(10)
      assert.are.equal(0, (10 + hlen) % 64)
      assert.are.equal(c[2], s:sub(11, 10 + #c[2]))
      local spare = c[1].ndim > 0 and 21 - #tostring(c[1].shape[1]) or 0
      assert.are.equal(string.rep(' ', spare), s:sub(11 + #c[2], 10 + #c[2] + spare))
      assert.are.equal('\n', s:sub(10 + hlen, 10 + hlen))
      os.remove(p)
    end
  end)

  it('round-trips every dtype and shape, including 0-d and empty', function()
    local shapes = { {}, { 0 }, { 7 }, { 2, 3 }, { 2, 0, 3 }, { 2, 1, 3, 2 } }
    for _, dt in ipairs(H.dtypes) do
      for _, shape in ipairs(shapes) do
        local t = H.sample(dt, shape)
        local p = H.tmp('.npy')
        T.save(p, t)
        local back = T.load(p)
        assert.is_true(H.same(t, back), dt .. ' ' .. table.concat(shape, 'x'))
        os.remove(p)
      end
    end
  end)

  it('saves non-contiguous and negative-stride views in logical order', function()
    local t = H.sample('float64', { 3, 4 })
    local p = H.tmp('.npy')
    T.save(p, t:transpose())
    local back = T.load(p)
    assert.are.same({ 4, 3 }, back.shape)
    assert.are.same(t:transpose():totable(), back:totable())
    local f = T.arange(6, 'int32'):flip(0)
    T.save(p, f)
    assert.are.same({ 5, 4, 3, 2, 1, 0 }, T.load(p):totable())
    os.remove(p)
  end)

  it('reads big-endian data, Fortran order and format versions 2.0 and 3.0', function()
    local p = H.tmp('.npy')
    -- >f4 values 1.5, -2 (IEEE bits 0x3FC00000, 0xC0000000)
    H.write_file(p, H.npy_bytes("{'descr': '>f4', 'fortran_order': False, 'shape': (2,), }",
      '\63\192\0\0' .. '\192\0\0\0'))
    local t = T.load(p)
    assert.are.equal('float32', t.dtype)
    assert.are.same({ 1.5, -2 }, t:totable())
    -- >i2 and >i8
    H.write_file(p, H.npy_bytes("{'descr': '>i2', 'fortran_order': False, 'shape': (2,), }", '\1\2\255\254'))
    assert.are.same({ 258, -2 }, T.load(p):totable())
    -- Fortran order: the (2, 3) array [[0,1,2],[3,4,5]] is stored column by column
    local data = ''
    for _, v in ipairs({ 0, 3, 1, 4, 2, 5 }) do data = data .. H.le(v, 4) end
    H.write_file(p, H.npy_bytes("{'descr': '<i4', 'fortran_order': True, 'shape': (2, 3), }", data))
    assert.are.same({ { 0, 1, 2 }, { 3, 4, 5 } }, T.load(p):totable())
    -- version 2.0 and 3.0 (4-byte header length), keys in another order
    for _, major in ipairs({ 2, 3 }) do
      H.write_file(p, H.npy_bytes("{'shape': (3,), 'fortran_order': False, 'descr': '|u1'}", '\1\2\3', major))
      local u = T.load(p)
      assert.are.equal('uint8', u.dtype)
      assert.are.same({ 1, 2, 3 }, u:totable())
    end
    -- uint16 widens to int32
    H.write_file(p, H.npy_bytes("{'descr': '<u2', 'fortran_order': False, 'shape': (1,), }", '\255\255'))
    local w = T.load(p)
    assert.are.equal('int32', w.dtype)
    assert.are.same({ 65535 }, w:totable())
    os.remove(p)
  end)

  it('rejects object arrays, unknown dtypes and damaged files with the file name', function()
    local p = H.tmp('.npy')
    local function err_of()
      local ok, e = pcall(T.load, p)
      assert.is_false(ok)
      assert.is_truthy(e:find(p, 1, true), e)
      return e
    end
    H.write_file(p, H.npy_bytes("{'descr': '|O', 'fortran_order': False, 'shape': (2,), }", string.rep('\0', 16)))
    assert.matches('object arrays', err_of())
    H.write_file(p, H.npy_bytes("{'descr': '<c16', 'fortran_order': False, 'shape': (1,), }", string.rep('\0', 16)))
    assert.matches("dtype descr '<c16' has no chainlua dtype", err_of())
    H.write_file(p, H.npy_bytes("{'descr': '<f4', 'fortran_order': False, 'shape': (100,), }", '\0\0\0\0'))
    assert.matches('truncated .npy data', err_of())
    H.write_file(p, 'hello, this is not numpy at all')
    assert.matches('not a .npy file', err_of())
    H.write_file(p, H.npy_bytes("{'descr': '<f4', 'fortran_order': False, 'shape': (2, }", ''))
    assert.matches("malformed 'shape'", err_of())
    os.remove(p)
    local ok, e = pcall(T.load, '/nonexistent/dir/x.npy')
    assert.is_false(ok)
    assert.matches("load: cannot open '/nonexistent/dir/x.npy'", e)
    ok, e = pcall(T.save, 3, T.zeros({ 1 }))
    assert.matches('save: path must be a non%-empty string', e)
  end)

  it('writes atomically: no temporary file is left behind', function()
    local dir = H.tmp('')
    os.execute('mkdir -p ' .. dir)
    T.save(dir .. '/a.npy', T.ones({ 3 }))
    local listing = io.popen('ls -A ' .. dir):read('*a')
    assert.are.equal('a.npy\n', listing)
    os.execute('rm -rf ' .. dir)
  end)
end)
