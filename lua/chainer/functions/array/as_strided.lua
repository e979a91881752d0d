-- functions/array/as_strided.lua: F.as_strided(x, shape, strides,
-- storage_offset): Chainer's new view of x's memory buffer with the given
-- shape, strides and offset, both in elements (not bytes).  As in Chainer,
-- x's own view is ignored: the result indexes the whole storage x lives in
-- (for a freshly made tensor, its elements in C order), and
-- storage_offset defaults to x's own offset into that storage.
--
-- The forward result is a view (no copy).  The gradient follows Chainer
-- (after PyTorch): gy is scatter-added into a zero "storage" through the
-- output's geometry, so overlapping windows accumulate, and read back
-- through x's geometry.  When x itself overlaps (a broadcast view, say),
-- each storage element's gradient is split evenly among the positions of x
-- that alias it (Chainer's layout-agnostic rule).
--
-- Both directions are one linear map, StridedScatter(from, to): scatter
-- through geometry `from`, divide by x's alias counts, gather through `to`.
-- The transpose of StridedScatter(from, to) is StridedScatter(to, from),
-- so the gradient is differentiable to any order (Chainer stops at the
-- first).
local args = require 'chainer._args'
local T = require 'chainer.tensor'
local FunctionNode = require 'chainer.function_node'
local U = require 'chainer.functions.array._util'

local M = {}
local FN = 'as_strided'

---------------------------------------------------------------------------
-- geometries: {shape = {...}, strides = {...}, offset = n}, all in elements
---------------------------------------------------------------------------
local function numel(shape)
  local n = 1
  for i = 1, #shape do n = n * shape[i] end
  return n
end

-- Lowest and highest storage positions a non-empty geometry reaches.
local function reach(g)
  local lo, hi = g.offset, g.offset
  for i = 1, #g.shape do
    local span = (g.shape[i] - 1) * g.strides[i]
    if span < 0 then lo = lo + span else hi = hi + span end
  end
  return lo, hi
end

-- False only when no two positions of g can share a storage element
-- (axes sorted by |stride|: each must step past everything the smaller
-- ones reach).  True may be a false alarm; it only costs the scatter path.
local function may_overlap(g)
  local axes = {}
  for i = 1, #g.shape do
    if g.shape[i] > 1 then axes[#axes + 1] = { math.abs(g.strides[i]), g.shape[i] } end
  end
  table.sort(axes, function(a, b) return a[1] < b[1] end)
  local covered = 0
  for _, a in ipairs(axes) do
    if a[1] <= covered then return true end
    covered = covered + a[1] * (a[2] - 1)
  end
  return false
end

local function geometry_of(t)
  local p = t.ptr
  return { shape = t.shape, strides = t.strides, offset = tonumber(p.offset) }
end

---------------------------------------------------------------------------
-- the plan shared by a node and its gradients: both geometries laid over
-- one zero-based scratch storage covering what either reaches
---------------------------------------------------------------------------
local Plan = {}
Plan.__index = Plan

local function new_plan(inp, out, device)
  local lo, hi
  for _, g in ipairs({ inp, out }) do
    if numel(g.shape) > 0 then
      local a, b = reach(g)
      lo = lo and math.min(lo, a) or a
      hi = hi and math.max(hi, b) or b
    end
  end
  lo = lo or 0
  hi = hi or 0
  local p = setmetatable({ inp = inp, out = out, base = lo, size = hi - lo + 1, device = device }, Plan)
  inp.overlap = may_overlap(inp)
  out.overlap = may_overlap(out)
  return p
end

-- The view of a scratch storage (1-D, plan.size long) with geometry g.
function Plan:view(storage, g)
  return storage:as_strided(g.shape, g.strides, g.offset - self.base)
end

-- Flat int64 storage positions of g's elements, in C order (cached).
function Plan:positions(g)
  if not g.positions then
    local all = T.arange(0, self.size, 1, 'int64', self.device)
    g.positions = self:view(all, g):contiguous():reshape({ -1 })
  end
  return g.positions
end

-- How many positions of x alias each storage element, at least 1 (cached
-- per dtype); nil when x does not overlap, so nothing needs dividing.
function Plan:alias_counts(dtype)
  if not self.inp.overlap then return nil end
  self.counts = self.counts or {}
  local c = self.counts[dtype]
  if not c then
    local pos = self:positions(self.inp)
    c = T.zeros({ self.size }, dtype, self.device)
    c:scatter_add_(0, pos, T.ones({ pos.size }, dtype, self.device))
    c = T.maximum(c, 1)
    self.counts[dtype] = c
  end
  return c
end

---------------------------------------------------------------------------
-- StridedScatter(from, to): y = gather_to(scatter_from(x) / alias counts)
---------------------------------------------------------------------------
local StridedScatter = FunctionNode:extend('AsStridedGrad')
M.AsStridedGrad = StridedScatter

local function strided_scatter(plan, from, to, v)
  local f = setmetatable({}, StridedScatter)
  f.plan, f.from, f.to = plan, from, to
  return f:apply({ v })[1]
end

function StridedScatter:forward(inputs)
  local x = inputs[1]
  local plan, from, to = self.plan, self.from, self.to
  local storage = T.zeros({ plan.size }, x.dtype, plan.device)
  if numel(from.shape) > 0 then
    if from.overlap then
      storage:scatter_add_(0, plan:positions(from), x:reshape({ -1 }))
    else
      plan:view(storage, from):copy_(x)
    end
  end
  local counts = plan:alias_counts(x.dtype)
  if counts then storage = storage / counts end
  return { plan:view(storage, to):contiguous() }
end

function StridedScatter:backward(idx, gys)
  return { strided_scatter(self.plan, self.to, self.from, gys[1]) }
end

---------------------------------------------------------------------------
-- AsStrided: the forward view
---------------------------------------------------------------------------
local AsStrided = FunctionNode:extend('AsStrided')
M.AsStrided = AsStrided

function AsStrided:forward(inputs)
  local x = inputs[1]
  local out = self.out
  self.plan = new_plan(geometry_of(x), { shape = out.shape, strides = out.strides, offset = out.offset },
    x.ptr.dev)
  return { x:as_strided(out.shape, out.strides, out.offset) }
end

function AsStrided:backward(idx, gys)
  local plan = self.plan
  return { strided_scatter(plan, plan.out, plan.inp, gys[1]) }
end

---------------------------------------------------------------------------
-- F.as_strided
---------------------------------------------------------------------------
local function int_list(v, name, nonneg)
  if type(v) ~= 'table' or T.is_tensor(v) or getmetatable(v) ~= nil then
    error(string.format('%s: %s must be a Lua array of integers (got %s)', FN, name, type(v)), 3)
  end
  local r = {}
  for i = 1, #v do
    local n = v[i]
    if type(n) ~= 'number' or n ~= math.floor(n) or (nonneg and n < 0) then
      error(string.format('%s: %s[%d] must be a%s integer (got %s)', FN, name, i,
        nonneg and ' non-negative' or 'n', tostring(n)), 3)
    end
    r[i] = n
  end
  return r
end

local function tuple(t)
  if #t == 1 then return '(' .. t[1] .. ',)' end
  return '(' .. table.concat(t, ', ') .. ')'
end

local SIGNATURE = args.signature { 'shape', 'strides', 'storage_offset' }

-- F.as_strided(x, shape, strides, storage_offset): any of the three may
-- instead come by name in a trailing options table.
function M.as_strided(x, shape, strides, storage_offset)
  local d = args.array(FN, 'x', x)
  local o = args.parse(FN, SIGNATURE, 3, shape, strides, storage_offset)
  shape, strides, storage_offset = o.shape, o.strides, o.storage_offset
  shape = int_list(shape, 'shape', true)
  strides = int_list(strides, 'strides', false)
  if #strides ~= #shape then
    error(string.format('%s: strides %s has %d entries but shape %s has %d (one stride per axis)', FN,
      tuple(strides), #strides, tuple(shape), #shape), 2)
  end
  -- Python None (nil or false): x's own offset into its storage
  local offset = U.int(FN, storage_offset, 'storage_offset', tonumber(d.ptr.offset))
  if offset < 0 then
    error(string.format('%s: storage_offset must be non-negative (got %d)', FN, offset), 2)
  end
  local out = { shape = shape, strides = strides, offset = offset }
  -- the same bounds check as the view itself, reported with the arguments
  local ok, err = pcall(d.as_strided, d, shape, strides, offset)
  if not ok then
    local lo, hi = reach(out)
    local cap = tostring(err):match('storage of (%d+)')
    if cap then
      error(string.format('%s: shape %s with strides %s and storage_offset %d reaches storage elements '
        .. '%d..%d, but x\'s storage holds %s elements (0..%d)', FN, tuple(shape), tuple(strides), offset,
        lo, hi, cap, tonumber(cap) - 1), 2)
    end
    error(err, 2)
  end
  local f = setmetatable({}, AsStrided)
  f.out = out
  return f:apply({ x })[1]
end

return M
