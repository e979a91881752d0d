-- docs/api-coverage.md is what scripts/api-coverage.lua writes from the
-- committed list of Chainer 7.8.1's names and chainlua as it is now: a name
-- added (or removed) without regenerating the page fails here.  Regenerate
-- with scripts/api-coverage (it needs no Chainer for this step).
local function chainlua_exe()
  local build = os.getenv('CHAINLUA_BUILD')
  if build and build ~= '' then return build .. '/chainlua' end
  local lib = os.getenv('CHAINLUA_LIB')
  return (lib and lib:match('^(.*)/[^/]*$') or 'build') .. '/chainlua'
end

describe('docs/api-coverage.md', function()
  it('matches chainlua and scripts/api-coverage-names.tsv (else: run scripts/api-coverage)', function()
    local cmd = string.format("LUA_PATH='lua/?.lua;lua/?/init.lua;;' %s scripts/api-coverage.lua " ..
      'scripts/api-coverage-names.tsv docs/api-coverage.md --check 2>&1', chainlua_exe())
    local p = assert(io.popen(cmd))
    local out = p:read('*a')
    local ok = p:close()
    assert.is_truthy(out:find('is up to date', 1, true), out)
    assert.is_truthy(ok)
  end)
  it('lists every module of the audit with its counts', function()
    local f = assert(io.open('docs/api-coverage.md'))
    local text = f:read('*a')
    f:close()
    for _, m in ipairs { 'chainer', 'chainer.functions', 'chainer.links', 'chainer.training.extensions',
      'chainer.backends.cuda', 'chainermn' } do
      assert.is_truthy(text:find('| `' .. m .. '` |', 1, true), m)
    end
  end)
end)
