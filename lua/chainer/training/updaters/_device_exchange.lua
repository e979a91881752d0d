-- ParallelUpdater's exchange between model copies on distinct GPUs: the
-- copies' gradients summed into the main model's, and the copies refreshed
-- from the main model after the update.
--
-- Two ways, chosen once per updater:
--   * NCCL (chainer.cuda.nccl), when its library loads: one communicator
--     per device of this process (ncclCommInitAll; the main model's device
--     is rank 0).  The sum is one NCCL group of reduces, one per parameter,
--     into a fresh buffer on the main device (a gradient may be shared with
--     another variable, so none is written in place); the refresh is one
--     group of broadcasts from the main model into the copies' arrays.
--     Both are queued on the devices and return without waiting.
--   * copies otherwise: Variable.addgrad / copydata, which move tensors
--     between devices through the backend (peer copies, staged).
-- A parameter NCCL cannot take (a strided gradient, shapes or dtypes that
-- differ between copies) goes the second way, so the result is the same.
--
-- Everything but the NCCL calls is plain Lua: spec/training/
-- parallel_updater_spec.lua runs it on the CPU with a stand-in communicator.
local T = require 'chainer.tensor'

local M = {}

-- gpu_devices(devices, names): the device ids in `names` order when every
-- model has its own CUDA device (what lets the copies run at once), else nil.
function M.gpu_devices(devices, names)
  if #names < 2 then return nil end
  local list, seen = {}, {}
  for i, name in ipairs(names) do
    local d = devices[name]
    if type(d) == 'string' then d = T.device_id(d) end
    if type(d) ~= 'number' or d < 0 or seen[d] then return nil end
    seen[d] = true
    list[i] = d
  end
  return list
end

-- The order of the ranks: the main model first (rank 0, the root), then the
-- others in `names` order.
local function rank_order(names)
  local order = { 'main' }
  for _, name in ipairs(names) do
    if name ~= 'main' then order[#order + 1] = name end
  end
  return order
end
M.rank_order = rank_order

local function named(model)
  local list = {}
  for path, p in model:namedparams() do list[#list + 1] = { path, p } end
  return list
end

-- plan(models, names): the parameters of every model aligned by path, in
-- rank order: { order = {names}, params = { {path, {param per rank}} } }.
-- Models whose parameters differ are an error naming both.
function M.plan(models, names)
  local order = rank_order(names)
  local main = named(models.main)
  local params = {}
  for i, e in ipairs(main) do params[i] = { path = e[1], ranks = { e[2] } } end
  for r = 2, #order do
    local other = named(models[order[r]])
    local same = #other == #main
    for i = 1, math.min(#other, #main) do
      if other[i][1] ~= main[i][1] then same = false end
      if same then params[i].ranks[r] = other[i][2] end
    end
    if not same then
      local function paths(l)
        local out = {}
        for i, e in ipairs(l) do out[i] = e[1] end
        return table.concat(out, ', ')
      end
      error(string.format("ParallelUpdater: the copy '%s' has the parameters {%s} but the main model {%s}",
        order[r], paths(other), paths(main)), 0)
    end
  end
  return { order = order, params = params }
end

local NCCL_SUMS = { int8 = true, uint8 = true, int32 = true, int64 = true, float16 = true, float32 = true,
  float64 = true }

-- nccl_fits(tensors): the tensors (nil for none) can take part in one NCCL
-- collective: one dtype NCCL sums, one shape, each contiguous (the devices
-- are NCCL's to check).
local function fits(tensors, n, sum)
  local ref
  for r = 1, n do
    local t = tensors[r]
    if t ~= nil then
      if not t.is_contiguous then return false end
      if sum and not NCCL_SUMS[t.dtype] then return false end
      if ref == nil then
        ref = t
      elseif t.dtype ~= ref.dtype or t.size ~= ref.size or #t.shape ~= #ref.shape then
        return false
      else
        for k = 1, #t.shape do
          if t.shape[k] ~= ref.shape[k] then return false end
        end
      end
    end
  end
  return ref ~= nil
end
M.fits = fits

-- sum_grads(plan, comms, group): every main gradient := the sum of the
-- ranks' gradients.  comms: the communicators in rank order (nil: the
-- copies way for all); group(fn) runs fn's calls as one NCCL group.
function M.sum_grads(plan, comms, group)
  local n = #plan.order
  local by_nccl, by_copies = {}, {}
  for _, e in ipairs(plan.params) do
    local grads, any = {}, false
    for r = 1, n do
      grads[r] = e.ranks[r].grad
      if grads[r] ~= nil then any = true end
    end
    if any then
      if comms and fits(grads, n, true) then by_nccl[#by_nccl + 1] = { e = e, grads = grads }
      else by_copies[#by_copies + 1] = e end
    end
  end
  if #by_nccl > 0 then
    group(function()
      for _, job in ipairs(by_nccl) do
        local grads, ref = job.grads, nil
        for r = 1, n do ref = ref or grads[r] end
        -- every rank takes part: a missing gradient counts as zeros there
        for r = 1, n do
          if grads[r] == nil then grads[r] = T.zeros(ref.shape, ref.dtype, job.e.ranks[r].array.device) end
        end
        job.sum = T.empty(ref.shape, ref.dtype, grads[1].device)
        for r = 1, n do comms[r]:reduce(grads[r], r == 1 and job.sum or nil, 'sum', 0) end
      end
    end)
    for _, job in ipairs(by_nccl) do job.e.ranks[1].grad = job.sum end
  end
  for _, e in ipairs(by_copies) do
    for r = 2, n do e.ranks[1]:addgrad(e.ranks[r]) end
  end
end

-- The persistent values of every link of `model`: {path, link, name}.
local function persistents(model)
  local out = {}
  for path, l in model:namedlinks() do
    for _, name in ipairs(l:_persistent_names()) do out[#out + 1] = { path .. '/' .. name, l, name } end
  end
  return out
end

-- A persistent value of the main model into a copy's link, as
-- Link.copyparams does it.
local function copy_persistent(src, link, name)
  local dst = rawget(link, name)
  if T.is_tensor(dst) and T.is_tensor(src) then
    dst:copy_(src.ptr.dev ~= dst.ptr.dev and src:to_device(dst.ptr.dev) or src)
  elseif T.is_tensor(src) then
    rawset(link, name, src:copy())
  else
    rawset(link, name, src)
  end
end

-- refresh(plan, models, comms, group): the copies take the main model's
-- parameters and persistent values (ParallelUpdater's copyparams).
function M.refresh(plan, models, comms, group)
  local n, order = #plan.order, plan.order
  local jobs = {}
  -- the tensors of one value on every rank go into one broadcast when NCCL
  -- can take them all, else `fallback` copies them
  local function exchange(tensors, fallback)
    local all = true
    for r = 1, n do all = all and T.is_tensor(tensors[r]) end
    if comms and all and fits(tensors, n, false) then jobs[#jobs + 1] = tensors else fallback() end
  end
  for _, e in ipairs(plan.params) do
    local arrays = {}
    for r = 1, n do arrays[r] = e.ranks[r].array end
    if arrays[1] ~= nil then
      exchange(arrays, function()
        for r = 2, n do e.ranks[r]:copydata(e.ranks[1]) end
      end)
    end
  end
  -- persistent values (running statistics, counters)
  local ranks = {}
  for r = 1, n do ranks[r] = persistents(models[order[r]]) end
  for i, e in ipairs(ranks[1]) do
    local values = {}
    for r = 1, n do
      local o = ranks[r][i]
      if o == nil or o[1] ~= e[1] then
        error(string.format("ParallelUpdater: the copy '%s' has no persistent value %s", order[r], e[1]), 0)
      end
      values[r] = rawget(o[2], o[3])
    end
    exchange(values, function()
      for r = 2, n do copy_persistent(values[1], ranks[r][i][2], ranks[r][i][3]) end
    end)
  end
  if #jobs > 0 then
    group(function()
      for _, tensors in ipairs(jobs) do
        for r = 1, n do comms[r]:bcast(r == 1 and tensors[1] or nil, tensors[r], 0) end
      end
    end)
  end
end

return M
