-- IDX (MNIST format): generated files of every element type, gzip or plain,
-- bad files, and the real MNIST files when $CHAINER_DATASET_ROOT has them.
local T = require 'chainer.tensor'
local H = require 'io.helpers'

local function idx_bytes(type_byte, dims, payload)
  local s = '\0\0' .. string.char(type_byte, #dims)
  for _, d in ipairs(dims) do s = s .. H.be(d, 4) end
  return s .. payload
end

describe('tensor.load_idx', function()
  it('reads uint8 images (plain and gzip)', function()
    local payload = ''
    for i = 0, 2 * 3 * 4 - 1 do payload = payload .. string.char((i * 11) % 256) end
    local p = H.tmp('.idx')
    H.write_file(p, idx_bytes(0x08, { 2, 3, 4 }, payload))
    local t = T.load_idx(p)
    assert.are.equal('uint8', t.dtype)
    assert.are.same({ 2, 3, 4 }, t.shape)
    assert.are.equal(11 * 5, t:get(0, 1, 1))
    assert.are.equal((23 * 11) % 256, t:get(1, 2, 3))
    os.execute('gzip -c ' .. p .. ' > ' .. p .. '.gz')
    local g = T.load_idx(p .. '.gz')
    assert.are.same(t:totable(), g:totable())
    os.remove(p)
    os.remove(p .. '.gz')
  end)

  it('reads the big-endian element types 0x09, 0x0B, 0x0C, 0x0D, 0x0E', function()
    local p = H.tmp('.idx')
    local cases = {
      { 0x09, 'int8', '\255\1', { -1, 1 } },
      { 0x0B, 'int16', '\1\2\255\254', { 258, -2 } },
      { 0x0C, 'int32', '\0\1\0\0\255\255\255\255', { 65536, -1 } },
      { 0x0D, 'float32', '\63\192\0\0\192\0\0\0', { 1.5, -2 } },
      { 0x0E, 'float64', '\63\248\0\0\0\0\0\0\192\0\0\0\0\0\0\0', { 1.5, -2 } },
    }
    for _, c in ipairs(cases) do
      H.write_file(p, idx_bytes(c[1], { 2 }, c[3]))
      local t = T.load_idx(p)
      assert.are.equal(c[2], t.dtype)
      assert.are.same(c[4], t:totable())
    end
    os.remove(p)
  end)

  it('rejects bad magic, unknown types, truncation and trailing data, naming the file', function()
    local p = H.tmp('.idx')
    local function err_of(bytes)
      H.write_file(p, bytes)
      local ok, e = pcall(T.load_idx, p)
      assert.is_false(ok)
      assert.is_truthy(e:find(p, 1, true), e)
      return e
    end
    assert.matches('not an IDX file', err_of('\1\2\8\1\0\0\0\1x'))
    assert.matches('unknown IDX element type 0x07', err_of(idx_bytes(0x07, { 1 }, 'x')))
    assert.matches('truncated data', err_of(idx_bytes(0x08, { 10 }, 'abc')))
    assert.matches('data continues past', err_of(idx_bytes(0x08, { 2 }, 'abc')))
    assert.matches('truncated header', err_of('\0\0\8\3\0\0'))
    assert.matches('0 dimensions', err_of('\0\0\8\0'))
    -- found by fuzz_idx (tests/fuzz/regressions/idx): 10 bytes announcing
    -- 2.8e9 int32s were allocated before the read found them missing
    local e = err_of(H.read_file('tests/fuzz/regressions/idx/huge-shape-10-bytes'))
    assert.truthy(e:find('truncated data (the header announces 11140071424 data bytes, the file can hold at most 2)',
      1, true), e)
    os.remove(p)
    local ok, e = pcall(T.load_idx, '/nonexistent/x.idx')
    assert.matches("load_idx: cannot open '/nonexistent/x.idx'", e)
  end)

  it('reads MNIST from $CHAINER_DATASET_ROOT/mnist', function()
    local root = os.getenv('CHAINER_DATASET_ROOT')
    local dir = root and (root .. '/mnist')
    if not dir or not H.exists(dir .. '/train-images-idx3-ubyte.gz') then
      pending('CHAINER_DATASET_ROOT/mnist not available')
      return
    end
    local images = T.load_idx(dir .. '/train-images-idx3-ubyte.gz')
    assert.are.equal('uint8', images.dtype)
    assert.are.same({ 60000, 28, 28 }, images.shape)
    local labels = T.load_idx(dir .. '/train-labels-idx1-ubyte.gz')
    assert.are.same({ 60000 }, labels.shape)
    local C, ffi = T.C, T.ffi
    local lp = ffi.cast('uint8_t*', C.ch_tensor_ptr(labels.ptr))
    assert.are.same({ 5, 0, 4, 1, 9 }, { lp[0], lp[1], lp[2], lp[3], lp[4] })
    local counts = { [0] = 0, 0, 0 }
    for i = 0, 59999 do
      local v = lp[i]
      if v <= 2 then counts[v] = counts[v] + 1 end
    end
    assert.are.same({ [0] = 5923, 6742, 5958 }, counts)
    local test = T.load_idx(dir .. '/t10k-images-idx3-ubyte.gz')
    assert.are.same({ 10000, 28, 28 }, test.shape)
    local tp = ffi.cast('uint8_t*', C.ch_tensor_ptr(test.ptr))
    local sum = 0
    for i = 0, 28 * 28 - 1 do sum = sum + tp[i] end
    assert.are.equal(18454, sum)   -- pixel sum of the first test image (NumPy)
  end)
end)
