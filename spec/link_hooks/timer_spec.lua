-- link_hooks.TimerHook: call history, nesting, summary and report layout.
local chainer = require 'chainer'
local H = require 'helpers'
local T = chainer.tensor
local L = chainer.links
local F = chainer.functions
local TimerHook = chainer.link_hooks.TimerHook

local MLP = chainer.Chain:extend('MLP')
function MLP:init()
  self.l1 = L.Linear(3, 4)
  self.l2 = L.Linear(4, 2)
end
function MLP:forward(x) return self.l2(F.relu(self.l1(x))) end

local function run_twice()
  local hook = TimerHook()
  local m = MLP()
  hook:scope(function()
    m(T.ones({ 1, 3 }))
    m(T.ones({ 1, 3 }))
  end)
  return hook
end

describe('TimerHook', function()
  it('records every link call, inner ones first, and totals the outermost calls only', function()
    local hook = run_twice()
    local names = {}
    for i, e in ipairs(hook.call_history) do names[i] = e[1] end
    assert.same({ 'Linear', 'Linear', 'MLP', 'Linear', 'Linear', 'MLP' }, names)
    local h = hook.call_history
    for _, e in ipairs(h) do assert.is_true(e[2] >= 0) end
    assert.equal(h[3][2] + h[6][2], hook:total_time())
    assert.is_true(h[3][2] >= h[1][2] + h[2][2])   -- the MLP's time contains its links'
  end)

  it('summarizes by link name in first-seen order', function()
    local hook = run_twice()
    local s = hook:summary()
    assert.same({ 'Linear', 'MLP' }, s.names)
    assert.equal(4, s.Linear.occurrence)
    assert.equal(2, s.MLP.occurrence)
    local h = hook.call_history
    assert.near(h[1][2] + h[2][2] + h[4][2] + h[5][2], s.Linear.elapsed_time, 1e-12)
  end)

  it('prints a right-aligned table in the chosen unit', function()
    local hook = run_twice()
    local text = hook:print_report('us', false)
    local lines = {}
    for line in text:gmatch('[^\n]+') do lines[#lines + 1] = line end
    assert.equal(3, #lines)
    assert.truthy(lines[1]:find('LinkName  ElapsedTime  Occurrence', 1, true))
    for _, line in ipairs(lines) do assert.equal(#lines[1], #line) end
    local s = hook:summary()
    assert.equal(string.format('%.2fus', s.Linear.elapsed_time * 1e6), lines[2]:match('(%S+us)'))
    assert.truthy(lines[2]:match('^%s*Linear%s'))
    assert.truthy(lines[2]:match('%s4$'))
    assert.truthy(lines[3]:match('^%s*MLP%s.*%s2$'))
    for _, unit in ipairs { 'sec', 'ms', 'ns' } do
      assert.truthy(hook:print_report(unit, false):find('%d' .. unit))
    end
    -- 'auto': the unit in which the largest time is >= 1
    local auto = hook:print_report(nil, false)
    local big = s.MLP.elapsed_time
    local unit = big >= 1 and 'sec' or big >= 1e-3 and 'ms' or big >= 1e-6 and 'us' or 'ns'
    assert.truthy(auto:find('%d' .. unit))
    assert.truthy(hook:print_report('auto_foreach', false):find('LinkName', 1, true))
  end)

  it('writes to a file and rejects unknown units', function()
    local hook = run_twice()
    local path = os.tmpname()
    local f = io.open(path, 'w')
    local text = hook:print_report('ms', f)
    f:close()
    f = io.open(path)
    assert.equal(text, f:read('*a'))
    f:close()
    os.remove(path)
    H.errors_with(function() hook:print_report('hours', false) end, 'print_report', 'hours')
  end)

  it('works as a local hook of one link', function()
    local hook = TimerHook()
    local m = MLP()
    m.l1:add_hook(hook)
    m(T.ones({ 1, 3 }))
    assert.equal(1, #hook.call_history)
    assert.equal('Linear', hook.call_history[1][1])
    assert.equal(hook.call_history[1][2], hook:total_time())
  end)
end)
