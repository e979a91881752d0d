-- A crash (kill -9) during a snapshot write leaves the temporary file
-- behind; the next run that writes or autoloads snapshots in that folder
-- removes the stale temporaries of its own naming pattern, never a live
-- writer's and never another file.
local chainer = require 'chainer'
local extensions = require 'chainer.training.extensions'
local fs = require 'chainer._fs'
local libc = require 'chainer._libc'
local EH = require 'examples.helpers'
local H = require 'helpers'

-- A trainer as far as the snapshot extension looks at it.
local function fake_trainer(out, iteration)
  return { out = out, updater = { iteration = iteration, epoch = 0 }, serialize = function() end }
end

-- Runs a chainlua child that starts writing snapshot_iter_7 in `dir` and is
-- killed (-9) half-way: after the runtime writer made its own temporary.
local function crash_during_write(dir)
  local script = dir .. '/crash.lua'
  H.write_file(script, string.format([[
local chainer = require 'chainer'
local T = chainer.tensor
local pid = require('chainer._libc').getpid()
local snap = chainer.training.extensions.snapshot({ savefun = function(tmp)
  local f = T.open_hdf5(tmp, 'w')          -- the runtime's temporary: tmp .. '.tmp-XXXXXX'
  f:write('x', T.zeros({ 4 }))
  local g = io.open(tmp, 'wb') g:write('half') g:close()
  os.execute('kill -9 ' .. pid)
end })
snap({ out = %q, updater = { iteration = 7, epoch = 0 }, serialize = function() end })
]], dir))
  -- an inner shell waits for the child, so its 'Killed' notice goes nowhere
  local _, code = EH.run("sh -c '" .. EH.chainlua() .. ' ' .. script .. "; exit $?' 2>/dev/null")
  assert.are_not.equal(0, code)
  os.remove(script)
end

local function temporaries(dir)
  local out = {}
  for _, n in ipairs(fs.listdir(dir)) do if n:find('.tmp-', 1, true) then out[#out + 1] = n end end
  table.sort(out)
  return out
end

describe('stale snapshot temporaries', function()
  local dir
  before_each(function() dir = H.tmpdir() end)
  after_each(function() H.rmdir(dir) end)

  it("a crashed writer's temporaries are removed by the next snapshot write", function()
    crash_during_write(dir)
    local left = temporaries(dir)
    assert.equal(2, #left)                     -- '.snapshot_iter_7.tmp-PID-1' and its '.tmp-XXXXXX'
    assert.matches('^%.snapshot_iter_7%.tmp%-%d+%-1$', left[1])
    assert.matches('^%.snapshot_iter_7%.tmp%-%d+%-1%.tmp%-%w+$', left[2])
    local snap = extensions.snapshot({ savefun = function(tmp) H.write_file(tmp, 'ok') end })
    snap(fake_trainer(dir, 8))
    assert.same({}, temporaries(dir))
    assert.equal('ok', H.read_file(dir .. '/snapshot_iter_8'))
  end)

  it('autoload removes them too, then loads the newest snapshot', function()
    crash_during_write(dir)
    H.write_file(dir .. '/snapshot_iter_5', 'five')
    local loaded
    local snap = extensions.snapshot({ autoload = true })
    local real = chainer.serializers.load_npz
    chainer.serializers.load_npz = function(path) loaded = path end
    local ok, err = pcall(snap.initialize, snap, fake_trainer(dir, 0))
    chainer.serializers.load_npz = real
    assert(ok, err)
    assert.same({}, temporaries(dir))
    assert.equal(dir .. '/snapshot_iter_5', loaded)
  end)

  it("keeps a live writer's temporary, other names and other files; a day-old one goes", function()
    local live = 1                                  -- init: always running
    assert.is_true(libc.process_exists(live))
    local names = {
      live_recent = '.snapshot_iter_3.tmp-' .. live .. '-1',
      live_old = '.snapshot_iter_2.tmp-' .. live .. '-4.tmp-Ab12Cd',
      not_ours = '.model.npz.tmp-999999999-1',       -- another file's temporary
      plain = 'snapshot_iter_1',
      user_tmp = '.snapshot_iter_1.tmp-notes',
    }
    for _, n in pairs(names) do H.write_file(dir .. '/' .. n, 'x') end
    os.execute("touch -d '2 days ago' '" .. dir .. '/' .. names.live_old .. "'")
    local snap = extensions.snapshot({ savefun = function(tmp) H.write_file(tmp, 'ok') end })
    snap(fake_trainer(dir, 9))
    assert.is_true(H.exists(dir .. '/' .. names.live_recent))
    assert.is_false(H.exists(dir .. '/' .. names.live_old))
    assert.is_true(H.exists(dir .. '/' .. names.not_ours))
    assert.is_true(H.exists(dir .. '/' .. names.plain))
    assert.is_true(H.exists(dir .. '/' .. names.user_tmp))
  end)
end)
