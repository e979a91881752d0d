-- link_hooks/spectral_normalization.lua: SpectralNormalization, a link hook
-- that divides a link's weight by its largest singular value before every
-- forward (Miyato et al., 2018; Chainer's chainer.link_hooks.SpectralNormalization).
--
--   local l = L.Linear(3, 5)
--   local sn = chainer.link_hooks.SpectralNormalization()   -- or (n_power_iteration, eps, use_gamma, ...)
--   l:add_hook(sn)
--   local y = l(x)            -- uses W / sigma(W); gradients reach W through sigma
--   sn.u                      -- the left singular vector estimate (also l.W_u, a persistent value)
--
-- The weight is seen as a matrix (output units, everything else); the
-- output axis is 0, or 1 for the Deconvolution links.  sigma is estimated
-- by power iteration from the vector u:  v = normalize(u W), u = normalize(W v),
-- sigma = u W v, with u and v constants in the graph.  Every forward runs
-- n_power_iteration steps from the stored u; the new u is stored back only
-- in training mode (chainer.config.train), as in Chainer.
-- Options: use_gamma (a parameter `gamma` on the link, initialised with
-- sigma(W), multiplies the normalized weight), factor (sigma is divided by
-- it), weight_name ('W'), name.
local args = require 'chainer._args'
local T = require 'chainer.tensor'
local F = require 'chainer.functions'
local config = require('chainer.config').config
local Parameter = require 'chainer.parameter'
local LinkHook = require('chainer.link_hook').LinkHook
local W_ = require 'chainer.link_hooks._weight'

local NAME = 'SpectralNormalization'
local SN = LinkHook:extend(NAME)
SN.name = NAME

local SIGNATURE = args.signature { 'n_power_iteration', 'eps', 'use_gamma', 'factor', 'weight_name', 'name' }

local function positive_integer(v) return type(v) == 'number' and v >= 1 and v == math.floor(v) end

function SN:init(...)
  local a = args.parse(NAME, SIGNATURE, select('#', ...), ...)
  local n = a.n_power_iteration
  if n == nil then n = 1 end
  if not positive_integer(n) then
    error(NAME .. ': n_power_iteration must be an integer >= 1 (got ' .. tostring(n) .. ')', 3)
  end
  local eps = W_.eps_option(NAME, a.eps, 1e-6)
  if a.factor ~= nil and (type(a.factor) ~= 'number' or a.factor <= 0) then
    error(NAME .. ': factor must be a positive number or nil (got ' .. tostring(a.factor) .. ')', 3)
  end
  local weight_name = W_.weight_name_option(NAME, a)
  rawset(self, 'n_power_iteration', n)
  rawset(self, 'eps', eps)
  rawset(self, 'use_gamma', a.use_gamma and true or false)
  rawset(self, 'factor', a.factor)
  rawset(self, 'weight_name', weight_name)
  rawset(self, 'vector_name', weight_name .. '_u')
  rawset(self, 'axis', 0)
  rawset(self, '_initialized', false)
  if a.name ~= nil then rawset(self, 'name', a.name) end
end

SN.scope = W_.refuse_scope(NAME)
SN.register = W_.refuse_scope(NAME)

-- hook.u reads and writes the link's vector (link[vector_name]); writing
-- copies the values in, so the persistent value and the hook stay one.
SN.__index = function(self, k)
  if k == 'u' then
    local link = rawget(self, 'link')
    return link and rawget(link, rawget(self, 'vector_name')) or nil
  end
  return getmetatable(self)[k]
end

SN.__newindex = function(self, k, v)
  if k ~= 'u' then rawset(self, k, v) return end
  local link = rawget(self, 'link')
  local cur = link and rawget(link, rawget(self, 'vector_name'))
  if cur == nil then
    error(NAME .. ': hook.u exists once the hook is added to a link with an initialised weight', 2)
  end
  local t = v
  if type(v) == 'table' and v._is_variable then t = v._data end
  if not T.is_tensor(t) then t = T.array(v, cur.dtype) end
  if t.ndim ~= 1 or t.shape[1] ~= cur.shape[1] then
    error(string.format('%s: hook.u must have shape (%d) (got a tensor of %d dimensions, first size %s)',
      NAME, cur.shape[1], t.ndim, tostring(t.shape[1])), 2)
  end
  cur:copy_(t:to_device(cur.device))
end

-- The weight as a (output units, rest) matrix; Variable in, Variable out.
local function as_matrix(self, W)
  if self.axis ~= 0 then
    local axes = { self.axis }
    for i = 0, W.ndim - 1 do if i ~= self.axis then axes[#axes + 1] = i end end
    W = F.transpose(W, axes)
  end
  if W.ndim == 2 then return W end
  return F.reshape(W, { W.shape[1], -1 })
end

local function l2normalize(v, eps)
  return v / (T.sqrt(T.sum(v * v)) + eps)
end

-- Power iteration on the matrix Wm (a tensor) from u: returns u, v.
local function power_iteration(Wm, u, n, eps)
  local v
  for _ = 1, n do
    v = l2normalize(T.dot(u, Wm), eps)
    u = l2normalize(T.dot(Wm, v), eps)
  end
  return u, v
end

-- The largest singular value of the matrix Wm, for gamma's initial value:
-- power iteration (in float64) until it settles.
local function largest_singular_value(Wm)
  local M = Wm:astype('float64')
  local u = T.ones({ M.shape[1] }, 'float64', M.device)
  local sigma = 0
  for _ = 1, 10000 do
    local v
    u, v = power_iteration(M, u, 1, 0)
    local s = T.dot(u, T.dot(M, v)):item()
    if math.abs(s - sigma) <= 1e-13 * math.abs(s) then return s end
    sigma = s
  end
  return sigma
end

-- Creates u (random normal, one entry per output unit) and gamma.
function SN:_prepare(link, x)
  local W = W_.weight_of(NAME, link, self.weight_name, 3)
  if not W_.is_initialized(W) then W_.initialize_from_input(NAME, link, x) end
  local size = W.shape[self.axis + 1]
  if size == 0 then
    error(string.format('%s: %s has no output units (shape[%d] == 0)', NAME, self.weight_name, self.axis), 3)
  end
  local data = W._data
  rawset(link, self.vector_name, T.random.normal(0, 1, { size }, data.dtype, data.device))
  link:register_persistent(self.vector_name)
  if self.use_gamma then
    local sigma = largest_singular_value(as_matrix(self, W)._data)
    link:_register_param('gamma', Parameter(T.array(sigma, data.dtype):to_device(data.device)))
  end
  rawset(self, '_initialized', true)
end

function SN:added(link)
  if link == nil then W_.refuse_scope(NAME)() end
  if rawget(self, 'link') ~= nil and rawget(self, 'link') ~= link then
    error(NAME .. ': this hook is already added to another link; make one hook per link', 3)
  end
  local W = W_.weight_of(NAME, link, self.weight_name, 3)
  rawset(self, 'axis', W_.output_axis(link))
  rawset(self, 'link', link)
  if W_.is_initialized(W) then self:_prepare(link) end
end

function SN:deleted(link)
  local name = self.vector_name
  rawset(link, name, nil)
  link._persistent[name] = nil
  if self.use_gamma and link._params.gamma then
    link._params.gamma = nil
    rawset(link, 'gamma', nil)
  end
  rawset(self, 'link', nil)
  rawset(self, '_initialized', false)
end

-- The normalized weight (a Variable); updates the stored u in training mode.
function SN:normalize_weight(link)
  local W = rawget(link, self.weight_name)
  local Wmat = as_matrix(self, W)
  local stored = rawget(link, self.vector_name)
  local u, v = power_iteration(Wmat._data, stored, self.n_power_iteration, self.eps)
  local sigma = F.sum(F.matmul(u:reshape(1, u.shape[1]), Wmat) * v:reshape(1, v.shape[1]))
  if self.factor ~= nil then sigma = sigma / self.factor end
  local Wbar
  if self.use_gamma then Wbar = link.gamma * W / sigma else Wbar = W / sigma end
  rawset(self, 'v', v)
  if config.train then stored:copy_(u) end
  return Wbar
end

function SN:forward_preprocess(cb)
  local link = cb.link
  if not self._initialized then self:_prepare(link, cb.args[1]) end
  local W = rawget(link, self.weight_name)
  rawset(self, 'original_weight', W)
  rawset(link, self.weight_name, self:normalize_weight(link))
end

-- The graph is built: put the Parameter back.
function SN:forward_postprocess(cb)
  local W = rawget(self, 'original_weight')
  if W ~= nil then
    rawset(cb.link, self.weight_name, W)
    rawset(self, 'original_weight', nil)
  end
end

return SN
