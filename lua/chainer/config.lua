-- config.lua: chainer.config, Chainer's global configuration, and the
-- scoped helpers (using_config, no_backprop_mode, force_backprop_mode).
--
-- Chainer keeps configuration per thread; a LuaJIT state is single-threaded,
-- so one table serves.  Plain keys are ordinary fields (the autograd reads
-- `config.enable_backprop` on every operation, so it must be a field read).
-- A few keys are validated or mirrored and live behind __index/__newindex:
--   dtype      'float16' | 'float32' | 'float64' | 'mixed16'; mirrored in
--              chainer.tensor.default_float (mixed16 creates float16 arrays)
--   use_cudnn  'always' | 'auto' | 'never'
--   cudnn_deterministic, use_cudnn_tensor_core, autotune: mirrored into the
--              C runtime (ch_set_cudnn_config), where the GPU convolutions
--              choose their cuDNN algorithms by them
local T = require 'chainer.tensor'

local M = {}

local defaults = {
  train = true,
  enable_backprop = true,
  type_check = true,
  debug = false,
  keep_graph_on_report = false,
  lazy_grad_sum = false,
  warn_nondeterministic = false,
}

local special = {}     -- values of the validated keys
special.use_cudnn = 'auto'
special.cudnn_deterministic = false
special.use_cudnn_tensor_core = 'auto'
special.autotune = false

local float_dtypes = { float16 = true, float32 = true, float64 = true }

-- Chainer's mixed16: float16 activations (the default float dtype is
-- float16), while what asks get_dtype(nil, 'float32') -- the normalization
-- links' parameters and statistics -- gets float32.
local MIXED16 = 'mixed16'
M.mixed16 = MIXED16
special.mixed16 = false

local setters = {}
function setters.dtype(v)
  if v == MIXED16 then
    special.mixed16 = true
    T.default_float = 'float16'
    return
  end
  local name = type(v) == 'string' and (T.dtype_codes[v] and T.dtype_names[T.dtype_codes[v]]) or nil
  if not name or not float_dtypes[name] then
    error(string.format("config.dtype: expected 'float16', 'float32', 'float64' or 'mixed16' (got %s)",
      tostring(v)), 3)
  end
  special.mixed16 = false
  T.default_float = name
end
function setters.use_cudnn(v)
  if v ~= 'always' and v ~= 'auto' and v ~= 'never' then
    error(string.format("config.use_cudnn: expected 'always', 'auto' or 'never' (got %s)", tostring(v)), 3)
  end
  special.use_cudnn = v
end

-- The C runtime's copy of the cuDNN settings (an unknown tensor-core
-- setting counts as 'auto' there; should_use_cudnn_tensor_core rejects it).
local tensor_core_codes = { never = 0, auto = 1, always = 2 }
local function mirror_cudnn()
  T.C.ch_set_cudnn_config(special.cudnn_deterministic and 1 or 0,
    tensor_core_codes[special.use_cudnn_tensor_core] or 1, special.autotune and 1 or 0)
end
for _, key in ipairs { 'cudnn_deterministic', 'use_cudnn_tensor_core', 'autotune' } do
  setters[key] = function(v)
    special[key] = v
    mirror_cudnn()
  end
end

local getters = {}
function getters.dtype()
  if special.mixed16 then return MIXED16 end
  return T.default_float
end
function getters.use_cudnn() return special.use_cudnn end
function getters.cudnn_deterministic() return special.cudnn_deterministic end
function getters.use_cudnn_tensor_core() return special.use_cudnn_tensor_core end
function getters.autotune() return special.autotune end

local config = {}
for k, v in pairs(defaults) do config[k] = v end

setmetatable(config, {
  __index = function(_, k)
    local g = getters[k]
    if g then return g() end
    return nil
  end,
  __newindex = function(t, k, v)
    local s = setters[k]
    if s then s(v) return end
    rawset(t, k, v)
  end,
})

-- Prints every entry (chainer.config.show()).
local function show(file)
  file = file or io.stdout
  local keys = {}
  for k in pairs(config) do keys[#keys + 1] = k end
  for k in pairs(getters) do keys[#keys + 1] = k end
  table.sort(keys)
  for _, k in ipairs(keys) do
    file:write(string.format('%-24s %s\n', k, tostring(config[k])))
  end
end
M.show = show

---------------------------------------------------------------------------
-- environment
---------------------------------------------------------------------------
local function env_flag(name)
  local v = os.getenv(name)
  if v == nil or v == '' then return nil end
  v = v:lower()
  if v == '0' or v == 'false' or v == 'off' or v == 'no' then return false end
  return true
end

do
  local tc = env_flag('CHAINER_TYPE_CHECK')
  if tc ~= nil then config.type_check = tc end
  local dbg = env_flag('CHAINER_DEBUG')
  if dbg ~= nil then config.debug = dbg end
  local dt = os.getenv('CHAINER_DTYPE')
  if dt and dt ~= '' then config.dtype = dt end
  local cudnn = os.getenv('CHAINER_CUDNN')
  if cudnn == '0' then special.use_cudnn = 'never' end
  local seed = tonumber(os.getenv('CHAINER_SEED') or '')
  if seed then
    -- seed every device's generator the runtime knows about (CPU = -1)
    pcall(function() T.C.ch_rng_seed(-1, seed) end)
  end
  M.seed = seed
end

---------------------------------------------------------------------------
-- scoped configuration
---------------------------------------------------------------------------
local function finish(name, old, ok, ...)
  config[name] = old
  if not ok then error((...), 0) end
  return ...
end

-- Sets config[name] = value while fn runs, restoring it afterwards even
-- when fn raises; returns what fn returns.
function M.using_config(name, value, fn)
  if type(name) ~= 'string' then
    error('using_config: the name must be a string (got ' .. type(name) .. ')', 2)
  end
  if type(fn) ~= 'function' then
    error("using_config: pass the scope as a function: chainer.using_config('" .. name ..
      "', value, function() ... end)", 2)
  end
  local old = config[name]
  config[name] = value
  return finish(name, old, pcall(fn))
end

-- DebugMode(debug, fn): runs fn with config.debug = debug (Chainer's
-- deprecated context manager, the same as using_config('debug', debug, fn)).
function M.DebugMode(debug, fn)
  if type(debug) ~= 'boolean' then
    error('DebugMode: debug must be true or false (got ' .. type(debug) .. ')', 2)
  end
  if type(fn) ~= 'function' then
    error('DebugMode: pass the scope as a function: chainer.DebugMode(true, function() ... end)', 2)
  end
  return M.using_config('debug', debug, fn)
end

-- name(fn): runs fn with config.enable_backprop = enable (restored after).
local function backprop_mode(name, enable)
  return function(fn)
    if type(fn) ~= 'function' then
      error(string.format('%s: pass the scope as a function: chainer.%s(function() ... end)', name, name), 2)
    end
    local old = config.enable_backprop
    config.enable_backprop = enable
    return finish('enable_backprop', old, pcall(fn))
  end
end
M.no_backprop_mode = backprop_mode('no_backprop_mode', false)
M.force_backprop_mode = backprop_mode('force_backprop_mode', true)

function M.is_debug() return config.debug == true end
function M.set_debug(v) config.debug = v and true or false end
-- get_dtype(dtype, map_mixed16): dtype normalized ('f' -> 'float32'), or
-- chainer.config.dtype when nil; mixed16 becomes map_mixed16 when given,
-- else float16 (Chainer's chainer.get_dtype).
local GET_DTYPE_SIGNATURE
function M.get_dtype(...)
  GET_DTYPE_SIGNATURE = GET_DTYPE_SIGNATURE or require('chainer._args').signature { 'dtype', 'map_mixed16' }
  local o = require('chainer._args').parse('get_dtype', GET_DTYPE_SIGNATURE, select('#', ...), ...)
  local dtype = o.dtype
  if dtype == nil then dtype = config.dtype end
  if dtype == MIXED16 then
    if o.map_mixed16 == nil then return 'float16' end
    dtype = o.map_mixed16
  end
  local code = type(dtype) == 'string' and T.dtype_codes[dtype]
  if not code then
    error(string.format("get_dtype: expected a dtype name such as 'float32' or 'mixed16' (got %s)", tostring(dtype)),
      2)
  end
  return T.dtype_names[code]
end

M.config = config
M.global_config = config
return M
