-- Assertions shared by specs across folders (require 'helpers'): error
-- messages, flat values of a tensor or Variable, and closeness checks.
-- Busted gives spec files its assert; a required module needs luassert's.
local assert = require 'luassert'
local chainer = require 'chainer'
local fs = require 'chainer._fs'
local T = chainer.tensor

local H = {}

-- The message of the error f(...) raises; fails the spec when it succeeds.
function H.err_of(f, ...)
  local ok, e = pcall(f, ...)
  assert(not ok, 'expected an error')
  return tostring(e)
end

-- Asserts that f() fails with a message containing every one of `...`
-- (plain substrings).
function H.errors_with(f, ...)
  local ok, err = pcall(f)
  assert.is_false(ok, 'expected an error')
  for _, s in ipairs({ ... }) do
    assert.truthy(tostring(err):find(s, 1, true), 'error message "' .. tostring(err) .. '" lacks "' .. s .. '"')
  end
end

-- The values of a tensor (or a Variable's array) as one flat list.
function H.vals(t)
  if type(t) == 'table' and t._is_variable then t = t.array end
  return t:reshape(-1):totable()
end

-- assert_allclose for tensors or Variables, atol = rtol = tol (1e-6).
function H.close(a, b, tol)
  a = T.is_tensor(a) and a or a.array
  b = T.is_tensor(b) and b or b.array
  chainer.testing.assert_allclose(a, b, { atol = tol or 1e-6, rtol = tol or 1e-6 })
end

-- A function_spec input maker: dtype -> uniform(-1, 1) tensor of `shape`.
function H.uniform(shape)
  return function(dtype) return T.random.uniform(-1, 1, shape, dtype) end
end

-- The reference for a loss's reduce option o.reduce: the elementwise loss
-- l itself ('no'), its mean ('mean') or its sum (anything else).
function H.reduce_loss(l, o)
  if o.reduce == 'no' then return l end
  if o.reduce == 'mean' then return T.mean(l) end
  return T.sum(l)
end

-- Compares a tensor (or a flat list) with a flat list of expected numbers
-- element by element: NaN matches NaN, infinities match exactly, others
-- within tol (1e-6) relative to max(1, |expected|).
function H.assert_close(t, expected, tol)
  tol = tol or 1e-6
  local got = type(t) == 'table' and t or H.vals(t)
  assert.are.equal(#expected, #got)
  for i = 1, #expected do
    local e, g = expected[i], got[i]
    if e ~= e then
      assert(g ~= g, string.format('element %d: expected NaN, got %s', i, tostring(g)))
    elseif e == math.huge or e == -math.huge then
      assert.are.equal(e, g)
    else
      local err = math.abs(g - e) / math.max(1, math.abs(e))
      assert(err <= tol, string.format('element %d: expected %.17g, got %.17g', i, e, g))
    end
  end
end

-- Checks the gradient of a matrix parameter by central differences: after
-- loss():backward(), every param.grad[i][j] must be within tol (1e-6) of
-- (loss at W[i][j] + h - loss at W[i][j] - h) / 2h, h = 1e-6.  loss() gives
-- a scalar Variable from the parameter's current values.
function H.check_matrix_grad(param, loss, tol)
  param:cleargrad()
  loss():backward()
  local W, grad, h = param.array, param.grad, 1e-6
  for i = 0, W.shape[1] - 1 do
    for j = 0, W.shape[2] - 1 do
      local w0 = W:get(i, j)
      W:set(i, j, w0 + h)
      local up = loss().array:item()
      W:set(i, j, w0 - h)
      local down = loss().array:item()
      W:set(i, j, w0)
      assert.near((up - down) / (2 * h), grad:get(i, j), tol or 1e-6)
    end
  end
end

-- Files for the specs that read and write them.
H.exists = fs.exists

-- A new empty folder under /tmp.
function H.tmpdir()
  local d = os.tmpname()
  os.remove(d)
  os.execute("mkdir -p '" .. d .. "'")
  return d
end

-- The repository root: specs run from it (this file is spec/helpers.lua).
local REPO = debug.getinfo(1, 'S').source:match('^@(.-)/?spec/helpers%.lua$')
if REPO == nil or REPO == '' then REPO = '.' end

local function shell_quote(s) return "'" .. tostring(s):gsub("'", "'\\''") .. "'" end

-- A writable mirror of the dataset root `source` (default:
-- $CHAINER_DATASET_ROOT, else ~/.chainer/dataset) under /tmp: its folders
-- made anew, its files linked (scripts/scratch-dataset-root).  Whatever a
-- loader converts, caches or downloads there never reaches the shared data.
function H.scratch_dataset_root(source)
  local cmd = 'bash ' .. shell_quote(REPO .. '/scripts/scratch-dataset-root')
  if source then cmd = cmd .. ' ' .. shell_quote(source) end
  local p = assert(io.popen(cmd .. ' 2>&1'))
  local out = p:read('*a')
  p:close()
  local root = out:match('^(/[^\n]*chainlua%-dataset%-[^\n]*)\n?$')
  assert(root, 'scripts/scratch-dataset-root failed: ' .. out)
  return root
end

-- Points CHAINER_DATASET_ROOT, for this process and the programs it starts,
-- at the scratch mirror of the current root; spec/setup.lua (the busted
-- helper in .busted) does it once before any spec runs.
function H.use_scratch_dataset_root()
  local root = H.scratch_dataset_root()
  require('chainer._libc').setenv('CHAINER_DATASET_ROOT', root)
  return root
end

-- Removes a folder made by tmpdir (nothing outside /tmp).
function H.rmdir(d)
  if d and d:match('^/tmp/') then os.execute("rm -rf '" .. d .. "'") end
end

-- The whole file; fails the spec when it cannot be read.
function H.read_file(path)
  local f = assert(io.open(path, 'rb'))
  local s = f:read('*a')
  f:close()
  return s
end

function H.write_file(path, s)
  local f = assert(io.open(path, 'wb'))
  f:write(s)
  f:close()
end

-- The text the generator `script` writes (a Lua script that takes the path
-- it writes as its last argument, after the arguments `...`); the specs of
-- generated files compare it with the file in the repository.
function H.generator_output(script, ...)
  local tmp = os.tmpname()
  -- the script reads the global `arg` (busted runs specs in their own environment)
  local saved_arg = _G.arg
  _G.arg = { ... }
  _G.arg[#_G.arg + 1] = tmp
  local ok, err = pcall(dofile, script)
  _G.arg = saved_arg
  assert.is_true(ok, tostring(err))
  local text = H.read_file(tmp)
  os.remove(tmp)
  return text
end

-- Whether this process runs under AddressSanitizer (the ASan build's
-- chainlua links libasan, which then shows in the process's mappings).
function H.under_asan()
  local f = io.open('/proc/self/maps', 'r')
  if not f then return false end
  local maps = f:read('*a')
  f:close()
  return maps:find('libasan', 1, true) ~= nil or maps:find('libclang_rt.asan', 1, true) ~= nil
end

-- The interpreter for a child process that loads libchainlua: plain luajit,
-- or under ASan the ASan-linked chainlua of the build (ASan must be the first
-- library a process loads, so a plain luajit child would abort).
function H.lua_interpreter()
  local build = os.getenv('CHAINLUA_BUILD')
  if H.under_asan() and build and io.open(build .. '/chainlua', 'rb') then return build .. '/chainlua' end
  return 'luajit'
end

return H
