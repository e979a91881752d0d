-- Shared helpers for the file-format specs.
local T = require 'chainer.tensor'
local ffi, C = T.ffi, T.C

local H = {}
local common = require 'helpers'
H.read_file, H.write_file, H.exists = common.read_file, common.write_file, common.exists

H.dtypes = { 'bool', 'int8', 'uint8', 'int16', 'int32', 'int64', 'float16', 'float32', 'float64' }

function H.tmp(suffix)
  local p = os.tmpname()
  os.remove(p)
  return p .. (suffix or '')
end


-- The raw bytes of a tensor in C order.
function H.bytes(t)
  local c = t:contiguous()
  return ffi.string(C.ch_tensor_ptr(c.ptr), c.nbytes)
end

-- A deterministic test tensor of any dtype and shape, with varied values.
function H.sample(dtype, shape)
  local n = 1
  for _, d in ipairs(shape) do n = n * d end
  local t = T.empty(shape, dtype)
  for i = 0, n - 1 do
    local v
    if dtype == 'bool' then v = (i % 3 == 0) and 1 or 0
    elseif dtype == 'uint8' then v = (i * 37) % 256
    elseif dtype == 'int8' then v = (i * 37) % 256 - 128
    elseif dtype:match('^int') then v = (i * 7919) % 20001 - 10000
    else v = (i - n / 2) * 0.375 end
    C.ch_set_flat(t.ptr, i, v)
  end
  return t
end

function H.same(a, b)
  return a.dtype == b.dtype and table.concat(a.shape, ',') == table.concat(b.shape, ',') and H.bytes(a) == H.bytes(b)
end

-- Little-endian integer bytes.
function H.le(v, n)
  local s = {}
  for i = 1, n do s[i] = string.char(v % 256); v = math.floor(v / 256) end
  return table.concat(s)
end

function H.be(v, n) return H.le(v, n):reverse() end

-- A .npy file from a header dict string and raw data (version 1 or 2).
function H.npy_bytes(dict, data, major)
  major = major or 1
  local pre = major == 1 and 10 or 12
  local total = pre + #dict + 1
  local pad = (64 - total % 64) % 64
  local hdr = dict .. string.rep(' ', pad) .. '\n'
  local len = major == 1 and H.le(#hdr, 2) or H.le(#hdr, 4)
  return '\147NUMPY' .. string.char(major, 0) .. len .. hdr .. data
end

-- A Python with NumPy, or nil (interop specs skip without one).
function H.python_numpy()
  for _, py in ipairs({ 'python3', '/usr/bin/python3' }) do
    if os.execute(py .. " -c 'import numpy' >/dev/null 2>&1") == 0 then return py end
  end
  return nil
end

return H
