-- chainer.user_kernel.cuda_backend: the GPU side of user-defined kernels.
--
-- Generates CUDA source around the user's body (pasted verbatim, as CuPy
-- does), compiles it with NVRTC through libchainlua_cuda, caches the image
-- in memory (per device) and on disk, and launches it on CUDA tensors.
-- The source is specialised on the parameter types, which parameters are
-- scalars, and the loop rank after collapsing, like the CPU translation.
--
-- Disk cache: $CHAINLUA_KERNEL_CACHE, else ~/.cache/chainlua/kernels; one
-- file per (source, arch), named by a 64-bit FNV-1a hash of both.
local ffi = require 'ffi'
local bit = require 'bit'
local lib = require 'chainer._lib'
local C = lib.C
local T = require 'chainer.tensor'
local fs = require 'chainer._fs'

local M = {}

M.THREADS = 256

-- scalar type -> CUDA type
local cuda_types = { bool = 'bool', int8 = 'signed char', uint8 = 'unsigned char', int16 = 'short',
  uint16 = 'unsigned short', int32 = 'int', uint32 = 'unsigned int', int64 = 'long long',
  uint64 = 'unsigned long long', float32 = 'float', float64 = 'double' }
M.cuda_types = cuda_types
local host_ctypes = { bool = 'bool', int8 = 'int8_t', uint8 = 'uint8_t', int16 = 'int16_t', int32 = 'int32_t',
  int64 = 'int64_t', float32 = 'float', float64 = 'double' }
local itemsize = { bool = 1, int8 = 1, uint8 = 1, int16 = 2, int32 = 4, int64 = 8, float32 = 4, float64 = 8 }

-- Names the bodies may use on both devices (the CPU translator knows them).
local preamble = [[
typedef float float32; typedef double float64; typedef bool bool_;
typedef signed char int8; typedef unsigned char uint8; typedef short int16; typedef unsigned short uint16;
typedef int int32; typedef unsigned int uint32; typedef long long int64; typedef unsigned long long uint64;
typedef signed char int8_t; typedef unsigned char uint8_t; typedef short int16_t; typedef unsigned short uint16_t;
typedef int int32_t; typedef unsigned int uint32_t; typedef long long int64_t; typedef unsigned long long uint64_t;
struct _cl_ind { long long n, i;
  __device__ long long size() const { return n; } __device__ long long get() const { return i; } };
template <typename T> struct _cl_raw { T *p; long long n;
  __device__ T &operator[](long long j) const { return p[j]; } __device__ long long size() const { return n; } };
]]

-- The typedefs for placeholders (T, X, ...) and the reduce type.
local function typedefs(self, b, extra)
  local L = {}
  local names = {}
  for ph in pairs(self.typenames) do names[#names + 1] = ph end
  table.sort(names)
  for _, ph in ipairs(names) do
    local dt = b.types[ph] or 'float32'
    if dt == 'float16' then dt = 'float32' end
    L[#L + 1] = string.format('typedef %s %s;', cuda_types[dt], ph)
  end
  if extra then L[#L + 1] = extra end
  return table.concat(L, '\n')
end

local function ctype_of(t) return cuda_types[t] end

-- The kernel parameter list and the per-element declarations.
-- `arrays` lists the non-raw array parameters (their slot in the offsets).
local function param_decls(self, b, ct)
  local sig, arrays = {}, {}
  for k, prm in ipairs(self.params) do
    local cty = ctype_of(ct[k])
    if b.kinds[k] == 'scalar' then
      sig[#sig + 1] = string.format('const %s %s', cty, prm.name)
    elseif prm.raw then
      sig[#sig + 1] = string.format('const _cl_raw<%s> %s', cty, prm.name)
    else
      sig[#sig + 1] = string.format('%s%s *__restrict__ _p%d', prm.is_input and 'const ' or '', cty, k)
      arrays[#arrays + 1] = k
    end
  end
  return sig, arrays
end

-- Lines that unravel `idx` over `geom` (dims `nd`) adding each array's
-- offset into _o<k> (declared beforehand).
local function unravel(L, ind, idx, geom, nd, arrays, slots)
  if nd == 0 then return end
  L[#L + 1] = string.format('%s{ long long _rem = %s;', ind, idx)
  for d = nd, 1, -1 do
    L[#L + 1] = string.format('%s  { const long long _c = _rem %% %s.dim[%d]; _rem /= %s.dim[%d];', ind, geom, d - 1,
      geom, d - 1)
    local adds = {}
    for _, k in ipairs(arrays) do
      adds[#adds + 1] = string.format('_o%d += _c * %s.st[%d][%d];', k, geom, slots[k], d - 1)
    end
    L[#L + 1] = ind .. '    ' .. table.concat(adds, ' ') .. ' }'
  end
  L[#L + 1] = ind .. '}'
end

local function geom_struct(name, nd, na)
  return string.format('struct %s { long long dim[%d]; long long st[%d][%d]; };', name, math.max(nd, 1),
    math.max(na, 1), math.max(nd, 1))
end

-- CUDA source of an elementwise kernel; `ct[k]` the compute type of
-- parameter k, `nd` the collapsed rank.
function M.elementwise_source(self, b, ct, nd)
  local sig, arrays = param_decls(self, b, ct)
  local slots = {}
  for j, k in ipairs(arrays) do slots[k] = j - 1 end
  local L = { '// chainlua user kernel ' .. self.name, preamble, typedefs(self, b),
    geom_struct('_cl_geom', nd, #arrays) }
  if self.options.preamble then L[#L + 1] = self.options.preamble end
  L[#L + 1] = string.format('extern "C" __global__ void %s(const long long _n, const _cl_geom _g%s%s) {', self.name,
    #sig > 0 and ', ' or '', table.concat(sig, ', '))
  L[#L + 1] = '  for (long long _i = (long long)blockIdx.x * blockDim.x + threadIdx.x; _i < _n;'
  L[#L + 1] = '       _i += (long long)blockDim.x * gridDim.x) {'
  local offs = {}
  for _, k in ipairs(arrays) do offs[#offs + 1] = '_o' .. k .. ' = 0' end
  if #offs > 0 then L[#L + 1] = '    long long ' .. table.concat(offs, ', ') .. ';' end
  unravel(L, '    ', '_i', '_g', nd, arrays, slots)
  L[#L + 1] = '    const long long i = _i; const _cl_ind _ind = { _n, _i }; (void)i; (void)_ind;'
  for _, k in ipairs(arrays) do
    local prm = self.params[k]
    if prm.is_input then
      L[#L + 1] = string.format('    const %s %s = _p%d[_o%d];', ctype_of(ct[k]), prm.name, k, k)
    else
      L[#L + 1] = string.format('    %s &%s = _p%d[_o%d];', ctype_of(ct[k]), prm.name, k, k)
    end
  end
  L[#L + 1] = '    {'
  L[#L + 1] = self.body
  L[#L + 1] = '    ;}'
  L[#L + 1] = '  }'
  L[#L + 1] = '}'
  return table.concat(L, '\n') .. '\n'
end

-- CUDA source of a reduction: one block per output element (grid-stride),
-- each thread reduces a strided share, then a shared-memory tree.
function M.reduce_source(self, b, ct, nd_out, nd_in, rtype)
  local sig, arrays = param_decls(self, b, ct)
  local nin = #self.in_params
  local ins, slots_o, slots_i = {}, {}, {}
  for j, k in ipairs(arrays) do
    slots_o[k] = j - 1
    if k <= nin then ins[#ins + 1] = k; slots_i[k] = #ins - 1 end
  end
  local rct = ctype_of(rtype)
  local th = M.THREADS
  local L = { '// chainlua user reduction ' .. self.name, preamble,
    typedefs(self, b, 'typedef ' .. rct .. ' _type_reduce;'),
    geom_struct('_cl_geom_o', nd_out, #arrays), geom_struct('_cl_geom_i', nd_in, #ins) }
  if self.options.preamble then L[#L + 1] = self.options.preamble end
  L[#L + 1] = 'struct _cl_size { long long n; __device__ long long size() const { return n; } };'
  L[#L + 1] = '__device__ __forceinline__ _type_reduce _cl_reduce(const _type_reduce a, const _type_reduce b) {'
  L[#L + 1] = '  return (' .. self.reduce_expr .. ');'
  L[#L + 1] = '}'
  L[#L + 1] = string.format('extern "C" __global__ void %s(const long long _nout, const long long _ninner, ' ..
    'const _cl_geom_o _go, const _cl_geom_i _gi%s%s) {', self.name, #sig > 0 and ', ' or '', table.concat(sig, ', '))
  L[#L + 1] = string.format('  __shared__ _type_reduce _sv[%d]; __shared__ bool _sh[%d];', th, th)
  L[#L + 1] = '  const _cl_size _in_ind = { _nout * _ninner }, _out_ind = { _nout }; (void)_in_ind; (void)_out_ind;'
  L[#L + 1] = '  const unsigned _t = threadIdx.x;'
  L[#L + 1] = '  for (long long _j = blockIdx.x; _j < _nout; _j += gridDim.x) {'
  local offs = {}
  for _, k in ipairs(arrays) do offs[#offs + 1] = '_o' .. k .. ' = 0' end
  L[#L + 1] = '    long long ' .. table.concat(offs, ', ') .. ';'
  unravel(L, '    ', '_j', '_go', nd_out, arrays, slots_o)
  if self.identity then
    L[#L + 1] = '    _type_reduce _acc = (_type_reduce)(' .. self.identity .. '); bool _have = true;'
  else
    L[#L + 1] = '    _type_reduce _acc = _type_reduce(); bool _have = false;'
  end
  L[#L + 1] = '    for (long long _r = _t; _r < _ninner; _r += blockDim.x) {'
  local ioffs = {}
  for _, k in ipairs(ins) do ioffs[#ioffs + 1] = string.format('_q%d = _o%d', k, k) end
  L[#L + 1] = '      long long ' .. table.concat(ioffs, ', ') .. ';'
  -- the inner unravel adds into _q<k>
  local inner = {}
  unravel(inner, '      ', '_r', '_gi', nd_in, ins, slots_i)
  for _, line in ipairs(inner) do L[#L + 1] = (line:gsub('_o(%d+) %+=', '_q%1 +=')) end
  for _, k in ipairs(ins) do
    L[#L + 1] = string.format('      const %s %s = _p%d[_q%d];', ctype_of(ct[k]), self.params[k].name, k, k)
  end
  for k, prm in ipairs(self.params) do
    if not prm.is_input then L[#L + 1] = string.format('      (void)_p%d;', k) end
  end
  L[#L + 1] = '      const _type_reduce _b = (_type_reduce)(' .. self.map_expr .. ');'
  L[#L + 1] = '      _acc = _have ? _cl_reduce(_acc, _b) : _b; _have = true;'
  L[#L + 1] = '    }'
  L[#L + 1] = '    _sv[_t] = _acc; _sh[_t] = _have; __syncthreads();'
  L[#L + 1] = '    for (unsigned _s = blockDim.x / 2; _s > 0; _s >>= 1) {'
  L[#L + 1] = '      if (_t < _s && _sh[_t + _s]) {'
  L[#L + 1] = '        _sv[_t] = _sh[_t] ? _cl_reduce(_sv[_t], _sv[_t + _s]) : _sv[_t + _s]; _sh[_t] = true; }'
  L[#L + 1] = '      __syncthreads();'
  L[#L + 1] = '    }'
  L[#L + 1] = '    if (_t == 0) {'
  L[#L + 1] = '      const _type_reduce a = _sv[0];'
  for k, prm in ipairs(self.params) do
    if not prm.is_input then
      L[#L + 1] = string.format('      %s &%s = _p%d[_o%d];', ctype_of(ct[k]), prm.name, k, k)
    end
  end
  L[#L + 1] = '      {'
  L[#L + 1] = self.post_map_expr
  L[#L + 1] = '      ;}'
  L[#L + 1] = '    }'
  L[#L + 1] = '    __syncthreads();'
  L[#L + 1] = '  }'
  L[#L + 1] = '}'
  return table.concat(L, '\n') .. '\n'
end

---------------------------------------------------------------------------
-- compilation and the caches
---------------------------------------------------------------------------
local FNV_OFFSET, FNV_PRIME = 0xcbf29ce484222325ULL, 0x100000001b3ULL
-- 64-bit FNV-1a of a string, as 16 hex digits.
function M.hash(s)
  local h = FNV_OFFSET
  for j = 1, #s do
    h = bit.bxor(h, s:byte(j)) * FNV_PRIME
  end
  return bit.tohex(h, 16)
end

function M.cache_dir()
  local d = os.getenv('CHAINLUA_KERNEL_CACHE')
  if d and d ~= '' then return d end
  local home = os.getenv('HOME')
  if not home or home == '' then return nil end
  return home .. '/.cache/chainlua/kernels'
end

local image_box = ffi.new('char*[1]')
local size_box = ffi.new('size_t[1]')

-- Compiles `src` for `arch` ("sm_90" or "compute_90") and returns the image
-- as a Lua string.  Errors carry NVRTC's log.
function M.compile(src, name, arch)
  lib.check(C.ch_cuda_compile(src, name, arch, image_box, size_box), 2)
  local s = ffi.string(image_box[0], size_box[0])
  C.ch_cuda_image_free(image_box[0])
  return s
end

-- The newest compute_XY NVRTC targets (0 when NVRTC or the backend is missing).
function M.nvrtc_arch() return tonumber(C.ch_cuda_nvrtc_arch()) end

-- The image of `src` for `arch`, from the disk cache or compiled (and
-- stored there).  Returns image, hit ('disk' or nil).
function M.image(src, name, arch)
  local dir = M.cache_dir()
  local path = dir and string.format('%s/%s_%s.%s', dir, M.hash(src .. '\0' .. arch), arch,
    arch:match('^sm_') and 'cubin' or 'ptx')
  if path then
    local img = fs.read_file(path)
    if img and #img > 0 then return img, 'disk' end
  end
  local img = M.compile(src, name, arch)
  if path then
    -- best effort: a cache that cannot be written only costs a recompile
    if fs.mkdir_p(dir) then fs.atomic_write(path, img) end
  end
  return img
end

M.stats = { compiled = 0, disk_hits = 0, memory_hits = 0 }
local loaded = {}       -- device, kernel name, source -> kernel handle (and the image, kept alive)

local function arch_for(device)
  local cc = tonumber(C.ch_cuda_arch(device))
  if cc == 0 then error('kernel: cannot read the compute capability of cuda:' .. device, 3) end
  local newest = M.nvrtc_arch()
  if newest > 0 and cc > newest then return 'compute_' .. newest end
  return 'sm_' .. cc
end

local kernel_box = ffi.new('void*[1]')
function M.kernel(src, name, device)
  local key = device .. '\0' .. name .. '\0' .. src   -- a raw module's source holds several kernels
  local k = loaded[key]
  if k then M.stats.memory_hits = M.stats.memory_hits + 1; return k.fn end
  local arch = arch_for(device)
  local img, hit = M.image(src, name, arch)
  if hit then M.stats.disk_hits = M.stats.disk_hits + 1 else M.stats.compiled = M.stats.compiled + 1 end
  lib.check(C.ch_cuda_kernel_load(device, img, name, kernel_box), 2)
  k = { fn = kernel_box[0], image = img }
  loaded[key] = k
  return k.fn
end

---------------------------------------------------------------------------
-- launching
---------------------------------------------------------------------------
local geom_types = {}
local function geom_type(nd, na)
  local key = nd .. ',' .. na
  local gt = geom_types[key]
  if not gt then
    gt = ffi.typeof(string.format('struct { int64_t dim[%d]; int64_t st[%d][%d]; }', math.max(nd, 1),
      math.max(na, 1), math.max(nd, 1)))
    geom_types[key] = gt
  end
  return gt
end
local raw_type = ffi.typeof('struct { void *p; int64_t n; }')

-- Device address of element 0 of a tensor's view.
local function dev_ptr(t, st)
  local p = t.ptr
  return ffi.cast('char*', p.data) + p.offset * itemsize[st]
end

local function fill_geom(g, dims, strides, arrays)
  for d = 1, #dims do g.dim[d - 1] = dims[d] end
  for j, k in ipairs(arrays) do
    for d = 1, #dims do g.st[j - 1][d - 1] = strides[k][d] end
  end
end

-- Packs the kernel arguments after the leading ones into `args` (a Lua list
-- of cdata boxes, kept alive by the caller).
local function pack_params(self, b, ct, boxes)
  for k, prm in ipairs(self.params) do
    if b.kinds[k] == 'scalar' then
      local v = b.vals[k]
      if v == true then v = 1 elseif v == false then v = 0 end
      boxes[#boxes + 1] = ffi.new(host_ctypes[ct[k]] .. '[1]', v)
    elseif prm.raw then
      local a = b.vals[k]
      boxes[#boxes + 1] = ffi.new(raw_type, dev_ptr(a, ct[k]), a.size)
    else
      boxes[#boxes + 1] = ffi.new('void*[1]', dev_ptr(b.vals[k], ct[k]))
    end
  end
end

local function launch(fn, device, blocks, boxes)
  local args = ffi.new('void*[?]', #boxes)
  for j, bx in ipairs(boxes) do args[j - 1] = ffi.cast('void*', bx) end
  lib.check(C.ch_cuda_launch(device, fn, blocks, M.THREADS, 0, args), 3)
end

local function compute_types(self, b)
  local ct = {}
  for k = 1, #self.params do ct[k] = b.ptypes[k] == 'float16' and 'float32' or b.ptypes[k] end
  return ct
end

local K -- chainer.user_kernel (for its geometry helpers), loaded on first use

-- Geometry and source of an elementwise call (no device needed).
function M.prepare_elementwise(self, b, shape)
  K = K or require 'chainer.user_kernel'
  local ct = compute_types(self, b)
  local arrays, strides = {}, {}
  for k, prm in ipairs(self.params) do
    if b.kinds[k] == 'array' then
      local a = b.vals[k]
      if prm.raw then
        if not a.is_contiguous then
          local c = a:contiguous()
          if not prm.is_input then b.writebacks = b.writebacks or {}; table.insert(b.writebacks, 1, { a, c }) end
          b.vals[k] = c
        end
      else
        a = a:broadcast_to(shape)
        b.vals[k] = a
        arrays[#arrays + 1] = k
        strides[k] = a.strides
      end
    end
  end
  local D, S = K.collapse(shape, strides, arrays)
  local src = M.elementwise_source(self, b, ct, #D)
  self.last_cuda_source = src
  return { src = src, ct = ct, D = D, S = S, arrays = arrays, n = K.numel(shape) }
end

function M.run_elementwise(self, b, shape)
  local p = M.prepare_elementwise(self, b, shape)
  local ct, D, S, arrays, n, src = p.ct, p.D, p.S, p.arrays, p.n, p.src
  if n == 0 then return end
  local fn = M.kernel(src, self.name, b.device)
  local g = ffi.new(geom_type(#D, #arrays))
  fill_geom(g, D, S, arrays)
  local boxes = { ffi.new('int64_t[1]', n), g }
  pack_params(self, b, ct, boxes)
  local blocks = math.min(math.ceil(n / M.THREADS), 65535 * 32)
  launch(fn, b.device, blocks, boxes)
end

-- Geometry and source of a reduction call (no device needed).
function M.prepare_reduce(self, b, geom)
  K = K or require 'chainer.user_kernel'
  local ct = compute_types(self, b)
  local nin = #self.in_params
  local arrays, ins, full_strides = {}, {}, {}
  for k = 1, #self.params do
    if b.kinds[k] == 'array' then
      local a = b.vals[k]
      if k <= nin then
        a = a:broadcast_to(geom.full)
        full_strides[k] = a.strides
        ins[#ins + 1] = k
      else
        full_strides[k] = K.output_strides(a, geom)
      end
      b.vals[k] = a
      arrays[#arrays + 1] = k
    end
  end
  local function pick(axes, list)
    local dims, st = {}, {}
    for j, d in ipairs(axes) do dims[j] = geom.full[d] end
    for _, k in ipairs(list) do
      st[k] = {}
      for j, d in ipairs(axes) do st[k][j] = full_strides[k][d] end
    end
    return dims, st
  end
  local od, os_ = pick(geom.outer, arrays)
  local id, is_ = pick(geom.inner, ins)
  local DO, SO = K.collapse(od, os_, arrays)
  local DI, SI = K.collapse(id, is_, ins)
  local rtype = self:rtype(b)
  local src = M.reduce_source(self, b, ct, #DO, #DI, rtype)
  self.last_cuda_source = src
  return { src = src, ct = ct, DO = DO, SO = SO, DI = DI, SI = SI, arrays = arrays, ins = ins,
    nout = K.numel(od), ninner = K.numel(id) }
end

function M.run_reduce(self, b, geom)
  local p = M.prepare_reduce(self, b, geom)
  local ct, DO, SO, DI, SI, arrays, ins, src = p.ct, p.DO, p.SO, p.DI, p.SI, p.arrays, p.ins, p.src
  local nout, ninner = p.nout, p.ninner
  if nout == 0 then return end
  local fn = M.kernel(src, self.name, b.device)
  local go, gi = ffi.new(geom_type(#DO, #arrays)), ffi.new(geom_type(#DI, #ins))
  fill_geom(go, DO, SO, arrays)
  fill_geom(gi, DI, SI, ins)
  local boxes = { ffi.new('int64_t[1]', nout), ffi.new('int64_t[1]', ninner), go, gi }
  pack_params(self, b, ct, boxes)
  launch(fn, b.device, math.min(nout, 65535 * 32), boxes)
end

M.T = T
return M
