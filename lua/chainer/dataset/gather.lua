-- dataset/gather.lua: rows of several CPU tensors at once (one batch).
-- ch_gather_rows copies whole rows with memcpy on the calling thread: for
-- a minibatch that beats an OpenMP take, whose fork/join costs more than
-- the copy on a busy machine.  Tensors whose rows are not contiguous fall
-- back to take.
local T = require 'chainer.tensor'
local ffi, C, check = T.ffi, T.C, T.check

local M = {}

local MAX = 16
local srcs = ffi.new('ch_tensor*[?]', MAX)
local outs = ffi.new('ch_tensor*[?]', MAX)

-- True when every row (axis 0) of CPU tensor t is one contiguous run.
function M.rows_contiguous(t)
  local p = t.ptr
  if p.dev ~= -1 or p.nd < 1 then return false end
  local expect = 1
  for d = p.nd - 1, 1, -1 do
    if p.dim[d] ~= 1 and p.stride[d] ~= expect then return false end
    expect = expect * p.dim[d]
  end
  return true
end

-- gather(list, idx) -> Lua array of tensors: rows idx (int64, 0-based) of each.
function M.gather(list, idx)
  local n = #list
  local fast = n <= MAX
  for k = 1, n do
    if fast and not M.rows_contiguous(list[k]) then fast = false end
  end
  local out = {}
  if not fast then
    for k = 1, n do out[k] = list[k]:take(idx, 0) end
    return out
  end
  for k = 1, n do srcs[k - 1] = list[k].ptr end
  check(C.ch_gather_rows(srcs, n, idx.ptr, outs), 2)
  for k = 1, n do out[k] = T.wrap(outs[k - 1]) end
  return out
end

return M
