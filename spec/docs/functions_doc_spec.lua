-- docs/functions.md is generated from the family pages and the function
-- modules; this spec fails when a function is added without regenerating it
-- (`build/chainlua scripts/gen-functions-doc.lua docs/functions.md`).
describe('docs/functions.md', function()
  it('is up to date with chainer.functions and docs/functions/*.md', function()
    local tmp = os.tmpname()
    -- the script reads the global `arg` (busted runs specs in their own environment)
    local saved_arg = _G.arg
    _G.arg = { tmp }
    local ok, err = pcall(dofile, 'scripts/gen-functions-doc.lua')
    _G.arg = saved_arg
    assert.is_true(ok, tostring(err))
    local function read(p) local f = assert(io.open(p, 'rb')); local s = f:read('*a'); f:close(); return s end
    local want, got = read(tmp), read('docs/functions.md')
    os.remove(tmp)
    assert.are.equal(want, got, 'docs/functions.md is stale: run build/chainlua scripts/gen-functions-doc.lua docs/functions.md')
  end)

  it('gives every function a signature', function()
    for line in io.lines('docs/functions.md') do
      assert.is_nil(line:match('^| `([%w_]+)` |%s*|$'), 'no signature documented for ' .. line)
    end
  end)
end)
