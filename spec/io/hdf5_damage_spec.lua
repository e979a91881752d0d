-- Damaged HDF5 files that used to crash, hang or give wrong numbers
-- (issue 21): a variable-length string's global heap corrupted at every byte
-- of its objects and references, a float type whose size was edited, an
-- unavailable filter, an object the listing cannot open.
--
-- The heap variants are read in a child process with a time limit, so a
-- crash or a hang fails this spec instead of killing busted: every variant
-- must give an error naming the file or strings of the original shape, and a
-- model load (which never reads strings) the exact parameters.
local chainer = require 'chainer'
local T = require 'chainer.tensor'
local helpers = require 'helpers'
local H = require 'io.helpers'

local FIX = 'spec/fixtures/hdf5/'

-- Every variant of `bytes` with one byte of [first, last] (1-based)
-- complemented (sizes, indices and addresses become huge, zero ones
-- all-ones, and the reverse).
local function variants_of(bytes, first, last, out)
  for i = first, math.min(last, #bytes) do
    local v = 255 - bytes:byte(i)
    out[#out + 1] = bytes:sub(1, i - 1) .. string.char(v) .. bytes:sub(i + 1)
  end
end

-- The global heap collection ("GCOL": header and objects) and the 16-byte
-- heap references to it (length, collection address, index) in the datasets.
local function heap_variants(bytes, heap_bytes, with_references)
  local out = {}
  local gcol = assert(bytes:find('GCOL', 1, true), 'the fixture has a global heap')
  variants_of(bytes, gcol, gcol + heap_bytes - 1, out)
  if not with_references then return out end
  local addr = gcol - 1
  local le = {}
  for k = 1, 8 do le[k] = string.char(math.floor(addr / 2 ^ (8 * (k - 1))) % 256) end
  le = table.concat(le)
  local at = 1
  while true do
    local i = bytes:find(le, at, true)
    if not i then break end
    if i ~= gcol then variants_of(bytes, i - 4, i + 11, out) end
    at = i + 1
  end
  return out
end

-- Runs `script` with the interpreter that loads libchainlua in this build;
-- returns its output and whether it exited normally.
local function run_child(script, dir)
  local path = dir .. '/child.lua'
  helpers.write_file(path, script)
  local cmd = string.format("cd %q && CHAINLUA_ISOLATE_TIMEOUT=1 LUA_PATH=%q timeout -s KILL 900 %s %q 2>&1; echo \"exit $?\"",
    os.getenv('PWD') or '.', package.path, helpers.lua_interpreter(), path)
  local p = io.popen(cmd)
  local out = p:read('*a')
  p:close()
  return out
end

describe('damaged HDF5 variable-length strings', function()
  it('give an error naming the file or strings of the right shape, never a crash or hang; model loads stay exact', function()
    local dir = helpers.tmpdir()
    local files = {}
    -- h5py's file: the whole heap in use (collection header, four objects,
    -- the free space) and every reference; the model: the collection header
    -- and its first object
    for _, base in ipairs({ FIX .. 'model_vlen.h5', 'spec/fixtures/strings/h5py_strings.h5' }) do
      local model = base:find('model_vlen', 1, true) ~= nil
      for _, v in ipairs(heap_variants(H.read_file(base), model and 48 or 144, not model)) do
        local name = string.format('%s/v%04d.h5', dir, #files + 1)
        helpers.write_file(name, v)
        files[#files + 1] = { name = name, model = model }
      end
    end
    assert.is_true(#files > 200, #files .. ' variants')
    local lines = { 'local chainer = require "chainer"', 'local T, L, S = chainer.tensor, chainer.links, chainer.serializers',
      'local files = {' }
    for _, f in ipairs(files) do lines[#lines + 1] = string.format('{%q, %s},', f.name, tostring(f.model)) end
    lines[#lines + 1] = [[}
local Net = chainer.Chain:extend('DamageNet')
function Net:init() self.l1 = L.Linear(2, 3) self.l2 = L.Linear(3, 2, true) end
for i, f in ipairs(files) do
  local ok, res = pcall(T.load_hdf5, f[1])
  if ok then
    local s = res['extensions/names'] or res['vlen1d']
    io.write('ok ', i, ' ', tostring(T.is_string_array(s) and #s or -1), '\n')
  else
    io.write('err ', i, ' ', (tostring(res):gsub('\n', ' ')), '\n')
  end
  if f[2] then
    local m = Net()
    local ok2, e2 = pcall(S.load_hdf5, f[1], m, { path = 'predictor/' })
    local w = ok2 and m.l2.W.array:totable() or nil
    io.write('model ', i, ' ', ok2 and string.format('%g %g %g', m.l1.W.array:totable()[3][2], m.l1.b.array:totable()[3], w[2][3])
      or (tostring(e2):gsub('\n', ' ')), '\n')
  end
  io.flush()
end
io.write('done\n')
]]
    local out = run_child(table.concat(lines, '\n'), dir)
    assert.truthy(out:find('\ndone\nexit 0\n$') or out:find('^done\nexit 0\n$'), 'the child died or hung:\n' .. out:sub(-2000))
    local errors, loaded = 0, 0
    for i, f in ipairs(files) do
      local n = out:match('\nok ' .. i .. ' (%-?%d+)\n') or (i == 1 and out:match('^ok 1 (%-?%d+)\n'))
      if n then
        assert.are.equal('3', n, 'variant ' .. i .. ' read strings of the wrong shape')
        loaded = loaded + 1
      else
        local msg = out:match('\nerr ' .. i .. ' ([^\n]*)') or (i == 1 and out:match('^err 1 ([^\n]*)'))
        assert.truthy(msg, 'no result for variant ' .. i)
        assert.truthy(msg:find(f.name, 1, true), msg)
        errors = errors + 1
      end
      if f.model then
        assert.are.equal('1 4 0.0625', out:match('\nmodel ' .. i .. ' ([^\n]*)'), 'model load of variant ' .. i)
      end
    end
    -- most damage to the heap's headers and references is caught
    assert.is_true(errors > 50, errors .. ' errors, ' .. loaded .. ' loaded')
    helpers.rmdir(dir)
  end)
end)

describe('damaged HDF5 datasets', function()
  it('refuse a number type whose size was edited (no uninitialised memory as float64)', function()
    local e = helpers.err_of(T.load_hdf5, FIX .. 'float_size8.h5')
    assert.truthy(e:find("float_size8.h5': dataset 'x' has 8-byte numbers with 32 bits of precision", 1, true), e)
  end)

  it('name the filter that this libhdf5 lacks (h5py lzf)', function()
    local e = helpers.err_of(T.load_hdf5, FIX .. 'lzf.h5')
    assert.truthy(e:find("dataset 'x' is stored through HDF5 filter 32000 ('lzf'), which this libhdf5 does not have",
      1, true), e)
  end)

  it('refuse a string dataset where numbers are expected before reading it', function()
    local f = T.open_hdf5(FIX .. 'model_vlen.h5')
    local e = helpers.err_of(f.read, f, 'extensions/LogReport/_log', 'numbers')
    assert.truthy(e:find("dataset 'extensions/LogReport/_log' holds strings where numbers are expected", 1, true), e)
    assert.are.equal(0.0625, f:read('predictor/l2/W', 'numbers'):totable()[2][3])
    assert.truthy(helpers.err_of(f.read, f, 'predictor/l2/W', 'tensor'):find("expect must be nil or 'numbers'", 1, true))
    f:close()
  end)

  it('refuse an unfiltered chunk whose stored size is not a chunk (libhdf5 copies past its buffer)', function()
    -- found by fuzz_hdf5: chunks of 24 bytes indexed as 22; the other datasets still read
    local path = 'tests/fuzz/regressions/hdf5/unfiltered-chunk-short-size.h5'
    local f = T.open_hdf5(path)
    local e = helpers.err_of(f.read, f, 'predictor/l2/W')
    assert.truthy(e:find("dataset 'predictor/l2/W': an unfiltered chunk stores 22 bytes where a chunk has 24 " ..
      '(damaged file?)', 1, true), e)
    assert.are.same({ 3 }, f:read('predictor/l1/b').shape)
    f:close()
  end)

  it('fail keys() on an object that cannot be opened instead of leaving it out while exists() says true', function()
    local path = FIX .. 'unopenable.h5'
    local f = T.open_hdf5(path)
    assert.is_true(f:exists('b'))
    local e = helpers.err_of(f.keys, f)
    assert.truthy(e:find("'" .. path .. "': object 'b' cannot be opened (damaged file?)", 1, true), e)
    e = helpers.err_of(f.read, f, 'b')
    assert.truthy(e:find("dataset 'b' cannot be opened (damaged file?) (libhdf5: bad object header version number)",
      1, true), e)
    assert.are.same({ 1, 2, 3, 4 }, f:read('c'):totable())
    f:close()
    e = helpers.err_of(T.load_hdf5, path)
    assert.truthy(e:find("object 'b' cannot be opened", 1, true), e)
  end)
end)
