-- link_hooks.SpectralNormalization: the normalized weight against closed
-- forms and a hand-run power iteration, u's storage, gamma, factor, lazy
-- weights, gradients by finite differences, errors.
local chainer = require 'chainer'
local H = require 'helpers'
local T = chainer.tensor
local L = chainer.links
local F = chainer.functions
local SN = chainer.link_hooks.SpectralNormalization

local W_ROWS = { { 1, 2 }, { 3, 4 }, { 5, 6 } }   -- (out 3, in 2)

-- The largest singular value of W_ROWS: the square root of the largest
-- eigenvalue of W^T W = [[35, 44], [44, 56]].
local SIGMA = math.sqrt((91 + math.sqrt((35 - 56) ^ 2 + 4 * 44 ^ 2)) / 2)

-- Largest singular value of a 3x2 or 2x2 matrix (a Lua table) in closed form.
local function sigma_of(rows)
  local a, b, c = 0, 0, 0   -- W^T W = [[a, b], [b, c]]
  for _, r in ipairs(rows) do
    a, b, c = a + r[1] * r[1], b + r[1] * r[2], c + r[2] * r[2]
  end
  return math.sqrt((a + c + math.sqrt((a - c) ^ 2 + 4 * b * b)) / 2)
end

local function linear(rows, dtype)
  dtype = dtype or 'float32'
  return chainer.using_config('dtype', dtype, function()
    return L.Linear(#rows[1], #rows, { nobias = true, initialW = T.array(rows, dtype) })
  end)
end

-- The weight the link used: y = x W^T with x = I gives W^T.
local function used_weight(l, dtype)
  local n = l.W.shape[2]
  local y = l(T.eye(n, dtype or 'float32'))
  return y.array:transpose():totable()
end

local function test_mode(fn) return chainer.using_config('train', false, fn) end

describe('SpectralNormalization', function()
  it('divides the weight by its largest singular value (closed form) once the iteration converges', function()
    local l = linear(W_ROWS)
    l:add_hook(SN(50))
    local Wbar = used_weight(l)
    for i = 1, 3 do
      for j = 1, 2 do assert.near(W_ROWS[i][j] / SIGMA, Wbar[i][j], 1e-5) end
    end
    assert.near(1, sigma_of(Wbar), 1e-5)
    assert.is_true(l.W._is_parameter)            -- the Parameter is back after the forward
    H.close(l.W.array, T.array(W_ROWS, 'float32'))
  end)

  it('runs n_power_iteration steps from hook.u; stores the new u in training mode only', function()
    local l = linear(W_ROWS, 'float64')
    local sn = SN(1)
    l:add_hook(sn)
    sn.u = T.array({ 1, 0, 1 }, 'float64')
    -- one step by hand (eps = 1e-6 as Chainer's default)
    local uW = { 1 + 5, 2 + 6 }
    local n = math.sqrt(uW[1] ^ 2 + uW[2] ^ 2) + 1e-6
    local v = { uW[1] / n, uW[2] / n }
    local Wv = {}
    for i = 1, 3 do Wv[i] = W_ROWS[i][1] * v[1] + W_ROWS[i][2] * v[2] end
    local m = math.sqrt(Wv[1] ^ 2 + Wv[2] ^ 2 + Wv[3] ^ 2) + 1e-6
    local u1 = { Wv[1] / m, Wv[2] / m, Wv[3] / m }
    local sigma = u1[1] * Wv[1] + u1[2] * Wv[2] + u1[3] * Wv[3]

    local Wbar = test_mode(function() return used_weight(l, 'float64') end)
    for i = 1, 3 do
      for j = 1, 2 do assert.near(W_ROWS[i][j] / sigma, Wbar[i][j], 1e-12) end
    end
    assert.same({ 1, 0, 1 }, sn.u:totable())      -- test mode: u kept
    used_weight(l, 'float64')                    -- training mode (the default): u stored
    local got = sn.u:totable()
    for i = 1, 3 do assert.near(u1[i], got[i], 1e-12) end
    assert.equal(l.W_u, sn.u)                    -- hook.u is the link's persistent W_u
    assert.is_true(l._persistent.W_u)
  end)

  it('starts u as one random normal draw per output unit (axis 1 for Deconvolution)', function()
    local c = L.Convolution2D(2, 5, 3)
    local sn = SN()
    c:add_hook(sn)
    assert.same({ 5 }, sn.u.shape)
    local d = L.Deconvolution2D(2, 7, 3)
    local sd = SN()
    d:add_hook(sd)
    assert.same({ 7 }, sd.u.shape)
    assert.equal(1, sd.axis)
    local y = d(T.ones({ 1, 2, 4, 4 }))
    assert.same({ 1, 7, 6, 6 }, y.shape)
  end)

  it('initialises a lazy weight from the first input', function()
    local l = L.Linear(nil, 4)
    local sn = SN()
    l:add_hook(sn)
    assert.is_nil(sn.u)
    local y = l(T.ones({ 2, 3 }))
    assert.same({ 2, 4 }, y.shape)
    assert.same({ 4, 3 }, l.W.shape)
    assert.same({ 4 }, sn.u.shape)
  end)

  it('use_gamma adds a parameter gamma = sigma(W) that scales the normalized weight', function()
    local l = linear(W_ROWS, 'float64')
    l:add_hook(SN(50, 1e-12, true))
    assert.near(SIGMA, l.gamma.array:item(), 1e-9)
    local names = {}
    for name in l:namedparams() do names[#names + 1] = name end
    assert.same({ '/W', '/gamma' }, names)
    local Wbar = used_weight(l, 'float64')          -- gamma * W / sigma = W
    for i = 1, 3 do
      for j = 1, 2 do assert.near(W_ROWS[i][j], Wbar[i][j], 1e-9) end
    end
    l:delete_hook('SpectralNormalization')
    assert.is_nil(rawget(l, 'gamma'))
    assert.is_nil(rawget(l, 'W_u'))
    assert.is_nil(l._persistent.W_u)
  end)

  it('trains: an optimizer set up after add_hook updates W and gamma', function()
    local l = L.Linear(3, 2)
    local sn = SN(1, nil, true)
    l:add_hook(sn)
    local opt = chainer.optimizers.SGD(0.1)
    opt:setup(l)
    local W0, g0, u0 = l.W.array:copy(), l.gamma.array:item(), sn.u:copy()
    l:cleargrads()
    F.sum(l(T.ones({ 4, 3 }))):backward()
    assert.is_not_nil(l.gamma.grad)
    opt:update()
    assert.is_true(math.abs(l.gamma.array:item() - g0) > 0)
    assert.are_not.same(H.vals(W0), H.vals(l.W))
    assert.are_not.same(H.vals(u0), H.vals(sn.u))
  end)

  it('factor divides sigma', function()
    local l = linear(W_ROWS, 'float64')
    l:add_hook(SN{ n_power_iteration = 50, eps = 1e-12, factor = 2 })
    local Wbar = used_weight(l, 'float64')
    assert.near(2, sigma_of(Wbar), 1e-9)
  end)

  it('is differentiable: the gradient of W matches finite differences', function()
    local rows = { { 0.3, -1.2, 0.5 }, { 0.8, 0.1, -0.4 }, { -0.6, 0.9, 1.1 }, { 0.2, 0.7, -0.3 } }
    local l = linear(rows, 'float64')
    l:add_hook(SN(300))
    local x = T.array({ { 0.5, -0.2, 0.9 }, { -1.0, 0.4, 0.3 } }, 'float64')
    local gy = T.array({ { 1, -2, 0.5, 0.3 }, { 0.7, 0.1, -1, 2 } }, 'float64')
    -- test mode: the stored u stays, so every evaluation iterates from the same start
    local function loss() return test_mode(function() return F.sum(l(x) * gy) end) end
    H.check_matrix_grad(l.W, loss)
  end)

  it('saves u and gamma with the model and loads them back', function()
    local l = L.Linear(3, 4)
    local sn = SN(1, nil, true)
    l:add_hook(sn)
    l(T.ones({ 1, 3 }))
    local base = os.tmpname()
    local path = base .. '.npz'
    chainer.serializers.save_npz(path, l)
    local m = L.Linear(3, 4)
    local sm = SN(1, nil, true)
    m:add_hook(sm)
    chainer.serializers.load_npz(path, m)
    os.remove(path)
    os.remove(base)
    H.close(sn.u, sm.u)
    H.close(l.gamma, m.gamma)
    H.close(l.W, m.W)
  end)

  it('puts the Parameter back when the forward raises', function()
    local l = L.Linear(3, 2)
    l:add_hook(SN())
    H.errors_with(function() l(T.ones({ 2, 5 })) end)
    assert.is_true(l.W._is_parameter)
  end)

  it('validates its options and the link', function()
    H.errors_with(function() SN{ power = 2 } end, 'SpectralNormalization', "'power'")
    H.errors_with(function() SN(0) end, 'n_power_iteration', '>= 1')
    H.errors_with(function() SN(1.5) end, 'n_power_iteration')
    H.errors_with(function() SN(1, -1) end, 'eps')
    H.errors_with(function() SN{ factor = 0 } end, 'factor')
    H.errors_with(function() SN{ weight_name = 3 } end, 'weight_name')
    H.errors_with(function() L.Linear(2, 3):add_hook(SN{ weight_name = 'V' }) end, "no weight parameter 'V'")
    H.errors_with(function() SN():scope(function() end) end, 'not meant to be registered globally')
    local sn = SN()
    H.errors_with(function() sn.u = T.ones({ 3 }) end, 'hook.u')
    local l = L.Linear(2, 3)
    l:add_hook(sn)
    H.errors_with(function() sn.u = T.ones({ 4 }) end, 'hook.u', 'shape (3)')
    H.errors_with(function() L.Linear(2, 3):add_hook(sn) end, 'another link')
    H.errors_with(function() l:add_hook(SN()) end, 'already registered')
    l:add_hook(SN{ weight_name = 'W', name = 'sn2' })     -- another name is fine
    assert.same({ 'SpectralNormalization', 'sn2' }, l.local_link_hooks.names)
  end)
end)
