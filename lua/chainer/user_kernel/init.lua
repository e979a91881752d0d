-- chainer.user_kernel: user-defined elementwise and reduction kernels
-- (CuPy's ElementwiseKernel / ReductionKernel, Chainer's cuda.elementwise /
-- cuda.reduce), i.e. a small compiler for kernel bodies written in C.
--
-- It lives here rather than under chainer/cuda/ because most of it is not
-- CUDA: one kernel text runs on both devices, and the CPU path is the one
-- every install has.  The pieces:
--   init.lua          this file: binds arguments (counts, devices, dtypes,
--                     type placeholders, broadcasting, outputs) and dispatches
--   parse.lua         the front end: parameter lists and the body's C subset
--   cpu_backend.lua   CPU tensors: the body translated to Lua over FFI pointers
--   cuda_backend.lua  CUDA tensors: CUDA source compiled by NVRTC, disk-cached
-- The user API stays chainer.cuda.elementwise / reduce / ElementwiseKernel /
-- ReductionKernel (cuda/init.lua forwards here).
local T = require 'chainer.tensor'
local Pz = require 'chainer.user_kernel.parse'
local CPU = require 'chainer.user_kernel.cpu_backend'
local ffi = require 'ffi'
local accept_options = require('chainer._args').accept
local check_options = require('chainer._args').options

-- The option tables kernels take: at construction (CuPy's keyword
-- arguments chainlua implements; reduce_dims is accepted, dimensions are
-- always collapsed) and per call.
local ELEMENTWISE_OPTIONS = accept_options { 'preamble', 'reduce_dims' }
local REDUCTION_OPTIONS = accept_options { 'reduce_type', 'preamble', 'reduce_dims' }
local ELEMENTWISE_CALL_OPTIONS = accept_options { 'size' }
local REDUCTION_CALL_OPTIONS = accept_options { 'axis', 'keepdims' }

local M = {}
local kerr = Pz.kerr

-- dtype -> the scalar type kernels compute in (float16 computes in float32).
local function compute_type(dt) return dt == 'float16' and 'float32' or dt end

-- Safe implicit casts of an input array to a declared dtype.
local rank = { bool = 0, int8 = 1, uint8 = 1, int16 = 2, int32 = 3, int64 = 4, float16 = 5, float32 = 6,
  float64 = 7 }
local function can_cast(from, to)
  if from == to or from == 'bool' then return true end
  local fi, ti = from:match('^u?int') ~= nil, to:match('^u?int') ~= nil
  if fi and not ti then return true end            -- int -> float
  if not fi and ti then return false end           -- float -> int loses the fraction
  if from == 'uint8' and to ~= 'int8' then return true end
  if to == 'uint8' then return false end
  return rank[to] >= rank[from]
end

local function is_options(v) return type(v) == 'table' and not T.is_tensor(v) end

local function broadcast_shapes(shapes, kname)
  local nd = 0
  for _, s in ipairs(shapes) do nd = math.max(nd, #s) end
  local out = {}
  for d = 1, nd do out[d] = 1 end
  for _, s in ipairs(shapes) do
    local off = nd - #s
    for d = 1, #s do
      local a, b = out[off + d], s[d]
      if a == 1 then out[off + d] = b
      elseif b ~= 1 and b ~= a then
        local strs = {}
        for j, sh in ipairs(shapes) do strs[j] = T.shape_str(sh) end
        kerr(kname, 'shapes %s cannot be broadcast together', table.concat(strs, ', '))
      end
    end
  end
  return out
end

local function same_shape(a, b)
  if #a ~= #b then return false end
  for d = 1, #a do if a[d] ~= b[d] then return false end end
  return true
end

---------------------------------------------------------------------------
-- argument binding, shared by both kinds of kernel
---------------------------------------------------------------------------
-- Returns a table describing the call: arrays (tensors, in parameter order,
-- already in compute dtypes), kinds, types, device, shape, writebacks.
local function bind(self, args, opts, for_reduce)
  local kname = self.name
  local params, nin, nout = self.params, #self.in_params, #self.out_params
  local nargs = #args
  if nargs ~= nin and nargs ~= nin + nout then
    kerr(kname, 'takes %d input%s%s (got %d argument%s)', nin, nin == 1 and '' or 's',
      nout > 0 and string.format(' or %d inputs and %d outputs', nin, nout) or '', nargs, nargs == 1 and '' or 's')
  end
  local device
  local types = {}                 -- placeholder -> dtype
  local bound_by = {}
  local kinds, vals = {}, {}
  for k = 1, nargs do
    local prm, a = params[k], args[k]
    if T.is_tensor(a) then
      local dev = a.ptr.dev
      if device == nil then device = dev
      elseif device ~= dev then
        kerr(kname, "argument '%s' is on %s but an earlier one is on %s (all tensors must be on one device)",
          prm.name, T.device_name(dev), T.device_name(device))
      end
      kinds[k] = 'array'
    elseif (type(a) == 'number' or type(a) == 'boolean') and prm.is_input and not prm.raw then
      kinds[k] = 'scalar'
    else
      kerr(kname, "argument '%s' must be a %s (got %s)", prm.name,
        prm.raw and 'tensor (raw parameter)' or prm.is_input and 'tensor or a number' or 'tensor (output)',
        T.is_tensor(a) and 'tensor' or type(a))
    end
    vals[k] = a
  end
  -- placeholders: arrays bind first (inputs, then given outputs), scalars last
  for k = 1, nargs do
    local prm = params[k]
    if kinds[k] == 'array' and prm.placeholder then
      local dt = vals[k].dtype
      local have = types[prm.type]
      if have == nil then
        types[prm.type], bound_by[prm.type] = dt, prm.name
      elseif have ~= dt then
        kerr(kname, "dtype mismatch: type %s is %s (from '%s') but '%s' is %s", prm.type, have,
          bound_by[prm.type], prm.name, dt)
      end
    end
  end
  for k = 1, nargs do
    local prm, a = params[k], vals[k]
    if kinds[k] == 'scalar' and prm.placeholder and types[prm.type] == nil then
      local dt = type(a) == 'boolean' and 'bool' or (a == math.floor(a) and math.abs(a) < 2 ^ 63) and 'int64'
        or 'float64'
      types[prm.type], bound_by[prm.type] = dt, prm.name
    end
  end
  local ptypes = {}
  for k, prm in ipairs(params) do
    local dt = prm.type
    if prm.placeholder then dt = types[prm.type] end
    if dt == nil then
      kerr(kname, "cannot determine the type %s of '%s': pass %s", prm.type, prm.name,
        prm.is_input and 'an argument that binds it' or 'the output array')
    end
    ptypes[k] = dt
  end
  if self.reduce_type_name and not Pz.ctype_names[self.reduce_type_name] and not types[self.reduce_type_name] then
    kerr(kname, "reduce_type '%s' is neither a type nor a bound placeholder", self.reduce_type_name)
  end
  -- dtypes of the arrays: inputs cast safely, outputs must match
  local writebacks = {}
  for k = 1, nargs do
    if kinds[k] == 'array' then
      local prm, a, want = params[k], vals[k], ptypes[k]
      local have = a.dtype
      if have ~= want then
        if not prm.is_input then
          kerr(kname, "dtype mismatch: output '%s' must be %s (got %s)", prm.name, want, have)
        elseif not can_cast(have, want) then
          kerr(kname, "dtype mismatch: input '%s' is declared %s but got %s (which cannot be cast safely)",
            prm.name, want, have)
        end
        a = a:astype(compute_type(want))
      elseif want == 'float16' then
        local orig = a
        a = a:astype('float32')
        if not prm.is_input then writebacks[#writebacks + 1] = { orig, a } end
      end
      vals[k] = a
    end
  end
  return { vals = vals, kinds = kinds, ptypes = ptypes, types = types, device = device or -1,
    writebacks = writebacks }
end

-- The loop shape of an elementwise call and the broadcast views.
local function element_shape(self, b, opts, nargs)
  local kname = self.name
  local shapes = {}
  for k = 1, nargs do
    if b.kinds[k] == 'array' and not self.params[k].raw then shapes[#shapes + 1] = b.vals[k].shape end
  end
  local size = opts and opts.size
  if #shapes == 0 then
    if size == nil then
      kerr(kname, 'has no non-raw array argument: pass the loop size as {size = n}')
    end
    if type(size) ~= 'number' or size < 0 or size ~= math.floor(size) then
      kerr(kname, 'size must be a non-negative integer (got %s)', tostring(size))
    end
    return { size }
  end
  if size ~= nil then kerr(kname, 'size can be given only when no argument is a non-raw array') end
  return broadcast_shapes(shapes, kname)
end

-- Allocates the missing outputs (in their declared dtypes) on `device`.
local function make_outputs(self, b, shape, nargs)
  local outs = {}
  local nin = #self.in_params
  for j, prm in ipairs(self.out_params) do
    local k = nin + j
    if nargs == nin then
      if prm.raw then kerr(self.name, "raw output '%s' must be passed in (its shape is not known)", prm.name) end
      local dt = b.ptypes[k]
      local t = T.empty(shape, dt, b.device)
      outs[j] = t
      b.vals[k] = dt == 'float16' and T.empty(shape, 'float32', b.device) or t
      if dt == 'float16' then b.writebacks = b.writebacks or {}; table.insert(b.writebacks, { t, b.vals[k] }) end
      b.kinds[k] = 'array'
    else
      outs[j] = self.given_outputs[j]
    end
  end
  return outs
end

local function finish(b, outs)
  for _, wb in ipairs(b.writebacks or {}) do wb[1]:copy_(wb[2]) end
  return unpack(outs)
end

-- Runs a bound call where its arrays live: the CUDA backend's `runner`
-- (run_elementwise, run_reduce) or the kernel's CPU translation, with the
-- call's geometry; returns its outputs.
local function run_on_device(kernel, runner, b, geometry, outs)
  if b.device >= 0 then
    require('chainer.user_kernel.cuda_backend')[runner](kernel, b, geometry)
  else
    kernel:run_cpu(b, geometry)
  end
  return finish(b, outs)
end

---------------------------------------------------------------------------
-- CPU geometry
---------------------------------------------------------------------------
-- Typed pointer to element 0 of a tensor's view.
local ptr_types = {}
local function typed_ptr(t, st)
  local ct = CPU.ctypes[st]
  local pt = ptr_types[ct]
  if not pt then pt = ffi.typeof(ct .. '*'); ptr_types[ct] = pt end
  local p = t.ptr
  return ffi.cast(pt, p.data) + p.offset
end

-- Collapses a loop over `dims` for arrays with element strides `strides[k]`
-- (a list per array; nil entries are skipped): size-1 dims are dropped and
-- neighbours merged where every array is contiguous across them.
local function collapse(dims, strides, arrays)
  local nd, D, S = #dims, {}, {}
  for _, k in ipairs(arrays) do S[k] = {} end
  for d = 1, nd do
    if dims[d] ~= 1 then
      local m = #D
      local merge = m > 0
      if merge then
        for _, k in ipairs(arrays) do
          if S[k][m] ~= strides[k][d] * dims[d] then merge = false; break end
        end
      end
      if merge then
        D[m] = D[m] * dims[d]
        for _, k in ipairs(arrays) do S[k][m] = strides[k][d] end
      else
        D[m + 1] = dims[d]
        for _, k in ipairs(arrays) do S[k][m + 1] = strides[k][d] end
      end
    end
  end
  return D, S
end
M.collapse = collapse

local function numel(shape)
  local n = 1
  for _, d in ipairs(shape) do n = n * d end
  return n
end
M.numel = numel

-- A reduction output's strides in the full index space: 0 on reduced axes.
function M.output_strides(a, geom)
  local ost, st = a.strides, {}
  local j = 0
  for d = 1, #geom.full do
    if geom.is_red[d] then
      st[d] = 0
      if #ost == #geom.full then j = j + 1 end   -- keepdims: a size-1 axis
    else
      j = j + 1
      st[d] = ost[j]
    end
  end
  return st
end

-- Raw arrays are indexed by a flat C-order index: the CPU path needs them
-- contiguous (a copy, written back for outputs).
local function raw_contiguous(b, k, prm)
  local a = b.vals[k]
  if a.is_contiguous then return a end
  local c = a:contiguous()
  if not prm.is_input then
    b.writebacks = b.writebacks or {}
    table.insert(b.writebacks, 1, { a, c })
  end
  b.vals[k] = c
  return c
end

local cpu_cache = setmetatable({}, { __mode = 'k' })

local function cached_fn(self, key, build)
  local cache = cpu_cache[self]
  if not cache then cache = {}; cpu_cache[self] = cache end
  local fn = cache[key]
  if not fn then
    local src = build()
    fn = CPU.compile(src, self.name)
    cache[key] = fn
    self.cpu_translations = (self.cpu_translations or 0) + 1
    self.last_cpu_source = src
  end
  return fn
end

local function signature(self, b, extra)
  local parts = {}
  for k = 1, #self.params do parts[k] = (b.kinds[k] or '-') .. ':' .. b.ptypes[k] end
  return table.concat(parts, ',') .. '|' .. extra
end

---------------------------------------------------------------------------
-- ElementwiseKernel
---------------------------------------------------------------------------
local Elementwise = {}
Elementwise.__index = Elementwise
M.Elementwise = Elementwise

local function split_args(...)
  local args = { ... }
  local n = select('#', ...)
  local opts
  if n > 0 and is_options(args[n]) then opts = args[n]; args[n] = nil; n = n - 1 end
  for k = 1, n do
    if args[k] == nil then error('kernel argument ' .. k .. ' is nil', 3) end
  end
  return args, opts
end

local function check_name(name, what)
  if name == nil then return what end
  if type(name) ~= 'string' or not name:match('^[%a_][%w_]*$') then
    error(string.format('%s: name must be an identifier (got %s)', what, tostring(name)), 3)
  end
  return name
end

local function make_params(self, in_params, out_params)
  self.in_params = Pz.parse_params(in_params, 'in_params', self.name)
  self.out_params = Pz.parse_params(out_params, 'out_params', self.name)
  if #self.out_params == 0 then kerr(self.name, 'needs at least one output parameter') end
  self.params, self.typenames = {}, {}
  for _, p in ipairs(self.in_params) do p.is_input = true; self.params[#self.params + 1] = p end
  for _, p in ipairs(self.out_params) do
    if self.params[p.name] then kerr(self.name, "'%s' is both an input and an output", p.name) end
    p.is_input = false; self.params[#self.params + 1] = p
  end
  local seen = {}
  for _, p in ipairs(self.params) do
    if seen[p.name] then kerr(self.name, "parameter '%s' appears twice", p.name) end
    seen[p.name] = true
    if p.placeholder then self.typenames[p.type] = p.type end
  end
end

-- elementwise(in_params, out_params, body, name[, options]): options are
-- { preamble = 'CUDA code', reduce_dims = true }; preamble is GPU-only.
function M.elementwise(in_params, out_params, body, name, options)
  local self = setmetatable({ kind = 'elementwise' }, Elementwise)
  self.name = check_name(name, 'elementwise')
  make_params(self, in_params, out_params)
  if type(body) ~= 'string' then kerr(self.name, 'the body must be a string (got %s)', type(body)) end
  self.body = body
  self.label = 'kernel ' .. self.name   -- the prefix of its messages
  self.options = check_options(self.label, options, ELEMENTWISE_OPTIONS)
  return self
end

-- The parsed body, with placeholders known as types (parsed lazily: a body
-- that only runs on the GPU may use CUDA beyond the CPU subset).
local function body_ast(self)
  if not self.ast then self.ast = Pz.parse_body(self.body, self.name, 'the kernel body', self.typenames) end
  return self.ast
end

local function resolve_typenames(self, b)
  local tn = {}
  for ph in pairs(self.typenames) do tn[ph] = compute_type(b.types[ph] or 'float32') end
  return tn
end

function Elementwise:__call(...)
  local args, opts = split_args(...)
  check_options(self.label, opts, ELEMENTWISE_CALL_OPTIONS)
  local nargs = #args
  local b = bind(self, args, opts)
  if nargs > #self.in_params then
    self.given_outputs = {}
    for j = 1, #self.out_params do self.given_outputs[j] = args[#self.in_params + j] end
  end
  local shape = element_shape(self, b, opts, nargs)
  for j, prm in ipairs(self.out_params) do
    local k = #self.in_params + j
    if nargs > #self.in_params and not prm.raw and not same_shape(b.vals[k].shape, shape) then
      kerr(self.name, "output '%s' has shape %s but the arguments broadcast to %s", prm.name,
        T.shape_str(b.vals[k].shape), T.shape_str(shape))
    end
  end
  local outs = make_outputs(self, b, shape, nargs)
  self.given_outputs = nil
  return run_on_device(self, 'run_elementwise', b, shape, outs)
end

-- The CUDA source a call with these arguments compiles (any device; for
-- inspection and tests).
function Elementwise:cuda_source(...)
  local args, opts = split_args(...)
  check_options(self.label, opts, ELEMENTWISE_CALL_OPTIONS)
  local b = bind(self, args, opts)
  local nargs = #args
  if nargs > #self.in_params then
    self.given_outputs = {}
    for j = 1, #self.out_params do self.given_outputs[j] = args[#self.in_params + j] end
  end
  local shape = element_shape(self, b, opts, nargs)
  make_outputs(self, b, shape, nargs)
  self.given_outputs = nil
  return require('chainer.user_kernel.cuda_backend').prepare_elementwise(self, b, shape).src
end

function Elementwise:run_cpu(b, shape)
  local params = self.params
  local ctypes_ = {}
  for k = 1, #params do ctypes_[k] = compute_type(b.ptypes[k]) end
  local arrays, strides = {}, {}
  local Pp, Z, V = {}, {}, {}
  for k, prm in ipairs(params) do
    if b.kinds[k] == 'scalar' then
      V[k] = b.vals[k] == true and 1 or b.vals[k] == false and 0 or b.vals[k]
    elseif prm.raw then
      local a = raw_contiguous(b, k, prm)
      Pp[k], Z[k] = typed_ptr(a, ctypes_[k]), a.size
    else
      local a = b.vals[k]
      if not same_shape(a.shape, shape) then a = a:broadcast_to(shape); b.vals[k] = a end
      Pp[k] = typed_ptr(a, ctypes_[k])
      arrays[#arrays + 1] = k
      strides[k] = a.strides
    end
  end
  local D, S = collapse(shape, strides, arrays)
  local n = numel(shape)
  local fn = cached_fn(self, signature(self, b, tostring(#D)), function()
    body_ast(self)
    local ast = Pz.parse_body(self.body, self.name, 'the kernel body', resolve_typenames(self, b))
    return CPU.elementwise_source(self.name, ast, params, b.kinds, ctypes_, #D)
  end)
  if n > 0 then fn(n, D, Pp, S, Z, V) end
  return nil
end

-- Chainer's cuda.elementwise memoizes: the same arguments give the same kernel.
local memo = {}
function M.memoized(kind, ctor, ...)
  local n = select('#', ...)
  local parts = { kind }
  for k = 1, n do
    local v = select(k, ...)
    if type(v) == 'table' then return ctor(...) end   -- options tables are not memoized
    parts[#parts + 1] = tostring(v)
  end
  local key = table.concat(parts, '\0')
  local k = memo[key]
  if not k then k = ctor(...); memo[key] = k end
  return k
end

---------------------------------------------------------------------------
-- ReductionKernel
---------------------------------------------------------------------------
local Reduction = {}
Reduction.__index = Reduction
M.Reduction = Reduction

-- reduce(in_params, out_params, map_expr, reduce_expr, post_map_expr,
-- identity, name[, options]); options: { reduce_type = 'float64' }.
function M.reduce(in_params, out_params, map_expr, reduce_expr, post_map_expr, identity, name, options)
  local self = setmetatable({ kind = 'reduce' }, Reduction)
  self.name = check_name(name, 'reduce')
  make_params(self, in_params, out_params)
  for _, p in ipairs(self.params) do
    if p.raw then kerr(self.name, "raw parameters are not supported by reduction kernels ('%s')", p.name) end
  end
  for what, v in pairs { map_expr = map_expr, reduce_expr = reduce_expr, post_map_expr = post_map_expr } do
    if type(v) ~= 'string' then kerr(self.name, '%s must be a string (got %s)', what, type(v)) end
  end
  if identity ~= nil and type(identity) ~= 'string' and type(identity) ~= 'number' then
    kerr(self.name, 'identity must be a string, a number or nil (got %s)', type(identity))
  end
  self.map_expr, self.reduce_expr, self.post_map_expr = map_expr, reduce_expr, post_map_expr
  self.identity = identity ~= nil and tostring(identity) or nil
  if self.identity == '' then self.identity = nil end
  self.label = 'kernel ' .. self.name
  self.options = check_options(self.label, options, REDUCTION_OPTIONS)
  self.reduce_type_name = self.options.reduce_type or self.out_params[1].type
  return self
end

-- Normalised, sorted reduced axes of an nd-dim shape.
local function reduce_axes(kname, axis, nd)
  local list = {}
  if axis == nil then
    for d = 1, nd do list[d] = d end
    return list
  end
  local given = type(axis) == 'table' and axis or { axis }
  local seen = {}
  for _, a in ipairs(given) do
    if type(a) ~= 'number' or a ~= math.floor(a) then kerr(kname, 'axis must be an integer (got %s)', tostring(a)) end
    local d = a < 0 and a + nd or a
    if d < 0 or d >= nd then kerr(kname, 'axis %d is out of range for %d dimensions', a, nd) end
    if seen[d] then kerr(kname, 'axis %d repeated', a) end
    seen[d] = true
    list[#list + 1] = d + 1
  end
  table.sort(list)
  return list
end

function Reduction:__call(...)
  local args, opts = split_args(...)
  opts = check_options(self.label, opts, REDUCTION_CALL_OPTIONS)
  local nargs = #args
  local b = bind(self, args, opts, true)
  local nin = #self.in_params
  local shapes = {}
  for k = 1, nin do if b.kinds[k] == 'array' then shapes[#shapes + 1] = b.vals[k].shape end end
  if #shapes == 0 then kerr(self.name, 'needs at least one input array') end
  local full = broadcast_shapes(shapes, self.name)
  local axes = reduce_axes(self.name, opts.axis, #full)
  local is_red = {}
  for _, d in ipairs(axes) do is_red[d] = true end
  local out_shape, keep_shape, outer, inner = {}, {}, {}, {}
  for d = 1, #full do
    if is_red[d] then
      keep_shape[d] = 1; inner[#inner + 1] = d
    else
      keep_shape[d] = full[d]; out_shape[#out_shape + 1] = full[d]; outer[#outer + 1] = d
    end
  end
  local oshape = opts.keepdims and keep_shape or out_shape
  if nargs > nin then
    self.given_outputs = {}
    for j = 1, #self.out_params do
      local o = args[nin + j]
      if not same_shape(o.shape, oshape) then
        kerr(self.name, "output '%s' has shape %s but the reduction gives %s", self.out_params[j].name,
          T.shape_str(o.shape), T.shape_str(oshape))
      end
      self.given_outputs[j] = o
    end
  end
  local outs = make_outputs(self, b, oshape, nargs)
  self.given_outputs = nil
  local geom = { full = full, keep = keep_shape, outer = outer, inner = inner, is_red = is_red }
  -- checked here for both devices: the GPU kernel cannot raise an error
  if self.identity == nil and not self.source_only then
    local n_reduced, n_out = 1, 1
    for _, d in ipairs(inner) do n_reduced = n_reduced * full[d] end
    for _, d in ipairs(outer) do n_out = n_out * full[d] end
    if n_reduced == 0 and n_out > 0 then kerr(self.name, 'zero-size reduction without an identity') end
  end
  if self.source_only then return require('chainer.user_kernel.cuda_backend').prepare_reduce(self, b, geom).src end
  return run_on_device(self, 'run_reduce', b, geom, outs)
end

-- The CUDA source a call with these arguments compiles (any device).
function Reduction:cuda_source(...)
  self.source_only = true
  local ok, src = pcall(self.__call, self, ...)
  self.source_only = nil
  if not ok then error(src, 0) end
  return src
end

function Reduction:rtype(b)
  local rt = self.reduce_type_name
  return compute_type(Pz.ctype_names[rt] or b.types[rt])
end

function Reduction:asts(b)
  local tn = resolve_typenames(self, b)
  tn._type_reduce = self:rtype(b)
  return {
    map = Pz.parse_expr(self.map_expr, self.name, 'map_expr', tn),
    reduce = Pz.parse_expr(self.reduce_expr, self.name, 'reduce_expr', tn),
    post = Pz.parse_body(self.post_map_expr, self.name, 'post_map_expr', tn),
    identity = self.identity and Pz.parse_expr(self.identity, self.name, 'identity', tn) or nil,
  }
end

function Reduction:run_cpu(b, geom)
  local params = self.params
  local ctypes_ = {}
  for k = 1, #params do ctypes_[k] = compute_type(b.ptypes[k]) end
  local Pp, Z, V = {}, {}, {}
  local full_strides = {}
  local arrays = {}
  local nin = #self.in_params
  for k = 1, #params do
    if b.kinds[k] == 'scalar' then
      V[k] = b.vals[k] == true and 1 or b.vals[k] == false and 0 or b.vals[k]
    else
      local a = b.vals[k]
      if k <= nin then
        if not same_shape(a.shape, geom.full) then a = a:broadcast_to(geom.full) end
        full_strides[k] = a.strides
      else
        full_strides[k] = M.output_strides(a, geom)
      end
      b.vals[k] = a
      Pp[k] = typed_ptr(a, ctypes_[k])
      arrays[#arrays + 1] = k
    end
  end
  local function pick(axes)
    local dims, st = {}, {}
    for j, d in ipairs(axes) do dims[j] = geom.full[d] end
    for _, k in ipairs(arrays) do
      st[k] = {}
      for j, d in ipairs(axes) do st[k][j] = full_strides[k][d] end
    end
    return dims, st
  end
  local od, os_ = pick(geom.outer)
  local id, is_ = pick(geom.inner)
  local DO, SO = collapse(od, os_, arrays)
  local ins = {}
  for _, k in ipairs(arrays) do if k <= nin then ins[#ins + 1] = k end end
  local DI, SI = collapse(id, is_, ins)
  for _, k in ipairs(arrays) do SI[k] = SI[k] or {} end
  local nout, nin_total = numel(od), numel(geom.full)
  local rtype = self:rtype(b)
  local fn = cached_fn(self, signature(self, b, #DO .. ',' .. #DI .. ',' .. rtype), function()
    return CPU.reduce_source(self.name, self:asts(b), params, b.kinds, ctypes_, #DO, #DI, rtype)
  end)
  if nout > 0 then fn(nout, nin_total, DO, DI, Pp, SO, SI, Z, V) end
end

return M
