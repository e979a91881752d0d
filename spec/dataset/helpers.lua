-- Shared helpers for the dataset, datasets and iterators specs.
local T = require 'chainer.tensor'
local libc = require 'chainer._libc'

local H = {}
local common = require 'helpers'
H.tmpdir, H.rmdir, H.write, H.exists = common.tmpdir, common.rmdir, common.write_file, common.exists

function H.errors_with(f, ...)
  local ok, err = pcall(f)
  assert(not ok, 'expected an error')
  for _, s in ipairs({ ... }) do
    assert(tostring(err):find(s, 1, true), 'error message "' .. tostring(err) .. '" lacks "' .. s .. '"')
  end
  return tostring(err)
end

H.setenv = libc.setenv

-- Runs fn with environment variables set (restored afterwards, even on error).
function H.with_env(vars, fn)
  local old = {}
  for k, v in pairs(vars) do old[k] = os.getenv(k); H.setenv(k, v ~= false and v or nil) end
  local ok, err = pcall(fn)
  for k in pairs(vars) do H.setenv(k, old[k]) end
  if not ok then error(err, 0) end
end


-- Big-endian uint32.
function H.be32(v)
  return string.char(math.floor(v / 16777216) % 256, math.floor(v / 65536) % 256, math.floor(v / 256) % 256, v % 256)
end

-- An IDX file (uint8 elements) with the given dims and byte function.
function H.idx_bytes(dims, byte_at)
  local parts = { '\0\0\8' .. string.char(#dims) }
  local n = 1
  for _, d in ipairs(dims) do parts[#parts + 1] = H.be32(d); n = n * d end
  local body = {}
  for i = 0, n - 1 do body[i + 1] = string.char(byte_at(i)) end
  parts[#parts + 1] = table.concat(body)
  return table.concat(parts)
end

-- A serializer / deserializer pair over a Lua table (Chainer's
-- DictionarySerializer idea): keys 'a/b/c'; tensors are copied.
function H.dict_serializer(store, prefix)
  prefix = prefix or ''
  local s = { is_serializer = true }
  function s.child(self, name) return H.dict_serializer(store, prefix .. name .. '/') end
  return setmetatable(s, { __call = function(self, key, value)
    if T.is_tensor(value) then store[prefix .. key] = value:copy() else store[prefix .. key] = value end
    return value
  end })
end

function H.dict_deserializer(store, prefix)
  prefix = prefix or ''
  local s = { is_deserializer = true }
  function s.child(self, name) return H.dict_deserializer(store, prefix .. name .. '/') end
  -- keys that may be absent (chainer.serializer's optional mark)
  function s.optional(self, key, value)
    if store[prefix .. key] == nil then return value, false end
    return self(key, value), true
  end
  function s.optional_child(self, name) return self:child(name) end
  return setmetatable(s, { __call = function(self, key, value)
    local v = store[prefix .. key]
    if v == nil then error("KeyError: '" .. prefix .. key .. "' is not in the snapshot", 2) end
    if T.is_tensor(value) then value:copy_(v) return value end
    if T.is_tensor(v) then return v:copy() end
    return v
  end })
end

-- Runs two iterators side by side, each made after seeding the generator
-- with 21, for up to `steps` batches: they end at the same step,
-- same_batch(ba, bb, k) checks each pair of batches, and after each batch
-- the iterators agree on their epoch state.  Returns both iterators.
local EPOCH_STATE = { 'epoch', 'epoch_detail', 'previous_epoch_detail', 'is_new_epoch', 'iteration', 'current_position' }
function H.same_run(make_a, make_b, steps, same_batch)
  T.random.seed(21)
  local a = make_a()
  T.random.seed(21)
  local b = make_b()
  for k = 1, steps do
    local ba, bb = a:next(), b:next()
    if ba == nil or bb == nil then
      assert(ba == bb, 'both end at step ' .. k)
      break
    end
    same_batch(ba, bb, k)
    for _, f in ipairs(EPOCH_STATE) do
      assert(a[f] == b[f], string.format('%s after batch %d: %s vs %s', f, k, tostring(a[f]), tostring(b[f])))
    end
  end
  return a, b
end

-- Rows of a 1-D int tensor or the label field of a batch as a Lua array.
function H.labels(batch)
  local out = {}
  for i, ex in ipairs(batch) do
    local v = type(ex) == 'table' and ex[2] or ex
    out[i] = T.is_tensor(v) and v:item() or v
  end
  return out
end

return H
