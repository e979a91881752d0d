-- testing/random.lua: chainer.testing.fix_random and generate_seed.
--
-- fix_random runs tests with the random streams seeded to a fixed value and
-- puts the streams back as they were afterwards, as Chainer's decorator does
-- for NumPy's and CuPy's generators:
--
--   it('draws the same numbers every run', testing.fix_random(function()
--     local x = T.random.normal(0, 1, { 3 })
--   end))
--
--   describe('a suite', function()
--     testing.fix_random()       -- every test of this block (before_each/after_each)
--     it(...)
--   end)
--
-- The streams are chainer.tensor.random's (the CPU's and every GPU's); Lua's
-- own math.random is neither seeded nor restored.  Scopes nest: only the
-- outermost one seeds and restores.  The seed is 100, as Chainer's, unless
-- CHAINER_TEST_RANDOM_NONDETERMINISTIC=1, which seeds from the clock.
local T = require 'chainer.tensor'

local M = {}

local FIXED_SEED = 100
local MAX_DEVICES = 64       -- tensor.random keeps a state for the CPU and GPUs 0..63

local depth = 0              -- open fix_random scopes
local saved                  -- the states the outermost scope found

local function setup()
  if depth == 0 then
    saved = {}
    for d = -1, MAX_DEVICES - 1 do saved[d] = T.random.get_state(d) end
    if os.getenv('CHAINER_TEST_RANDOM_NONDETERMINISTIC') == '1' then
      T.random.seed(math.floor(os.time() + os.clock() * 1e6) % 4294967296)
    else
      T.random.seed(FIXED_SEED)
    end
  end
  depth = depth + 1
end

local function teardown()
  if depth == 0 then error('fix_random: teardown without a setup', 3) end
  depth = depth - 1
  if depth == 0 then
    for d = -1, MAX_DEVICES - 1 do T.random.set_state(saved[d], d) end
    saved = nil
  end
end

-- fix_random(fn) -> a function running fn(...) inside a fixed-seed scope
-- (for it/before_each bodies); fix_random() inside a describe block wraps
-- each of its tests instead (busted's before_each/after_each).
function M.fix_random(fn)
  if fn == nil then
    -- busted's hooks, from the describe block's environment (busted gives a
    -- spec file's functions one that holds them)
    local env = getfenv(2)
    local before, after = env.before_each, env.after_each
    if type(before) ~= 'function' or type(after) ~= 'function' then
      error('fix_random: called without a function outside a busted describe block ' ..
        '(pass the test function: fix_random(function() ... end))', 2)
    end
    before(setup)
    after(teardown)
    return
  end
  if type(fn) ~= 'function' then
    error(string.format('fix_random: expected a test function or nothing (got %s)', type(fn)), 2)
  end
  return function(...)
    setup()
    local res = { pcall(fn, ...) }
    teardown()
    if not res[1] then error(res[2], 0) end
    return unpack(res, 2, table.maxn(res))
  end
end

-- generate_seed() -> an integer in [0, 2^32 - 1) drawn from the fixed
-- stream; only inside a fix_random scope, as Chainer's.
function M.generate_seed()
  if depth == 0 then
    error('generate_seed: random is not set up (call it inside a fix_random scope)', 2)
  end
  return T.random.randint(0, 4294967295, {}, 'int64'):item()
end

-- Whether a fix_random scope is open (for specs of this module).
function M.is_fixed() return depth > 0 end

return M
