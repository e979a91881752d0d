-- docs/functions.md is generated from the family pages and the function
-- modules; this spec fails when a function is added without regenerating it
-- (`build/chainlua scripts/gen-functions-doc.lua docs/functions.md`).
local helpers = require 'helpers'

describe('docs/functions.md', function()
  it('is up to date with chainer.functions and docs/functions/*.md', function()
    local want = helpers.generator_output('scripts/gen-functions-doc.lua')
    local got = helpers.read_file('docs/functions.md')
    assert.are.equal(want, got, 'docs/functions.md is stale: run build/chainlua scripts/gen-functions-doc.lua docs/functions.md')
  end)

  it('gives every function a signature', function()
    for line in io.lines('docs/functions.md') do
      assert.is_nil(line:match('^| `([%w_]+)` |%s*|$'), 'no signature documented for ' .. line)
    end
  end)
end)
