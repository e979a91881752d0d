-- dataset/tabular/_columns.lua: the column values TabularDataset's
-- get_examples passes around.  A column is either a tensor (one row per
-- example along axis 0) or a plain Lua array of values (1-based, as every
-- Lua sequence).  Row positions given to these helpers are 0-based.
local T = require 'chainer.tensor'
local args = require 'chainer._args'

local is_tensor = T.is_tensor

local M = {}

function M.is_column(v)
  return is_tensor(v) or (type(v) == 'table' and getmetatable(v) == nil)
end

function M.len(col)
  if is_tensor(col) then
    if col.ptr.nd == 0 then return 1 end
    return tonumber(col.ptr.dim[0])
  end
  return #col
end

-- The value of row k (0-based): a view of a tensor column, the element of a list.
function M.row(col, k)
  if is_tensor(col) then return col:select(k) end
  return col[k + 1]
end

-- An int64 tensor of the 0-based positions in Lua array `rows`.
function M.positions_tensor(rows)
  if #rows == 0 then return T.empty({ 0 }, 'int64') end
  return T.ints(rows)
end

-- Rows `rows` (a Lua array of 0-based positions; nil: all) of a column.
function M.take(col, rows)
  if rows == nil then return col end
  if is_tensor(col) then return col:take(M.positions_tensor(rows), 0) end
  local out = {}
  for k = 1, #rows do out[k] = col[rows[k] + 1] end
  return out
end

-- Columns stacked along rows: one tensor when every part is a tensor,
-- otherwise a Lua array of the rows' values.
function M.concat(parts)
  local all_tensors = #parts > 0
  for k = 1, #parts do
    if not is_tensor(parts[k]) then all_tensors = false break end
  end
  if all_tensors then
    if #parts == 1 then return parts[1] end
    return T.concatenate(parts, 0)
  end
  local out = {}
  for k = 1, #parts do
    local part = parts[k]
    for r = 0, M.len(part) - 1 do out[#out + 1] = M.row(part, r) end
  end
  return out
end

-- Checks what a get_examples implementation returned: a Lua array of
-- `n` columns of `rows` rows each.
function M.check(ds, columns, n, rows)
  local name = tostring(getmetatable(ds).__name)
  if type(columns) ~= 'table' or getmetatable(columns) ~= nil then
    args.fail(string.format('%s:get_examples must return a Lua array of columns (got %s)', name,
      is_tensor(columns) and 'a tensor' or type(columns)), 3)
  end
  if #columns ~= n then
    args.fail(string.format('%s:get_examples returned %d columns for %d requested keys', name, #columns, n), 3)
  end
  for j = 1, n do
    local col = columns[j]
    if not M.is_column(col) then
      args.fail(string.format('%s:get_examples: column %d is a %s (expected a tensor or a Lua array)', name, j,
        type(col)), 3)
    end
    if rows ~= nil and M.len(col) ~= rows then
      args.fail(string.format('%s:get_examples: column %d has %d rows but %d were requested', name, j,
        M.len(col), rows), 3)
    end
  end
  return columns
end

return M
