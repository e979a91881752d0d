-- Adaptive threads (docs/threads.md): while another process keeps one of
-- our cores busy, parallel work runs on one thread instead of waiting for a
-- teammate that the neighbour pushed off its core.  The decisions
-- themselves are tested with made-up machines in tests/c/test_busy_guard.c;
-- here, the API, the environment, and one real neighbour.
local chainer = require 'chainer'
local U = require 'host.util'
local helpers = require 'helpers'
local q = U.quote

-- the first two CPUs this process may use, or nil
local function two_cpus()
  local status = U.read('/proc/self/status') or ''
  local list = status:match('Cpus_allowed_list:%s*([%d,%-]+)')
  if not list then return nil end
  local cpus = {}
  for part in list:gmatch('[^,]+') do
    local a, b = part:match('^(%d+)%-(%d+)$')
    a, b = tonumber(a or part), tonumber(b or part)
    for c = a, b do
      cpus[#cpus + 1] = c
      if #cpus == 2 then return cpus end
    end
  end
  return nil
end

local function have(cmd) return os.execute('command -v ' .. cmd .. ' > /dev/null 2>&1') == 0 end

describe('adaptive threads', function()
  it('is controlled by set_adaptive_threads(boolean) and reports the count in use', function()
    local n = chainer.get_num_threads()
    local used = chainer.get_threads_in_use()
    assert.is_true(used >= 1 and used <= n)
    helpers.errors_with(function() chainer.set_adaptive_threads('yes') end, 'set_adaptive_threads',
      'boolean', 'string')
    chainer.set_adaptive_threads(false)
    assert.are.equal(n, chainer.get_threads_in_use())
    chainer.set_adaptive_threads(true)
    assert.are.equal(n, chainer.get_num_threads())
  end)

  it('leaves the environment and libgomp\'s wait as the user gave them (one start, no re-exec)', function()
    local out, err, st = U.run('env -u GOMP_SPINCOUNT -u OMP_WAIT_POLICY OMP_DISPLAY_ENV=verbose ' .. q(U.exe)
      .. ' -e ' .. q('print(tostring(os.getenv("GOMP_SPINCOUNT")))'))
    assert.are.equal(0, st, err)
    assert.are.equal('nil\n', out)
    local reports = select(2, err:gsub('OPENMP DISPLAY ENVIRONMENT BEGIN', ''))
    assert.are.equal(1, reports, err)
    assert.truthy(err:find("GOMP_SPINCOUNT = '300000'", 1, true), err)
  end)

  -- parallel work for a second or two on two threads, then the count in use
  local work = 'local chainer = require "chainer"; local T = chainer.tensor; chainer.set_num_threads(2); '
    .. 'local x = T.ones({ 1000000 }); for _ = 1, 1500 do x = x * 0.5 + 0.5 end; '
    .. 'io.write(chainer.get_threads_in_use(), " ", chainer.get_num_threads(), "\\n")'

  it('drops to one thread next to a process that keeps one of our two cores busy', function()
    local cpus = two_cpus()
    if not cpus or not have('taskset') then
      pending('needs two CPUs and taskset')
      return
    end
    local neighbour = 'taskset -c ' .. cpus[2] .. ' sh -c "while :; do :; done" & nb=$!; '
    local run = function(env)
      return U.run('sh -c ' .. q(neighbour .. env .. ' taskset -c ' .. cpus[1] .. ',' .. cpus[2] .. ' '
        .. q(U.exe) .. ' -e ' .. q(work) .. '; st=$?; kill $nb; exit $st'))
    end
    local out, err, st = run('CHAINLUA_ADAPTIVE_THREADS=verbose')
    assert.are.equal(0, st, err)
    assert.are.equal('1 2\n', out, err)
    assert.truthy(err:find('chainlua: adaptive threads: cores busy, one thread', 1, true), err)
    -- turned off, the count stays whatever the machine does
    out, err, st = run('CHAINLUA_ADAPTIVE_THREADS=0')
    assert.are.equal(0, st, err)
    assert.are.equal('2 2\n', out, err)
  end)
end)
