-- User-defined kernels on the CPU: chainer.cuda.elementwise / reduce with
-- CuPy's conventions, the C-subset translator, caching and error messages.
local T = require 'chainer.tensor'
local cuda = require 'chainer.cuda'
local K = require 'chainer.user_kernel'
local Pz = require 'chainer.user_kernel.parse'

local function close(a, b, tol)
  tol = tol or 1e-5
  if T.is_tensor(a) then a = a:totable() end
  if T.is_tensor(b) then b = b:totable() end
  if type(a) == 'number' and type(b) == 'number' then
    assert(math.abs(a - b) <= tol * (1 + math.abs(b)), string.format('%s ~= %s', a, b))
    return
  end
  local ta, tb = type(a) == 'table' and a or a:totable(), type(b) == 'table' and b or b:totable()
  if type(ta) == 'number' then
    assert(math.abs(ta - tb) <= tol * (1 + math.abs(tb)), string.format('%s ~= %s', ta, tb))
    return
  end
  assert.are.equal(#tb, #ta)
  for j = 1, #ta do close(ta[j], tb[j], tol) end
end

local helpers = require 'helpers'
local err_of = helpers.err_of

describe('user kernels: parameter lists', function()
  it('parses types, placeholders and raw', function()
    local p = Pz.parse_params('T x, float32 alpha, raw int64 w', 'in_params', 'k')
    assert.are.same({ name = 'x', type = 'T', raw = false, placeholder = true }, p[1])
    assert.are.same({ name = 'alpha', type = 'float32', raw = false, placeholder = false }, p[2])
    assert.are.same({ name = 'w', type = 'int64', raw = true, placeholder = false }, p[3])
    assert.are.same({ name = 'y', type = 'float64', raw = false, placeholder = false },
      Pz.parse_params('double y', 'out_params', 'k')[1])
    assert.are.same({}, Pz.parse_params('  ', 'in_params', 'k'))
  end)

  it('rejects bad lists with the kernel name and the offending text', function()
    assert.matches("kernel k1: bad parameter 'float32' in in_params", err_of(Pz.parse_params, 'float32', 'in_params', 'k1'))
    assert.matches("kernel k2: bad parameter 'T x y'", err_of(Pz.parse_params, 'T x y', 'in_params', 'k2'))
    assert.matches("reserved", err_of(Pz.parse_params, 'T i', 'in_params', 'k3'))
    assert.matches("appears twice", err_of(Pz.parse_params, 'T x, T x', 'in_params', 'k4'))
    assert.matches("not a tensor dtype", err_of(Pz.parse_params, 'uint32 x', 'in_params', 'k5'))
  end)
end)

describe('user kernels: elementwise on the CPU', function()
  it('runs the CuPy squared_diff example with broadcasting and scalars', function()
    local k = cuda.ElementwiseKernel('float32 x, float32 y', 'float32 z', 'z = (x - y) * (x - y)', 'squared_diff')
    local x = T.arange(10, 'float32'):reshape(2, 5)
    local y = T.arange(5, 'float32')
    local z = k(x, y)
    assert.are.same({ 2, 5 }, z.shape)
    assert.are.equal('float32', z.dtype)
    close(z, (x - y) * (x - y))
    close(k(x, 5), (x - 5) * (x - 5))
  end)

  it('binds placeholders from the arguments and passes outputs in', function()
    local k = cuda.elementwise('T x, T y', 'T z', 'T d = x - y; z = d * d;', 'sqdiff_generic')
    local x = T.arange(6, 'float64'):reshape(2, 3)
    local z = k(x, x * 2)
    assert.are.equal('float64', z.dtype)
    close(z, x * x)
    local out = T.zeros({ 2, 3 }, 'float64')
    local r = k(x, 1, out)
    assert.are.equal(out, r)
    close(out, (x - 1) * (x - 1))
    -- int placeholder: integer arithmetic
    local xi = T.tensor({ 7, -7, 9 }, 'int32')
    local kd = cuda.elementwise('T x, T y', 'T q, T r', 'q = x / y; r = x % y', 'divmod')
    local q, rr = kd(xi, 2)
    assert.are.equal('int32', q.dtype)
    assert.are.same({ 3, -3, 4 }, q:totable())    -- C truncates toward zero
    assert.are.same({ 1, -1, 1 }, rr:totable())
  end)

  it('is memoized by cuda.elementwise and cached per types', function()
    local a = cuda.elementwise('T x', 'T y', 'y = x + 1', 'plus1')
    local b = cuda.elementwise('T x', 'T y', 'y = x + 1', 'plus1')
    assert.are.equal(a, b)
    a(T.ones(3, 'float32'))
    local n1 = a.cpu_translations
    a(T.ones(4, 'float32'))
    assert.are.equal(n1, a.cpu_translations)   -- same types and rank: no new translation
    assert.are.same({ 2, 2 }, a(T.ones(2, 'int32')):totable())
    assert.are.equal(n1 + 1, a.cpu_translations)
  end)

  it('handles if/else, ternary, for, while, casts, locals and math', function()
    local k = cuda.elementwise('T x, int32 m', 'T y, int32 c',
      [[
      // clamp, then a small series
      T t = x > 0 ? x : -x;
      if (t > 3) { t = 3; } else if (t < 0.5f) t = 0.5f;
      T s = 0;
      for (int j = 0; j < m; j++) { if (j == 2) continue; s += pow(t, (T)j) / (j + 1); }
      int k = 0;
      while (k * k < (int)x) ++k;
      c = k;
      y = s + max(exp(-t), (T)0.25) + sqrt(t) + tanh(t) + log(t) + fabs(-t) + min(t, (T)1);
      ]], 'series')
    local xs = { -4.5, -1, 0, 0.25, 2, 10 }
    local x = T.tensor(xs, 'float64')
    local y, c = k(x, 5)
    local want_y, want_c = {}, {}
    for j, v in ipairs(xs) do
      local t = math.abs(v)
      if t > 3 then t = 3 elseif t < 0.5 then t = 0.5 end
      local s = 0
      for jj = 0, 4 do if jj ~= 2 then s = s + t ^ jj / (jj + 1) end end
      local kk = 0
      local xi = v >= 0 and math.floor(v) or math.ceil(v)
      while kk * kk < xi do kk = kk + 1 end
      want_c[j] = kk
      want_y[j] = s + math.max(math.exp(-t), 0.25) + math.sqrt(t) + math.tanh(t) + math.log(t) + t + math.min(t, 1)
    end
    close(y, want_y, 1e-12)
    assert.are.same(want_c, c:totable())
  end)

  it('gives booleans C semantics (conditions test != 0, outputs store 0/1)', function()
    local k = cuda.elementwise('T x', 'bool b, int32 cnt', 'b = x; cnt = !x + (x > 1) * 10 + (x && 1)', 'bools')
    local b, n = k(T.tensor({ 0, 0.5, 2 }, 'float32'))
    assert.are.equal('bool', b.dtype)
    assert.are.same({ false, true, true }, b:totable())
    assert.are.same({ 1, 1, 11 }, n:totable())
  end)

  it('exposes i, _ind.size() and raw parameters', function()
    local k = cuda.elementwise('raw T w, int64 shift', 'T y',
      'y = w[(i + shift) % w.size()] * 10 + _ind.size()', 'rotate')
    local w = T.arange(5, 'float32')
    local out = T.empty(5, 'float32')
    k(w, 2, out)
    assert.are.same({ 25, 35, 45, 5, 15 }, out:totable())
    -- no non-raw array: the size comes from the options
    local fill = cuda.elementwise('raw T w', 'raw T o', 'o[i] = w[i] * 2', 'twice')
    local o = T.zeros(4, 'int64')
    fill(T.tensor({ 1, 2, 3, 4 }, 'int64'), o, { size = 4 })
    assert.are.same({ 2, 4, 6, 8 }, o:totable())
    assert.matches('pass the loop size', err_of(fill, T.ones(4, 'int64'), o))
  end)

  it('reads strided, transposed and broadcast views and writes strided outputs', function()
    local k = cuda.elementwise('T a, T b', 'T c', 'c = a * 100 + b', 'combine')
    local a = T.arange(12, 'float32'):reshape(3, 4):transpose()     -- (4, 3), not contiguous
    local b = T.arange(3, 'float32')
    local out = T.zeros({ 3, 4 }, 'float32'):transpose()
    k(a, b, out)
    close(out, a * 100 + b)
    close(T.zeros({ 3, 4 }, 'float32'):copy_(out:transpose()), (a * 100 + b):transpose())
    -- 0-d and empty
    close(k(T.tensor(2, 'float32'), T.tensor(3, 'float32')), 203)
    assert.are.same({ 0, 3 }, k(T.zeros({ 0, 3 }, 'float32'), b).shape)
  end)

  it('computes float16 in float32 and writes float16 back', function()
    local k = cuda.elementwise('T x', 'T y', 'y = x * 0.5f', 'half_it')
    local x = T.tensor({ 1, 3, -8 }, 'float16')
    local y = k(x)
    assert.are.equal('float16', y.dtype)
    assert.are.same({ 0.5, 1.5, -4 }, y:astype('float32'):totable())
  end)

  it('casts inputs safely and refuses unsafe dtypes and mismatched placeholders', function()
    local k = cuda.elementwise('float64 x', 'float64 y', 'y = x * 2', 'dbl')
    assert.are.same({ 2, 4 }, k(T.tensor({ 1, 2 }, 'int32')):totable())
    local kt = cuda.elementwise('T x, T y', 'T z', 'z = x + y', 'addT')
    assert.matches("kernel addT: dtype mismatch: type T is float32 %(from 'x'%) but 'y' is float64",
      err_of(kt, T.ones(2, 'float32'), T.ones(2, 'float64')))
    local ki = cuda.elementwise('int32 x', 'int32 y', 'y = x', 'ints')
    assert.matches("input 'x' is declared int32 but got float32", err_of(ki, T.ones(2, 'float32')))
    assert.matches("type T is float32 %(from 'x'%) but 'z' is int32", err_of(kt, T.ones(2, 'float32'), 1,
      T.ones(2, 'int32')))
    assert.matches("output 'y' must be float64", err_of(k, T.ones(2, 'float64'), T.ones(2, 'float32')))
    assert.matches("output 'z' has shape", err_of(kt, T.ones(2, 'float32'), 1, T.ones(1, 'float32')))
    assert.matches('cannot be broadcast', err_of(kt, T.ones(2, 'float32'), T.ones(3, 'float32')))
    assert.matches('takes 2 inputs', err_of(kt, T.ones(2, 'float32')))
    local ko = cuda.elementwise('T x', 'Z z', 'z = x', 'unbound')
    assert.matches("cannot determine the type Z of 'z'", err_of(ko, T.ones(2, 'float32')))
    assert.are.same({ 1, 1 }, ko(T.ones(2, 'float32'), T.zeros(2, 'int16')):totable())
  end)

  it('reports unsupported constructs with the kernel name and the text', function()
    local function body_err(body)
      local k = K.elementwise('T x', 'T y', body, 'bad_kernel')
      return err_of(k, T.ones(2, 'float32'))
    end
    assert.matches("kernel bad_kernel: unknown function 'frobnicate'.*near 'frobnicate'",
      body_err('y = frobnicate(x);'))
    assert.matches("kernel bad_kernel: unknown name 'q'", body_err('y = q;'))
    assert.matches("cannot assign to 'x'", body_err('x = 1; y = x;'))
    assert.matches("operator %% needs integer operands", body_err('y = x % 2;'))
    assert.matches("preprocessor directives", body_err('#define A 1\ny = x;'))
    assert.matches("'return' is not supported", body_err('return;'))
    assert.matches('inside expressions are not supported', body_err('y = (x += 1);'))
    assert.matches("expected '%)'", body_err('y = (x + 1;'))
    assert.matches("'break' outside a loop", body_err('break;'))
    assert.matches("in: y = x %+%+ %+ 1;", body_err('y = x ++ + 1;'))
  end)
end)

describe('user kernels: reductions on the CPU', function()
  it('runs the CuPy L2 norm example over axes with keepdims', function()
    local l2 = cuda.ReductionKernel('T x', 'T y', 'x * x', 'a + b', 'y = sqrt(a)', '0', 'l2norm')
    local x = T.arange(24, 'float64'):reshape(2, 3, 4) - 7
    close(l2(x), math.sqrt((x * x):sum():item()), 1e-12)
    close(l2(x, { axis = 1 }), (x * x):sum(1):sqrt(), 1e-12)
    close(l2(x, { axis = { 0, 2 } }), (x * x):sum({ 0, 2 }):sqrt(), 1e-12)
    local kd = l2(x, { axis = -1, keepdims = true })
    assert.are.same({ 2, 3, 1 }, kd.shape)
    close(kd, (x * x):sum({ axis = 2, keepdims = true }):sqrt(), 1e-12)
    -- a strided input and a given output
    local xt = x:transpose(2, 0, 1)
    local out = T.zeros({ 4, 2 }, 'float64')
    l2(xt, out, { axis = 2 })
    close(out, (xt * xt):sum(2):sqrt(), 1e-12)
  end)

  it('supports max without identity, reduce_type, _in_ind/_out_ind and two inputs', function()
    local amax = cuda.reduce('T x', 'T y', 'x', 'max(a, b)', 'y = a', nil, 'amax')
    local x = T.tensor({ { 3, -1, 7 }, { -5, -9, -2 } }, 'int32')
    assert.are.same({ 7, -2 }, amax(x, { axis = 1 }):totable())
    assert.matches('zero%-size reduction without an identity', err_of(amax, T.zeros({ 2, 0 }, 'int32'), { axis = 1 }))
    local mean = cuda.reduce('T x', 'float64 y', 'x', 'a + b', 'y = a / (_in_ind.size() / _out_ind.size())', '0',
      'mean_i', { reduce_type = 'float64' })
    close(mean(x, { axis = 0 }), { -1, -5, 2.5 }, 1e-12)
    local dot = cuda.reduce('T x, T y', 'T z', 'x * y', 'a + b', 'z = a', '0', 'dot')
    local a, b = T.arange(6, 'float32'):reshape(2, 3), T.tensor({ 1, 10, 100 }, 'float32')
    close(dot(a, b, { axis = 1 }), { 210, 543 })
    assert.matches("unknown option 'axes'", err_of(dot, a, b, { axes = 1 }))
    assert.matches('axis 2 is out of range', err_of(dot, a, b, { axis = 2 }))
  end)
end)

describe('user kernels: the generated CUDA source (no GPU needed)', function()
  it('specialises the kernel on types, scalars and the collapsed rank', function()
    local k = K.elementwise('T x, float32 alpha', 'T y', 'y = x * alpha', 'scale_k')
    local src = k:cuda_source(T.ones({ 2, 3 }, 'float64'), 2)
    assert.matches('typedef double T;', src, 1, true)
    assert.matches('extern "C" __global__ void scale_k(const long long _n, const _cl_geom _g, ' ..
      'const double *__restrict__ _p1, const float alpha, double *__restrict__ _p3)', src, 1, true)
    assert.matches('const double x = _p1[_o1];', src, 1, true)
    assert.matches('double &y = _p3[_o3];', src, 1, true)
    assert.matches('y = x * alpha', src, 1, true)
    -- contiguous: one dimension after collapsing; a transposed input keeps two
    assert.matches('long long dim[1]', src, 1, true)
    local src2 = k:cuda_source(T.ones({ 2, 3 }, 'float64'):transpose(), 2)
    assert.matches('long long dim[2]', src2, 1, true)
    assert.matches('_c * _g.st[1][0]', src2, 1, true)
  end)

  it('generates a block reduction', function()
    local r = K.reduce('T x', 'T y', 'x * x', 'a + b', 'y = sqrt(a)', '0', 'l2_src')
    local src = r:cuda_source(T.ones({ 4, 5 }, 'float32'), { axis = 1 })
    assert.matches('typedef float _type_reduce;', src, 1, true)
    assert.matches('return (a + b);', src, 1, true)
    assert.matches('__shared__ _type_reduce _sv[256]', src, 1, true)
    assert.matches('const _type_reduce _b = (_type_reduce)(x * x);', src, 1, true)
  end)

  local KC = require 'chainer.user_kernel.cuda_backend'
  local newest = KC.nvrtc_arch()
  local function compiles(src, name)
    local ptx = KC.compile(src, name, 'compute_' .. newest)
    assert.matches('.entry ' .. name, ptx, 1, true)
  end

  it('compiles to PTX with NVRTC (when the backend and NVRTC are present)', function()
    if newest == 0 then pending('no CUDA backend or NVRTC here: ' .. cuda.info()) return end
    local k = K.elementwise('T x, T y, float32 alpha', 'T z, int32 c',
      'T t = x > 0 ? x : -x; if (t > 3) t = 3; for (int j = 0; j < 2; j++) t += (T)j; ' ..
      'z = max(exp(-t), (T)0.25) * alpha + y; c = (int)t % 3;', 'ptx_elem')
    compiles(k:cuda_source(T.ones({ 2, 3 }, 'float32'), T.ones(3, 'float32'), 1.5), 'ptx_elem')
    local kr = K.elementwise('raw T w', 'T y', 'y = w[(i + 1) % w.size()] + _ind.size()', 'ptx_raw')
    compiles(kr:cuda_source(T.ones(4, 'int64'), T.ones(4, 'int64')), 'ptx_raw')
    local r = K.reduce('T x', 'T y', 'x', 'max(a, b)', 'y = a', nil, 'ptx_red')
    compiles(r:cuda_source(T.ones({ 4, 5, 6 }, 'float64'), { axis = { 0, 2 } }), 'ptx_red')
    local bad = K.elementwise('T x', 'T y', 'y = x +* 2;', 'ptx_bad')
    local ok, e = pcall(KC.compile, bad:cuda_source(T.ones(2, 'float32')), 'ptx_bad', 'compute_' .. newest)
    assert.is_false(ok)
    assert.matches('kernel ptx_bad: NVRTC could not compile', tostring(e))
  end)

  it('keeps compiled images in the disk cache (CHAINLUA_KERNEL_CACHE)', function()
    if newest == 0 then pending('no CUDA backend or NVRTC here: ' .. cuda.info()) return end
    local libc = require 'chainer._libc'
    local dir = os.tmpname()
    os.remove(dir)
    local old = os.getenv('CHAINLUA_KERNEL_CACHE')
    libc.setenv('CHAINLUA_KERNEL_CACHE', dir .. '/nested')
    local ok, err = pcall(function()
      assert.are.equal(dir .. '/nested', KC.cache_dir())
      local k = K.elementwise('T x', 'T y', 'y = x * 3', 'disk_probe')
      local src = k:cuda_source(T.ones(2, 'float32'))
      local arch = 'compute_' .. newest
      local img, hit = KC.image(src, 'disk_probe', arch)
      assert.is_nil(hit)
      local path = string.format('%s/nested/%s_%s.ptx', dir, KC.hash(src .. '\0' .. arch), arch)
      local f = assert(io.open(path, 'rb'))
      assert.are.equal(img, f:read('*a'))
      f:close()
      local img2, hit2 = KC.image(src, 'disk_probe', arch)
      assert.are.equal('disk', hit2)
      assert.are.equal(img, img2)
      os.remove(path)
    end)
    libc.setenv('CHAINLUA_KERNEL_CACHE', old)
    os.execute('rm -rf "' .. dir .. '"')
    assert(ok, err)
  end)

  it('hashes source and arch for the disk cache', function()
    assert.are.equal(16, #KC.hash('abc'))
    assert.are.equal(KC.hash('abc'), KC.hash('abc'))
    assert.are_not.equal(KC.hash('abc'), KC.hash('abd'))
    assert.are.equal('cbf29ce484222325', KC.hash(''))     -- the FNV-1a offset basis
  end)
end)
