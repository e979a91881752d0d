-- chainermn/multi_node_optimizer.lua: create_multi_node_optimizer(optimizer, comm).
--
-- Wraps an optimizer for data-parallel training, as ChainerMN does: an
-- update call whose parameter set differs from the previous call's (the
-- first call, or after lazy parameters appeared) broadcasts rank 0's
-- parameters and does not update; every other call replaces each gradient by
-- its mean over the ranks, then runs the wrapped optimizer.  Everything else
-- (setup's target, t, hyperparameters, hooks, serialize) is the wrapped
-- optimizer's.
--
-- With double_buffering, as ChainerMN's: each update starts the averaging of
-- its gradients (MPI_Iallreduce) and updates with the previous update's
-- averaged gradients, so communication overlaps the next forward and
-- backward; the first update after a broadcast only starts the averaging.
-- Update k therefore applies the mean gradient of update k - 1.
local args = require 'chainer._args'
local DoubleBuffer = require 'chainermn.double_buffer'

local MultiNodeOptimizer = {}

-- The parameter set as one string: names and whether each is initialised.
local function param_set(target)
  local parts = {}
  for name, p in target:namedparams{ include_uninit = true } do
    parts[#parts + 1] = name .. (p.array ~= nil and '+' or '-')
  end
  return table.concat(parts, ' ')
end

local methods = {}

-- update(lossfun, ...) / update(): as the wrapped optimizer's update, with
-- the broadcast or the gradient averaging in between.
function methods.update(self, lossfun, ...)
  local opt = rawget(self, 'actual_optimizer')
  local target = opt.target
  if target == nil then error('MultiNodeOptimizer.update: call setup(link) first', 2) end
  if lossfun ~= nil then
    if type(lossfun) ~= 'function' and not (getmetatable(lossfun) or {}).__call then
      error('MultiNodeOptimizer.update: lossfun must be callable (got ' .. type(lossfun) .. ')', 2)
    end
    local loss = lossfun(...)
    if type(loss) ~= 'table' or not loss._is_variable then
      error('MultiNodeOptimizer.update: lossfun must return a Variable (got ' .. type(loss) .. ')', 2)
    end
    target:cleargrads()
    loss:backward()
  end
  local comm = rawget(self, 'communicator')
  local now = param_set(target)
  local double_buffer = rawget(self, '_double_buffer')
  if now ~= rawget(self, '_param_set') then
    rawset(self, '_param_set', now)
    if double_buffer then
      double_buffer:discard()   -- averaged for the parameters that the broadcast replaces
      rawset(self, '_needs_update', false)
    end
    comm:bcast_data(target)
  elseif double_buffer then
    double_buffer:exchange(target)
    if rawget(self, '_needs_update') then opt:update() else rawset(self, '_needs_update', true) end
  else
    comm:multi_node_mean_grad(target, rawget(self, 'zero_fill'))
    opt:update()
  end
end

-- wait(): with double_buffering, completes the averaging in flight (its
-- result is still applied by the next update); otherwise nothing.
function methods.wait(self)
  local double_buffer = rawget(self, '_double_buffer')
  if double_buffer then double_buffer:wait() end
end

function methods.setup(self, link)
  rawget(self, 'actual_optimizer'):setup(link)
  rawset(self, '_param_set', nil)
  return self
end

local mt = {
  __index = function(self, k)
    local m = methods[k]
    if m then return m end
    local v = rawget(self, 'actual_optimizer')[k]
    -- the wrapped optimizer's methods, called on the wrapped optimizer
    if type(v) == 'function' then
      return function(first, ...)
        if first == self then first = rawget(self, 'actual_optimizer') end
        return v(first, ...)
      end
    end
    return v
  end,
  __newindex = function(self, k, v)
    -- ChainerMN's needs_broadcast = false: the ranks already hold the same
    -- parameters (a checkpoint every rank loaded), so the next update
    -- averages gradients instead of broadcasting
    if k == 'needs_broadcast' then
      local target = rawget(self, 'actual_optimizer').target
      rawset(self, '_param_set', (not v and target) and param_set(target) or nil)
      return
    end
    rawget(self, 'actual_optimizer')[k] = v
  end,
  __tostring = function(self)
    return 'MultiNodeOptimizer(' .. tostring(rawget(self, 'actual_optimizer')) .. ')'
  end,
}

local ACCEPTED = args.accept{ 'double_buffering', 'zero_fill' }

-- create_multi_node_optimizer(optimizer, comm, {double_buffering = false, zero_fill = true})
function MultiNodeOptimizer.create(optimizer, comm, opts)
  local fn = 'create_multi_node_optimizer'
  opts = args.options(fn, opts, ACCEPTED)
  if type(optimizer) ~= 'table' or type(optimizer.update) ~= 'function' or type(optimizer.setup) ~= 'function' then
    error(fn .. ': the first argument must be a chainer optimizer (got ' .. type(optimizer) .. ')', 2)
  end
  if type(comm) ~= 'table' or type(comm.multi_node_mean_grad) ~= 'function' then
    error(fn .. ': the second argument must be a chainermn communicator (got ' .. type(comm) .. ')', 2)
  end
  for _, name in ipairs({ 'double_buffering', 'zero_fill' }) do
    if opts[name] ~= nil and type(opts[name]) ~= 'boolean' then
      error(string.format('%s: %s must be a boolean (got %s)', fn, name, type(opts[name])), 2)
    end
  end
  local zero_fill = opts.zero_fill
  if zero_fill == nil then zero_fill = true end
  local self = { actual_optimizer = optimizer, communicator = comm, zero_fill = zero_fill }
  if opts.double_buffering then
    -- ChainerMN refuses communicators that cannot overlap (all but
    -- pure_nccl); every communicator here can, with MPI_Iallreduce
    if type(comm._comm) ~= 'cdata' then
      error(fn .. ': This communicator does not support double buffering.', 2)
    end
    self._double_buffer = DoubleBuffer.new(comm, zero_fill)
    self._needs_update = false
  end
  return setmetatable(self, mt)
end

return MultiNodeOptimizer
