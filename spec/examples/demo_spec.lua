-- examples/demo.lua (what `make demo` runs) and glance's options: --help
-- prints the usage without training, the progress bar shows unless
-- --quiet, and the demo ends by saying where its plots and log are.
local H = require 'examples.helpers'
local example, example_ok, tmpdir = H.example, H.example_ok, H.tmpdir

describe('#examples examples/demo.lua', function()
  it('prints its usage for --help and trains nothing', function()
    local text = example_ok('examples/demo.lua --help')
    assert.matches('^usage: chainlua examples/demo.lua %[options%]\n', text)
    assert.matches('--out OUT', text, 1, true)
    assert.matches('--quiet', text, 1, true)
    assert.is_nil(text:find('main/loss', 1, true))
  end)

  it('shows a progress bar and ends with where the plots and the log are', function()
    local out = tmpdir()
    -- (--noplot is not a demo option: an unknown option is an error)
    local _, code = example('examples/demo.lua --epoch 1 --noplot --out ' .. out)
    assert.are_not.equal(0, code)
    local text = example_ok('examples/demo.lua --epoch 1 --out ' .. out)
    assert.matches('this epoch [', text, 1, true)
    assert.matches('\nTraining log %(JSON%): ' .. out:gsub('%p', '%%%0') .. '/log\nComputational graph: [^\n]*cg%.dot\n$', text)
    assert.is_truthy(io.open(out .. '/log'))
    H.rmdir(out)
  end)
end)

describe('#examples examples/glance/glance.lua --quiet', function()
  it('leaves out the progress bar and keeps the report table', function()
    local out = tmpdir()
    local text = example_ok('examples/glance/glance.lua --epoch 1 --noplot --quiet --out ' .. out)
    assert.is_nil(text:find('this epoch', 1, true))
    assert.is_nil(text:find('iters/sec', 1, true))
    assert.matches('\n1 +[%d.]+ +[%d.]+', text)
    assert.matches('\nPredicted [EP][a-z]+, Actual [EP][a-z]+\n$', text)
    H.rmdir(out)
  end)
end)
