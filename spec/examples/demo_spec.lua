-- examples/demo.lua (what `make demo` runs) and glance's options: --help
-- prints the usage without training, the progress bar shows unless
-- --quiet, and the demo ends by saying where its plots and log are.
local H = require 'examples.helpers'
local chainlua, run, tmpdir = H.chainlua, H.run, H.tmpdir

describe('#examples examples/demo.lua', function()
  it('prints its usage for --help and trains nothing', function()
    local text, code = run(chainlua() .. ' examples/demo.lua --help')
    assert.are.equal(0, code, text)
    assert.matches('^usage: chainlua examples/demo.lua %[options%]\n', text)
    assert.matches('--out OUT', text, 1, true)
    assert.matches('--quiet', text, 1, true)
    assert.is_nil(text:find('main/loss', 1, true))
  end)

  it('shows a progress bar and ends with where the plots and the log are', function()
    local out = tmpdir()
    local text, code = run(chainlua() .. ' examples/demo.lua --epoch 1 --noplot --out ' .. out)
    -- (--noplot is not a demo option: an unknown option is an error)
    assert.are_not.equal(0, code)
    text, code = run(chainlua() .. ' examples/demo.lua --epoch 1 --out ' .. out)
    assert.are.equal(0, code, text)
    assert.matches('this epoch [', text, 1, true)
    assert.matches('\nTraining log %(JSON%): ' .. out:gsub('%p', '%%%0') .. '/log\nComputational graph: [^\n]*cg%.dot\n$', text)
    assert.is_truthy(io.open(out .. '/log'))
    os.execute("rm -rf '" .. out .. "'")
  end)
end)

describe('#examples examples/glance/glance.lua --quiet', function()
  it('leaves out the progress bar and keeps the report table', function()
    local out = tmpdir()
    local text, code = run(chainlua() .. ' examples/glance/glance.lua --epoch 1 --noplot --quiet --out ' .. out)
    assert.are.equal(0, code, text)
    assert.is_nil(text:find('this epoch', 1, true))
    assert.is_nil(text:find('iters/sec', 1, true))
    assert.matches('\n1 +[%d.]+ +[%d.]+', text)
    assert.matches('\nPredicted [EP][a-z]+, Actual [EP][a-z]+\n$', text)
    os.execute("rm -rf '" .. out .. "'")
  end)
end)
