-- Specs for PickleDataset, PickleDatasetWriter and the open_* helpers.
-- Values are checked one by one against what Python says it wrote or read:
-- a committed file made by Python (spec/fixtures/pickle/make_fixtures.py),
-- and, where python3 with NumPy is present, live round trips both ways
-- (Python describes every value it pickled or unpickled as tagged JSON:
-- types, dtypes, shapes and the elements' bytes).
local chainer = require 'chainer'
local T = chainer.tensor
local D = chainer.datasets
local P = D.pickle_dataset
local json = require 'chainer.utils.json'
local IO = require 'spec.io.helpers'
local errors_with = require('spec.dataset.helpers').errors_with
local ffi = T.ffi

local FIXTURE = 'spec/fixtures/pickle/python_examples.pkl'

local function hex(s) return (s:gsub('.', function(c) return string.format('%02x', c:byte()) end)) end
local double_bytes = ffi.new('union { double d; uint8_t b[8]; }')
local function double_hex(x)
  double_bytes.d = x
  local s = {}
  for k = 0, 7 do s[k + 1] = string.format('%02x', double_bytes.b[k]) end
  return table.concat(s)
end

local function check_tensor(t, dtype, shape, values)
  assert.is_true(T.is_tensor(t), 'a tensor')
  assert.are.equal(dtype, t.dtype)
  assert.are.same(shape, t.shape)
  local got = t:tolist()
  assert.are.equal(#values, #got)
  for i = 1, #values do
    if got[i] ~= values[i] then error(string.format('element %d: %s, expected %s', i, tostring(got[i]),
      tostring(values[i])), 2) end
  end
end

-- x = arange(12).reshape(3, 4) / 8 in C order, and its columns 0 and 2
local X, X_EVEN = {}, {}
for i = 0, 11 do X[i + 1] = i / 8 end
for r = 0, 2 do for c = 0, 2, 2 do X_EVEN[#X_EVEN + 1] = (4 * r + c) / 8 end end

describe('PickleDataset', function()
  it("reads a file Python's pickle wrote at protocols 2 to 5, value by value", function()
    local ds = D.open_pickle_dataset(FIXTURE)
    assert.are.equal(4, ds:len())
    for k = 1, 4 do
      local e = ds[k]
      assert.are.equal(26, #e)
      assert.are.equal(k + 1, e[1])   -- the protocol
      assert.are.equal(-7, e[2])
      assert.are.equal(2 ^ 40, e[3])
      assert.is_true(ffi.istype('int64_t', e[4]) and e[4] == -9223372036854775807LL - 1)
      assert.are.equal(2.5, e[5])
      assert.are.equal('h\195\169llo', e[6])
      assert.are.equal('\0\255ab', e[7])
      assert.are.equal(P.None, e[8])
      assert.are.equal(true, e[9])
      assert.are.equal(false, e[10])
      check_tensor(e[11], 'float32', { 3, 4 }, X)
      check_tensor(e[12], 'float64', { 3, 4 }, X)                  -- Fortran order
      check_tensor(e[13], 'float32', { 3, 4 }, X)                  -- big-endian
      check_tensor(e[14], 'int64', {}, { 3 })
      check_tensor(e[15], 'bool', { 3 }, { true, false, true })
      check_tensor(e[16], 'uint8', { 2, 3 }, { 0, 1, 2, 3, 4, 5 })
      check_tensor(e[17], 'int32', { 2 }, { 65535, 0 })            -- uint16 widens, as in .npy
      check_tensor(e[18], 'int16', { 6 }, { -3, -2, -1, 0, 1, 2 })
      check_tensor(e[19], 'float64', { 3, 2 }, X_EVEN)             -- a strided view
      check_tensor(e[20], 'int32', { 0, 3 }, {})
      check_tensor(e[21], 'float16', { 3, 4 }, X)
      assert.are.equal(1.5, e[22])                                 -- numpy scalars are numbers
      assert.are.equal(-4, e[23])
      assert.are.equal(true, e[24])
      assert.are.same({ 1, { 2, { a = '' } } }, e[25])
      assert.are.same({ k = 1, [2] = 'two', [2.5] = P.None }, e[26])
    end
    ds:close()
  end)

  it('counts from 1, accepts negative indices and reads an example again', function()
    local ds = D.PickleDataset(FIXTURE)
    assert.are.equal(5, ds[-1][1])
    assert.are.equal(2, ds:get_example(1)[1])
    assert.are.equal(2, ds[1][1])
    assert.has_error(function() return ds[5] end)
    assert.has_error(function() return ds[0] end)
    ds:close()
    errors_with(function() return ds:get_example(1) end, "PickleDataset: '" .. FIXTURE .. "' is closed")
  end)

  it("feeds a MultiprocessIterator's forked workers (the mapped file is shared safely)", function()
    local path = IO.tmp('.pkl')
    local w = D.open_pickle_dataset_writer(path)
    for i = 1, 12 do w:write({ T.full({ 2, 3 }, i, 'float32'), i, 'n' .. i }) end
    w:close()
    local ds = D.open_pickle_dataset(path)
    local iter = chainer.iterators.MultiprocessIterator(ds, 12, { n_processes = 2, shuffle = false, loop = false })
    local batch = iter:next()
    for i = 1, 12 do
      check_tensor(batch[i][1], 'float32', { 2, 3 }, { i, i, i, i, i, i })
      assert.are.equal(i, batch[i][2])
      assert.are.equal('n' .. i, batch[i][3])
    end
    iter:finalize()
    ds:close()
    os.remove(path)
  end)

  it('an empty file is an empty dataset', function()
    local path = IO.tmp('.pkl')
    IO.write_file(path, '')
    local ds = D.open_pickle_dataset(path)
    assert.are.equal(0, ds:len())
    ds:close()
    os.remove(path)
  end)

  it('keeps shared references shared', function()
    -- (l, l) with l = [1]: the memo hands the same list out twice
    local path = IO.tmp('.pkl')
    IO.write_file(path, '\128\2]q\0K\1ah\0\134q\1.')
    local e = D.open_pickle_dataset(path)[1]
    assert.are.equal(e[1], e[2])
    assert.are.same({ 1 }, e[1])
    os.remove(path)
  end)
end)

describe('PickleDataset refuses what is not data', function()
  local path
  before_each(function() path = IO.tmp('.pkl') end)
  after_each(function() os.remove(path) end)

  local function refused(bytes, pattern)
    IO.write_file(path, bytes)
    local ok, err = pcall(D.open_pickle_dataset, path)
    assert.is_false(ok)
    assert.truthy(tostring(err):find(pattern, 1, true), tostring(err))
    assert.truthy(tostring(err):find(path, 1, true), 'the message names the file: ' .. tostring(err))
  end

  it('a global that runs code (os.system), naming the offset and the opcode', function()
    refused('\128\2cos\nsystem\nX\2\0\0\0id\133R.',
      "pickle at offset 2, opcode 0x63 (GLOBAL): refusing the global 'os.system'")
  end)

  it('STACK_GLOBAL of builtins.eval, in the second pickle of the file', function()
    local good = '\128\4K\1.'
    refused(good .. '\128\4\140\8builtins\140\4eval\147\140\0062+2\133R.',
      'offset ' .. (#good + 18) .. ', opcode 0x93 (STACK_GLOBAL)')
  end)

  it('BUILD on anything but a NumPy array or dtype, and calls of non-functions', function()
    refused('\128\2}}b.', 'opcode 0x62 (BUILD): BUILD is only accepted for NumPy arrays and dtypes')
    refused('\128\2K\1)R.', 'opcode 0x52 (REDUCE): only NumPy')
  end)

  it('_codecs.encode only as protocol 2 spells bytes', function()
    refused('\128\2c_codecs\nencode\nX\1\0\0\0aX\5\0\0\0utf-8\134R.', "encode(str, 'latin1')")
  end)

  it('object arrays, structured dtypes, out-of-band buffers and sets', function()
    refused('\128\2cnumpy.core.multiarray\nscalar\ncnumpy\ndtype\nX\2\0\0\0O8\137\136\135R(K\3X\1\0\0\0|NNN'
      .. 'J\255\255\255\255J\255\255\255\255K\63tbC\8' .. string.rep('\0', 8) .. '\134R.', "object arrays (descr '|O8')")
    refused('\128\2cnumpy\ndtype\nX\2\0\0\0V8\137\136\135R(K\3X\1\0\0\0|N)NJ\255\255\255\255J\255\255\255\255K\0tb.',
      'structured and sub-array NumPy dtypes are not supported')
    refused('\128\5\151.', 'opcode 0x97 (NEXT_BUFFER): out-of-band buffers')
    refused('\128\4\143.', 'opcode 0x8f (EMPTY_SET): sets are not supported')
  end)

  it('a bare class or dtype as a value', function()
    refused('\128\2cnumpy\nndarray\n.', 'the pickle holds a bare function or class')
  end)

  it('protocols 0 and 1, and opcodes outside the data subset', function()
    refused('\128\1N.', 'pickle protocol 1 (this reader takes protocols 2 to 5)')
    refused('I1\n.', 'opcode 0x49 (INT): this opcode is not part of the data subset')
  end)

  it('truncated and damaged files, with the offset', function()
    refused('\128\2K\1.\128\2X\9\0\0\0abc', 'pickle at offset 7, opcode 0x58 (BINUNICODE): the pickle is truncated')
    refused('\128\2K\1', 'pickle at offset 0 is truncated: it ends at offset 4 without a STOP opcode')
    refused('\128\2h\7.', 'memo index 7 was never stored')
    refused('\128\2r\255\255\255\255.', 'memo index 4294967295 is larger than the pickle')
    refused('\128\2\138\9\0\0\0\0\0\0\0\0\1.', 'an integer of 9 bytes does not fit in 64 bits')
    refused('\128\2K\1K\2.', 'values or marks are left on the stack')
    refused('\128\2t.', 'no MARK to pop')
    refused('\128\2e.', 'no MARK to pop')
    refused('\128\2(K\1a.', 'APPEND')
  end)

  it('a NumPy array whose data does not match its shape', function()
    local function array(data)
      return '\128\3cnumpy.core.multiarray\n_reconstruct\ncnumpy\nndarray\nK\0\133C\1b\135R(K\1K\3\133'
        .. 'cnumpy\ndtype\nX\2\0\0\0f4\137\136\135R(K\3X\1\0\0\0<NNNJ\255\255\255\255J\255\255\255\255K\0tb'
        .. '\137C' .. string.char(#data) .. data .. 'tb.'
    end
    IO.write_file(path, array(string.rep('\0', 12)))
    check_tensor(D.open_pickle_dataset(path)[1], 'float32', { 3 }, { 0, 0, 0 })
    refused(array(string.rep('\0', 11)), 'a NumPy array of 3 elements of 4 bytes holds 11 bytes of data')
  end)

  it('containers nested deeper than Python writes them', function()
    IO.write_file(path, '\128\2' .. string.rep(']', 1200) .. string.rep('a', 1199) .. '.')
    local ds = D.open_pickle_dataset(path)
    assert.has_error(function() return ds[1] end)
    local ok, err = pcall(function() return ds[1] end)
    assert.truthy(tostring(err):find('containers nested more than 1000 deep', 1, true), tostring(err))
  end)

  it('bad arguments', function()
    errors_with(function() D.PickleDataset(3) end,
      'PickleDataset: reader must be the path of a pickle dataset file (got number)')
    local ok, err = pcall(D.open_pickle_dataset, '/nonexistent/x.pkl')
    assert.is_false(ok)
    assert.truthy(tostring(err):find("'/nonexistent/x.pkl': cannot open", 1, true), tostring(err))
  end)
end)

describe('PickleDatasetWriter', function()
  local path
  before_each(function() path = IO.tmp('.pkl') end)
  after_each(function() os.remove(path) end)

  it('round-trips through chainlua at every protocol', function()
    for proto = 2, 5 do
      local w = D.open_pickle_dataset_writer(path, proto)
      local x = T.arange(6, 'float32'):reshape({ 2, 3 })
      w:write({ 1, 2.5, 'text', P.bytes('raw'), P.None, true, x, x:transpose() })
      w:write({ a = P.list({ 1, 2 }), [3] = P.float(4), [false] = {} })
      w:write(T.array(123456789012, 'int64'))
      w:write(9007199254740993LL)
      w:close()
      local ds = D.open_pickle_dataset(path)
      assert.are.equal(4, ds:len())
      local e = ds[1]
      assert.are.same({ 1, 2.5, 'text', 'raw', P.None, true }, { unpack(e, 1, 6) })
      check_tensor(e[7], 'float32', { 2, 3 }, { 0, 1, 2, 3, 4, 5 })
      check_tensor(e[8], 'float32', { 3, 2 }, { 0, 3, 1, 4, 2, 5 })
      assert.are.same({ a = { 1, 2 }, [3] = 4, [false] = {} }, ds[2])
      check_tensor(ds[3], 'int64', {}, { 123456789012 })
      assert.is_true(ffi.istype('int64_t', ds[4]) and ds[4] == 9007199254740993LL)
      ds:close()
    end
  end)

  it("reads NumPy 2's module names (numpy._core) as well as NumPy 1's", function()
    for _, proto in ipairs({ 3, 5 }) do
      local w = D.open_pickle_dataset_writer(path, proto)
      w:write(T.arange(4, 'int16'))
      w:close()
      local bytes = IO.read_file(path)
      local renamed, n = bytes:gsub('cnumpy%.core%.', 'cnumpy._core.')
      assert.is_true(n >= 1)
      IO.write_file(path, renamed)
      check_tensor(D.open_pickle_dataset(path)[1], 'int16', { 4 }, { 0, 1, 2, 3 })
    end
  end)

  it('refuses what has no pickle form, and bad protocols', function()
    local w = D.open_pickle_dataset_writer(path)
    local loop = {}
    loop[1] = loop
    errors_with(function() w:write(loop) end,
      'PickleDatasetWriter:write: pickle: a table contains itself (pickle datasets hold trees of values)')
    errors_with(function() w:write({ print }) end,
      'PickleDatasetWriter:write: pickle: cannot write a function (writable: numbers, booleans, strings, tables, '
      .. 'tensors, None)')
    errors_with(function() w:write({ [{}] = 1 }) end,
      'PickleDatasetWriter:write: pickle: a table key of type table (dict keys must be strings, numbers or booleans)')
    w:close()
    errors_with(function() D.open_pickle_dataset_writer(path, 1) end,
      'open_pickle_dataset_writer: protocol must be 2, 3, 4 or 5 (got 1; protocols 0 and 1 are not written)')
    errors_with(function() D.open_pickle_dataset_writer(path, { protocl = 3 }) end,
      "open_pickle_dataset_writer: unknown option 'protocl' (accepted: path, protocol)")
    errors_with(function() D.PickleDatasetWriter('x') end,
      'PickleDatasetWriter: writer must be an open file or an object with a write method (got string)')
  end)

  it('writes to any object with a write method', function()
    local chunks = {}
    local sink = { write = function(_, s) chunks[#chunks + 1] = s end }
    local w = D.PickleDatasetWriter(sink, { protocol = 3 })
    w:write({ 1, 'a' })
    w:write(P.None)
    w:flush()
    IO.write_file(path, table.concat(chunks))
    local ds = D.open_pickle_dataset(path)
    assert.are.same({ 1, 'a' }, ds[1])
    assert.are.equal(P.None, ds[2])
  end)
end)

---------------------------------------------------------------------------
-- live round trips with Python
---------------------------------------------------------------------------
-- Python's side: `describe FILE...` loads every pickle of each file and
-- prints their tagged descriptions; `make FILE SEED` writes varied examples
-- (example k at protocol 2 + k % 4) and prints theirs.
local PY = [=[
import json, pickle, struct, sys
import numpy as np

WIDEN = {'uint16': 'int32', 'uint32': 'int64'}   # chainlua's dtypes for NumPy's unsigned ones

def tag(v):
    if v is None: return {'t': 'None'}
    if isinstance(v, (bool, np.bool_)): return {'t': 'bool', 'v': bool(v)}
    if isinstance(v, (int, np.integer)): return {'t': 'int', 'v': str(int(v))}
    if isinstance(v, (float, np.floating)): return {'t': 'float', 'v': struct.pack('<d', float(v)).hex()}
    if isinstance(v, str): return {'t': 'str', 'v': v.encode('utf-8').hex()}
    if isinstance(v, (bytes, bytearray)): return {'t': 'bytes', 'v': bytes(v).hex()}
    if isinstance(v, tuple): return {'t': 'tuple', 'v': [tag(x) for x in v]}
    if isinstance(v, list): return {'t': 'list', 'v': [tag(x) for x in v]}
    if isinstance(v, dict): return {'t': 'dict', 'v': [[tag(k), tag(x)] for k, x in v.items()]}
    if isinstance(v, np.ndarray):
        name = WIDEN.get(v.dtype.name, v.dtype.name)
        a = np.ascontiguousarray(v).astype(np.dtype(name).newbyteorder('<'))
        return {'t': 'ndarray', 'dtype': name, 'shape': list(v.shape), 'itemsize': a.itemsize,
                'v': a.tobytes().hex()}
    raise TypeError(type(v))

def describe(paths):
    out = {}
    for p in paths:
        items = []
        with open(p, 'rb') as f:
            while True:
                try: items.append(tag(pickle.load(f)))
                except EOFError: break
        out[p] = items
    return out

def make(path, seed):
    r = np.random.RandomState(seed)
    examples = []
    for dt in ['bool', 'int8', 'uint8', 'int16', 'int32', 'int64', 'float16', 'float32', 'float64',
               'uint16', 'uint32', '>f8', '>i4', '>u2']:
        for shape in [(), (5,), (3, 4), (2, 3, 4), (0, 3)]:
            a = (r.standard_normal(shape) * 100)
            a = (a > 0) if dt == 'bool' else a.astype(dt)
            examples.append((a, np.asfortranarray(a), a.T, a[..., ::2] if a.ndim else a))
    examples.append((r.randint(-2**62, 2**62), float(r.standard_normal()), np.float16(r.standard_normal()),
                     np.uint8(200), np.int16(-300), np.float64('inf'), -0.0, 'sn\u00f8 \u2603 \U0001d11e', b'\x00\x80\xff',
                     bytearray(b'ba'), [None, True, (1,)], {'x': [1.5], 7: b'k', 2.5: (), False: 'f'}))
    with open(path, 'wb') as f:
        for k, e in enumerate(examples):
            pickle.dump(e, f, protocol=2 + k % 4)
    return [tag(e) for e in examples]

if sys.argv[1] == 'describe': print(json.dumps(describe(sys.argv[2:])))
else: print(json.dumps(make(sys.argv[2], int(sys.argv[3]))))
]=]

-- Does the Lua value v match Python's description d?  Errors say where not.
local match

local function fail(where, msg) error(where .. ': ' .. msg, 0) end

local function lua_key(d)
  if d.t == 'str' or d.t == 'bytes' then
    return (d.v:gsub('..', function(h) return string.char(tonumber(h, 16)) end))
  elseif d.t == 'int' then return tonumber(d.v)
  elseif d.t == 'bool' then return d.v
  elseif d.t == 'float' then
    for k = 0, 7 do double_bytes.b[k] = tonumber(d.v:sub(2 * k + 1, 2 * k + 2), 16) end
    return double_bytes.d
  end
  error('unexpected key ' .. d.t)
end

function match(v, d, where)
  local t = d.t
  if t == 'None' then
    if v ~= P.None then fail(where, 'expected None, got ' .. tostring(v)) end
  elseif t == 'bool' then
    if v ~= d.v then fail(where, 'expected ' .. tostring(d.v) .. ', got ' .. tostring(v)) end
  elseif t == 'int' then
    local s = type(v) == 'number' and string.format('%.0f', v) or tostring(v):gsub('U?LL$', '')
    if type(v) == 'number' and math.abs(v) > 2 ^ 53 then fail(where, 'a big int came back as a lossy number') end
    if s ~= d.v then fail(where, 'expected int ' .. d.v .. ', got ' .. tostring(v)) end
  elseif t == 'float' then
    if type(v) ~= 'number' or double_hex(v) ~= d.v then
      fail(where, 'expected the double with bytes ' .. d.v .. ', got ' .. tostring(v))
    end
  elseif t == 'str' or t == 'bytes' then
    if type(v) ~= 'string' or hex(v) ~= d.v then fail(where, 'expected ' .. t .. ' ' .. d.v .. ', got ' .. tostring(v)) end
  elseif t == 'tuple' or t == 'list' then
    if type(v) ~= 'table' or #v ~= #d.v then fail(where, 'expected a ' .. t .. ' of ' .. #d.v .. ' items') end
    for i, di in ipairs(d.v) do match(v[i], di, where .. '[' .. i .. ']') end
  elseif t == 'dict' then
    if type(v) ~= 'table' then fail(where, 'expected a dict') end
    local n = 0
    for _ in pairs(v) do n = n + 1 end
    if n ~= #d.v then fail(where, 'expected ' .. #d.v .. ' keys, got ' .. n) end
    for _, kv in ipairs(d.v) do match(v[lua_key(kv[1])], kv[2], where .. '.' .. tostring(lua_key(kv[1]))) end
  elseif t == 'ndarray' then
    if not T.is_tensor(v) then fail(where, 'expected a tensor') end
    if v.dtype ~= d.dtype then fail(where, 'dtype ' .. v.dtype .. ', expected ' .. d.dtype) end
    if table.concat(v.shape, ',') ~= table.concat(d.shape, ',') then
      fail(where, 'shape (' .. table.concat(v.shape, ',') .. '), expected (' .. table.concat(d.shape, ',') .. ')')
    end
    local got = hex(IO.bytes(v))
    local w = 2 * d.itemsize
    if #got ~= #d.v then fail(where, 'data of ' .. #got / w .. ' elements, expected ' .. #d.v / w) end
    for i = 0, #d.v / w - 1 do   -- element by element, bit for bit
      local a, b = got:sub(i * w + 1, (i + 1) * w), d.v:sub(i * w + 1, (i + 1) * w)
      if a ~= b then fail(where, string.format('element %d has bytes %s, expected %s', i + 1, a, b)) end
    end
  else
    error('unexpected tag ' .. t)
  end
end

describe('PickleDataset with Python (python3 and NumPy)', function()
  local py = IO.python_numpy()
  local script
  setup(function()
    script = IO.tmp('.py')
    IO.write_file(script, PY)
  end)
  teardown(function() os.remove(script) end)

  local function run(args)
    local out = io.popen(py .. ' ' .. script .. ' ' .. args .. ' 2>&1'):read('*a')
    local ok, v = pcall(json.decode, out)
    if not ok then error('python: ' .. out) end
    return v
  end

  it("reads what Python's pickle writes: every dtype and layout, protocols 2 to 5", function()
    if not py then pending('python3 with numpy is not available') return end
    local path = IO.tmp('.pkl')
    for _, seed in ipairs({ 1, 2 }) do
      local want = run('make ' .. path .. ' ' .. seed)
      local ds = D.open_pickle_dataset(path)
      assert.are.equal(#want, ds:len())
      for k = 1, #want do match(ds[k], want[k], 'example ' .. k) end
      ds:close()
    end
    os.remove(path)
  end)

  it('Python reads what chainlua writes, at protocols 2 to 5', function()
    if not py then pending('python3 with numpy is not available') return end
    local paths = {}
    local examples = {}
    for _, dt in ipairs(IO.dtypes) do
      for _, shape in ipairs({ {}, { 5 }, { 3, 4 }, { 2, 3, 4 }, { 0, 3 } }) do
        local a = IO.sample(dt, shape)
        examples[#examples + 1] = { a, #shape > 1 and a:transpose() or a }
      end
    end
    local listed = { 1, P.None }
    local other = { 7, -2 ^ 53, 2 ^ 31, -2 ^ 31 - 1, 1e300, -0.0, 1 / 0, P.float(3), 9007199254740993LL,
      18446744073709551615ULL, 'h\195\169llo \226\152\131', '\255\0raw', P.bytes('utf8 too'), P.bytes(''), '',
      true, false, P.None, P.list(listed), {}, { a = 1, [2] = 'b', [2.5] = { 1 }, [true] = P.None } }
    examples[#examples + 1] = other
    for proto = 2, 5 do
      local path = IO.tmp('.pkl')
      paths[#paths + 1] = path
      local w = D.open_pickle_dataset_writer(path, proto)
      for _, e in ipairs(examples) do w:write(e) end
      w:close()
    end
    local got = run('describe ' .. table.concat(paths, ' '))
    for _, path in ipairs(paths) do
      local items = got[path]
      assert.are.equal(#examples, #items)
      for k = 1, #examples - 1 do match(examples[k], items[k], path .. ' example ' .. k) end
      -- the numbers and strings whose Python type the writer chooses
      local d = items[#examples].v
      local want_types = { 'int', 'int', 'int', 'int', 'float', 'float', 'float', 'float', 'int', 'int', 'str',
        'bytes', 'bytes', 'bytes', 'str', 'bool', 'bool', 'None', 'list', 'tuple', 'dict' }
      for i, t in ipairs(want_types) do assert.are.equal(t, d[i].t, 'item ' .. i) end
      assert.are.equal('18446744073709551615', d[10].v)
      assert.are.equal('9007199254740993', d[9].v)
      assert.are.equal(double_hex(-0.0), d[6].v)
      assert.are.equal(hex('utf8 too'), d[13].v)
      match(listed, d[19], 'listed')
      match(other[21], d[21], 'dict')
    end
    for _, p in ipairs(paths) do os.remove(p) end
  end)
end)
