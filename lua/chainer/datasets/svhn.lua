-- datasets/svhn.lua: get_svhn from the cropped-digits MATLAB files
-- (train_32x32.mat, test_32x32.mat; extra_32x32.mat with add_extra).
--
-- get_svhn{withlabel = true, scale = 1.0, dtype = 'float32', label_dtype = 'int32',
--          add_extra = false} -> train, test
-- Images (3, 32, 32) in [0, scale]; label 10 (the digit 0) becomes 0, as in
-- Chainer.  Files come from <root>/svhn/ (or a download); the arrays are
-- cached as pfnet/chainer/svhn/{train,test,extra}.npz.
-- The reader below understands what these files use of MATLAB's level-5
-- format: numeric matrices, stored plainly or zlib-compressed.
local T = require 'chainer.tensor'
local args = require 'chainer._args'
local dl = require 'chainer.dataset.download'
local files = require 'chainer.datasets.files'
local ffi = T.ffi
local libc = require 'chainer._libc'

local M = {}

local mi_types = {   -- MAT type code -> dtype
  [1] = 'int8', [2] = 'uint8', [3] = 'int16', [5] = 'int32', [9] = 'float64', [7] = 'float32', [12] = 'int64',
}
local mi_size = { [1] = 1, [2] = 1, [3] = 2, [4] = 2, [5] = 4, [6] = 4, [7] = 4, [9] = 8, [12] = 8, [13] = 8 }

local function u32(s, i)
  local a, b, c, d = s:byte(i, i + 3)
  return a + b * 256 + c * 65536 + d * 16777216
end

-- Inflates a zlib stream whose output size is unknown (grows the buffer).
local function inflate(data, fn)
  local lib = libc.zlib()
  if not lib then error(fn .. ': zlib is not available to read a compressed MAT file', 4) end
  local cap = #data * 8 + 1024
  while true do
    local buf = ffi.new('uint8_t[?]', cap)
    local len = ffi.new('unsigned long[1]', cap)
    local rc = lib.uncompress(buf, len, ffi.cast('const uint8_t*', data), #data)
    if rc == 0 then return ffi.string(buf, len[0]) end
    if rc ~= -5 then error(fn .. ': corrupt compressed data in the MAT file', 4) end   -- -5: buffer too small
    cap = cap * 4
  end
end

-- Parses one miMATRIX body: returns name, tensor (C order, dims reversed back).
local function parse_matrix(s, fn)
  local pos, fields = 1, {}
  while pos + 7 <= #s do
    local t, n = u32(s, pos), u32(s, pos + 4)
    local small = math.floor(t / 65536)
    local data
    if small ~= 0 then
      t, n = t % 65536, small
      data = s:sub(pos + 4, pos + 3 + n)
      pos = pos + 8
    else
      data = s:sub(pos + 8, pos + 7 + n)
      pos = pos + 8 + n + (8 - n % 8) % 8
    end
    fields[#fields + 1] = { t, data }
  end
  if #fields < 4 then error(fn .. ': unsupported MAT matrix layout', 3) end
  local dims = {}
  local dd = fields[2][2]
  for i = 1, #dd / 4 do dims[i] = u32(dd, 4 * i - 3) end
  local name = fields[3][2]
  local t, data = fields[4][1], fields[4][2]
  local dtype = mi_types[t]
  if not dtype then error(string.format('%s: unsupported MAT element type %d', fn, t), 3) end
  -- MATLAB is column-major: the data is C order with the dims reversed
  local rdims = {}
  for i = #dims, 1, -1 do rdims[#rdims + 1] = dims[i] end
  local n = #data / mi_size[t]
  local x = T.from_buffer(ffi.cast('const uint8_t*', data), { n }, dtype):reshape(rdims)
  return name, x
end

-- read_mat(path) -> table name -> tensor (numeric matrices only).
function M.read_mat(path, fn)
  fn = fn or 'read_mat'
  local f, err = io.open(path, 'rb')
  if not f then error(string.format("%s: cannot open '%s' (%s)", fn, path, tostring(err)), 2) end
  local s = f:read('*a')
  f:close()
  if #s < 128 or s:sub(127, 128) ~= 'IM' then
    error(string.format("%s: '%s' is not a little-endian MATLAB level-5 file", fn, path), 2)
  end
  local out, pos = {}, 129
  while pos + 7 <= #s do
    local t, n = u32(s, pos), u32(s, pos + 4)
    local body = s:sub(pos + 8, pos + 7 + n)
    pos = pos + 8 + n
    if t == 15 then   -- miCOMPRESSED: one element inside
      local inner = inflate(body, fn)
      t, n = u32(inner, 1), u32(inner, 5)
      body = inner:sub(9, 8 + n)
    else
      pos = pos + (8 - n % 8) % 8
    end
    if t == 14 then
      local name, x = parse_matrix(body, fn)
      out[name] = x
    end
  end
  return out
end

local URL = 'http://ufldl.stanford.edu/housenumbers/'

local function split(name, fn)
  local sub = 'pfnet/chainer/svhn'
  local p = files.find_converted(sub, name .. '.npz')
  if p then
    local zz = T.load_npz(p)
    if zz.x and zz.y then return zz.x, zz.y end
  end
  local file = name .. '_32x32.mat'
  local path = files.raw_file(fn, 'svhn', file, URL .. file)
  local mat = M.read_mat(path, fn)
  if not mat.X or not mat.y then error(string.format("%s: '%s' has no X and y matrices", fn, path), 3) end
  -- X is (32, 32, 3, N) in MATLAB order, so (N, 3, 32, 32) here, with rows
  -- and columns swapped back
  local x = mat.X:transpose(0, 1, 3, 2):contiguous()
  local y = mat.y:reshape(-1):astype('int32')
  y = y - y:eq(10):astype('int32') * 10
  dl.cache_or_load_file(files.converted_dir(sub) .. '/' .. name .. '.npz',
    function(tmp) T.savez_compressed(tmp, { x = x, y = y }) end, function() end)
  return x, y
end

-- Chainer's keyword arguments, by name only (get_svhn{add_extra = true}).
local OPTIONS = args.accept { 'withlabel', 'scale', 'dtype', 'label_dtype', 'add_extra' }

function M.get_svhn(opts)
  opts = args.options('get_svhn', opts, OPTIONS)
  local withlabel = opts.withlabel
  if withlabel == nil then withlabel = true end
  local scale, dtype = opts.scale or 1.0, opts.dtype or T.default_float
  local label_dtype = opts.label_dtype or 'int32'
  local function make(names)
    local xs, ys = {}, {}
    for i, nm in ipairs(names) do xs[i], ys[i] = split(nm, 'get_svhn') end
    local x = #xs == 1 and xs[1] or T.concatenate(xs, 0)
    local y = #ys == 1 and ys[1] or T.concatenate(ys, 0)
    local images = x:astype(dtype) * (scale / 255)
    if not withlabel then return images end
    return require('chainer.datasets.tuple_dataset')(images, y:astype(label_dtype))
  end
  local train = make(opts.add_extra and { 'train', 'extra' } or { 'train' })
  return train, make({ 'test' })
end

M.get_svhn = files.public('get_svhn', M.get_svhn)   -- raises at the user's call (datasets/files.lua)

return M
