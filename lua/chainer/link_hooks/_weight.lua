-- link_hooks/_weight.lua: what the weight-rewriting link hooks share
-- (SpectralNormalization, WeightStandardization): finding the weight,
-- initialising a lazy one from the first input, and swapping the weight
-- for its normalized Variable during one forward; the options they share.
local class = require 'chainer.class'

local M = {}

-- The link's weight Parameter named `weight_name`, or an error naming the hook.
function M.weight_of(hook_name, link, weight_name, level)
  local W = rawget(link, weight_name)
  if type(W) ~= 'table' or not W._is_parameter then
    error(string.format("%s: the link %s has no weight parameter '%s'%s", hook_name,
      tostring(getmetatable(link).__name), weight_name,
      W == nil and '' or ' (it is a ' .. type(W) .. ')'), (level or 2) + 1)
  end
  return W
end

-- The eps option of a hook's constructor (default `default`, at least 0);
-- errors blame the caller of the constructor.
function M.eps_option(hook_name, eps, default)
  if eps == nil then eps = default end
  if type(eps) ~= 'number' or eps < 0 then
    error(hook_name .. ': eps must be a number >= 0 (got ' .. tostring(eps) .. ')', 4)
  end
  return eps
end

-- The weight_name ('W') and name options of a hook's parsed arguments a:
-- both strings; returns weight_name.
function M.weight_name_option(hook_name, a)
  local weight_name = a.weight_name or 'W'
  if type(weight_name) ~= 'string' then
    error(hook_name .. ': weight_name must be a string (got ' .. type(weight_name) .. ')', 4)
  end
  if a.name ~= nil and type(a.name) ~= 'string' then
    error(hook_name .. ': name must be a string (got ' .. type(a.name) .. ')', 4)
  end
  return weight_name
end

function M.is_initialized(W) return W._data ~= nil end

-- Initialises a lazy weight from the first input, as the link's own
-- forward would (in_size/in_channels = the input's axis 1).
function M.initialize_from_input(hook_name, link, x)
  if x == nil then
    error(hook_name .. ': the weight is uninitialised and the forward got no input to infer its shape from', 4)
  end
  if link._initialize_from then
    link:_initialize_from(x)
  elseif link._initialize_params then
    link:_initialize_params(x.shape[2])
  else
    error(string.format('%s: the weight of %s is uninitialised and the link cannot infer it from its input',
      hook_name, tostring(getmetatable(link).__name)), 4)
  end
end

-- Links whose weight has the output units on axis 1 (Chainer: the
-- Deconvolution links).
function M.output_axis(link)
  local D = require('chainer.links.connection.deconvolution_nd').DeconvolutionND
  if class.Object.isinstance(link, D) then return 1 end
  return 0
end

-- Chainer refuses `with hook:` for hooks that belong to one link.
function M.refuse_scope(hook_name)
  return function()
    error(hook_name .. ': this hook is not meant to be registered globally; add it to a link with link:add_hook(hook)', 2)
  end
end

return M
