-- tensor/random.lua: random tensors on the runtime's Philox4x32-10 streams.
--
-- Every device has a (seed, offset) state; a draw of n elements uses the
-- counters offset .. offset+n-1, so results depend only on the seed and the
-- sequence of draws, never on the thread count.  See docs/tensor-random.md.
local M = require 'chainer.tensor.core'
local ffi, C, check = M.ffi, M.C, M.check
local wrap, box, shape_arg, dtype_code, device_id = M.wrap, M.box, M.shape_arg, M.dtype_code, M.device_id
local methods = M.methods

local R = {}
M.random = R

local MAX_DEVICES = 64   -- CUDA devices 0..63 have a state besides the CPU

local function check_int(v, fn, arg, min)
  if type(v) == 'number' then
    if v ~= math.floor(v) or v ~= v then
      error(string.format('%s: %s must be an integer (got %s)', fn, arg, tostring(v)), 3)
    end
    if min and v < min then
      error(string.format('%s: %s must be >= %d (got %d)', fn, arg, min, v), 3)
    end
    return v
  end
  if ffi.istype('int64_t', v) or ffi.istype('uint64_t', v) then return v end
  error(string.format('%s: %s must be an integer (got %s)', fn, arg, type(v)), 3)
end

local function check_num(v, fn, arg)
  if type(v) ~= 'number' then
    error(string.format('%s: %s must be a number (got %s)', fn, arg, type(v)), 3)
  end
  return v
end

-- 64-bit counters as Lua numbers while they are exact, uint64 cdata beyond.
local function u64(v)
  if v < 9007199254740992ULL then return tonumber(v) end
  return v
end

-- seed(n, [device]): seeds one device, or the CPU and every device when
-- device is nil; the offset restarts at 0.
function R.seed(n, device)
  n = check_int(n, 'seed', 'n', 0)
  if device ~= nil then
    C.ch_rng_seed(device_id(device, 'seed'), n)
  else
    for d = -1, MAX_DEVICES - 1 do C.ch_rng_seed(d, n) end
  end
end

-- get_state([device]) -> {seed = s, offset = o}
function R.get_state(device)
  local d = device_id(device, 'get_state')
  return { seed = u64(C.ch_rng_get_seed(d)), offset = u64(C.ch_rng_get_offset(d)) }
end

-- set_state(state, [device]) with a table from get_state.
function R.set_state(s, device)
  if type(s) ~= 'table' then
    error(string.format('set_state: state must be a table {seed = ..., offset = ...} (got %s)', type(s)), 2)
  end
  local seed = check_int(s.seed, 'set_state', 'state.seed', 0)
  local offset = check_int(s.offset or 0, 'set_state', 'state.offset', 0)
  C.ch_rng_set_state(device_id(device, 'set_state'), seed, offset)
end

local function float_code(dtype, fn)
  local code = dtype_code(dtype or M.default_float, fn)
  if code < 6 then
    error(string.format('%s: dtype must be float16, float32 or float64 (got %s)', fn, M.dtype_names[code]), 3)
  end
  return code
end

local function new(code, shape, device, fn)
  local n, s = shape_arg(shape or {}, fn)
  check(C.ch_empty(code, n, s, device_id(device, fn), box), 3)
  return wrap(box[0])
end

-- Every sampler takes its shape as a table ({3, 4}) or as numbers (3, 4)
-- after its own parameters: rand(3, 4), normal(0, 1, 3, 4); see M.dims.

-- A float sampler fn(a, b, shape, [dtype], [device]) of two numeric
-- parameters, named and defaulted by params {{name, default}, {name,
-- default}}, filled by kernel(t, a, b).
local function float_sampler(fn, params, kernel)
  local an, ad, bn, bd = params[1][1], params[1][2], params[2][1], params[2][2]
  return function(a, b, ...)
    local shape, dtype, device = M.dims(...)
    a, b = check_num(a or ad, fn, an), check_num(b or bd, fn, bn)
    local t = new(float_code(dtype, fn), shape, device, fn)
    check(kernel(t.ptr, a, b), 2)
    return t
  end
end

-- uniform(low, high, shape, [dtype], [device]): values in [low, high).
R.uniform = float_sampler('uniform', { { 'low', 0 }, { 'high', 1 } }, C.ch_random_uniform)

function R.rand(...) return R.uniform(0, 1, ...) end

-- normal(mean, std, shape, [dtype], [device])
R.normal = float_sampler('normal', { { 'mean', 0 }, { 'std', 1 } }, C.ch_random_normal)

function R.randn(...) return R.normal(0, 1, ...) end

-- bernoulli(p, shape, [dtype], [device]): 1 with probability p; dtype may be
-- bool or a number type (default float32).
function R.bernoulli(p, ...)
  local shape, dtype, device = M.dims(...)
  p = check_num(p, 'bernoulli', 'p')
  local t = new(dtype_code(dtype or M.default_float, 'bernoulli'), shape, device, 'bernoulli')
  check(C.ch_random_bernoulli(t.ptr, p), 2)
  return t
end

-- randint(low, high, shape, [dtype = int64], [device]): integers in [low, high).
function R.randint(low, high, ...)
  local shape, dtype, device = M.dims(...)
  low, high = check_int(low, 'randint', 'low'), check_int(high, 'randint', 'high')
  local t = new(dtype_code(dtype or 'int64', 'randint'), shape, device, 'randint')
  check(C.ch_random_randint(t.ptr, low, high), 2)
  return t
end

-- permutation(n, [device]): a random ordering of 0..n-1 (int64).
function R.permutation(n, device)
  n = check_int(n, 'permutation', 'n', 0)
  check(C.ch_random_permutation(n, device_id(device, 'permutation'), box), 2)
  return wrap(box[0])
end

-- choice(n, size, {replace = true, p = probs, device = ...}): `size` draws
-- from 0..n-1 (int64), with or without replacement, uniform or weighted by p.
function R.choice(n, size, opts)
  n = check_int(n, 'choice', 'n', 0)
  opts = opts or {}
  if type(size) == 'table' then
    error('choice: size must be an integer (reshape the result for other shapes)', 2)
  end
  size = check_int(size == nil and 1 or size, 'choice', 'size', 0)
  local replace = opts.replace
  if replace == nil then replace = true end
  local p = opts.p
  if p ~= nil and not M.is_tensor(p) then p = M.array(p, 'float64') end
  check(C.ch_random_choice(n, size, replace and 1 or 0, p and p.ptr or nil,
    device_id(opts.device, 'choice'), box), 2)
  return wrap(box[0])
end

local has_take = pcall(function() return C.ch_take end)

-- shuffle(t): permutes t along axis 0 in place; returns t.
function R.shuffle(t)
  if not M.is_tensor(t) then
    error(string.format('shuffle: argument must be a tensor (got %s)', type(t)), 2)
  end
  local p = t.ptr
  if p.nd == 0 then error('shuffle: cannot shuffle a 0-d tensor (expected at least 1 dimension)', 2) end
  local n = tonumber(p.dim[0])
  local perm = R.permutation(n)
  if n <= 1 then return t end
  if has_take then
    -- gather the rows in their new order, then write them back in place
    check(C.ch_take(p, perm.ptr, 0, 0, box), 2)
    local shuffled = wrap(box[0])
    check(C.ch_copy_into(p, shuffled.ptr), 2)
    return t
  end
  local snapshot = t:copy()
  local pd = ffi.cast('int64_t*', perm.ptr.data) + perm.ptr.offset
  -- row i of t takes row perm[i] of the snapshot: both are views that
  -- differ from the base only by their offset
  local dst_row, src_row = t:select(0), snapshot:select(0)
  local ds, ss = p.stride[0], snapshot.ptr.stride[0]
  local d0, s0 = dst_row.ptr.offset, src_row.ptr.offset
  local dptr, sptr = dst_row.ptr, src_row.ptr
  for i = 0, n - 1 do
    dptr.offset = d0 + i * ds
    sptr.offset = s0 + pd[i] * ss
    check(C.ch_copy_into(dptr, sptr), 2)
  end
  dptr.offset, sptr.offset = d0, s0
  return t
end

-- in-place forms on existing tensors (any layout, any device)
function methods.uniform_(t, low, high)
  check(C.ch_random_uniform(t.ptr, check_num(low or 0, 'uniform_', 'low'), check_num(high or 1, 'uniform_', 'high')), 2)
  return t
end

function methods.normal_(t, mean, std)
  check(C.ch_random_normal(t.ptr, check_num(mean or 0, 'normal_', 'mean'), check_num(std or 1, 'normal_', 'std')), 2)
  return t
end

function methods.bernoulli_(t, p)
  check(C.ch_random_bernoulli(t.ptr, check_num(p or 0.5, 'bernoulli_', 'p')), 2)
  return t
end

-- CHAINER_SEED seeds every stream at load time (otherwise the seed is 0).
local env = os.getenv('CHAINER_SEED')
if env and env ~= '' then
  local n = tonumber(env)
  if not n or n < 0 or n ~= math.floor(n) then
    error(string.format('chainer: CHAINER_SEED must be a non-negative integer (got %q)', env), 0)
  end
  R.seed(n)
end

return R
