-- The chainlua executable: options, the arg table, errors, the Lua path.
local U = require 'host.util'
local q = U.quote

describe('chainlua executable', function()
  local script = os.tmpname() .. '.lua'
  setup(function()
    U.write(script, [[
local t = {}
for i = -4, 4 do t[#t + 1] = tostring(arg[i]) end
print(table.concat(t, ' '))
print(select('#', ...), ...)
]])
  end)
  teardown(function() os.remove(script) end)

  it('is built', function()
    assert.is_true(U.exists(U.exe), 'missing ' .. U.exe .. ' (build first: make build)')
  end)

  -- the arg table and the script's varargs must be exactly luajit's
  local cases = {
    q(script) .. ' a b',
    '-e "x = 1" ' .. q(script) .. ' one',
    '-- ' .. q(script) .. ' -e z',
    '-l string ' .. q(script),
    q(script),
  }
  for _, c in ipairs(cases) do
    it('sets arg and ... like luajit for: ' .. c, function()
      local got, gerr, gst = U.chainlua(c)
      local want, werr, wst = U.run('luajit ' .. c)
      assert.are.equal(0, gst, gerr)
      assert.are.equal(0, wst, werr)
      -- arg[-k] names the interpreter; only that word may differ
      got = got:gsub(U.exe:gsub('%p', '%%%0'), 'INTERP')
      want = want:gsub('luajit', 'INTERP')
      assert.are.equal(want, got)
    end)
  end

  it('sets arg for -e without a script (all negative, arg[0] nil)', function()
    local out = U.chainlua([[-e "print(arg[0], arg[-1], arg[-2], #arg)"]])
    assert.are.equal('nil\tprint(arg[0], arg[-1], arg[-2], #arg)\t-e\t0\n', out)
  end)

  it('runs a script from standard input with -', function()
    local out, err, st = U.chainlua('- u v', { stdin = 'print(arg[0], arg[1], ...)\n' })
    assert.are.equal(0, st, err)
    assert.are.equal('-\tu\tu\tv\n', out)
  end)

  it('gives -e the globals of the REPL (chainer, F, L, optimizers, help)', function()
    local out, err, st = U.chainlua([[-e "print(type(chainer), type(F.relu), type(L.Linear), type(optimizers.Adam), type(help))"]])
    assert.are.equal(0, st, err)
    assert.are.equal('table\tfunction\ttable\ttable\tfunction\n', out)
  end)

  it('runs -e and -l in order and sets the global for -l', function()
    local out, err, st = U.chainlua([[-e "x = 2" -l chainer -e "print(x * 21, chainer.__version__ ~= nil)"]])
    assert.are.equal(0, st, err)
    assert.are.equal('42\ttrue\n', out)
  end)

  it('finds the chainer modules and the library in the process', function()
    local out, err, st = U.chainlua([[-e "local c = require 'chainer'; print(c.__version__, require('chainer._lib').path)"]])
    assert.are.equal(0, st, err)
    assert.matches('^%d+%.%d+%.%d+\tthe running process\n$', out)
  end)

  it('uses the source tree lua/ when run from the build tree', function()
    local out = U.chainlua([[-e "print(package.searchpath('chainer', package.path))"]])
    assert.are.equal(U.root .. '/lua/chainer/init.lua', (out:gsub('\n$', ''):gsub('/%./', '/')))
  end)

  it('keeps LUA_PATH first when it is set and appends its own directories', function()
    local dir = os.tmpname()
    os.remove(dir)
    os.execute('mkdir -p ' .. q(dir))
    U.write(dir .. '/mymod.lua', 'return { answer = 42 }\n')
    local out, err, st = U.chainlua([[-e "print(require('mymod').answer, package.path:find(';;', 1, true) == nil, require('chainer') ~= nil)"]],
      { env = 'LUA_PATH=' .. q(dir .. '/?.lua;;') })
    os.execute('rm -rf ' .. q(dir))
    assert.are.equal(0, st, err)
    assert.are.equal('42\ttrue\ttrue\n', out)
    local p = U.chainlua([[-e "io.write(package.path)"]], { env = 'LUA_PATH=' .. q('/nowhere/?.lua') })
    assert.matches('^/nowhere/%?%.lua;.*chainer', p .. 'chainer')
    assert.is_truthy(p:find('/lua/?/init.lua', 1, true))
  end)

  it('prints the message and a traceback on a script error and exits with 1', function()
    local bad = os.tmpname() .. '.lua'
    U.write(bad, 'local function f() error("kaboom") end\nf()\n')
    local out, err, st = U.chainlua(q(bad))
    os.remove(bad)
    assert.are.equal(1, st)
    assert.are.equal('', out)
    assert.matches('^chainlua: [^\n]*:1: kaboom\nstack traceback:\n', err)
    assert.matches("in function 'f'", err, 1, true)
  end)

  it('reports tensor errors from the runtime with their message', function()
    local _, err, st = U.chainlua([[-e "require('chainer').tensor.zeros{2, 3}:reshape{4}"]])
    assert.are.equal(1, st)
    assert.matches('reshape: cannot reshape a tensor of shape %(2, 3%)', err)
  end)

  it('reports syntax errors and missing files with status 1', function()
    local _, err, st = U.chainlua('-e "x ="')
    assert.are.equal(1, st)
    assert.matches("unexpected symbol near '<eof>'", err, 1, true)
    _, err, st = U.chainlua('/nonexistent/script.lua')
    assert.are.equal(1, st)
    assert.matches('cannot open /nonexistent/script.lua', err, 1, true)
  end)

  it('passes os.exit codes through', function()
    local _, _, st = U.chainlua('-e "os.exit(7)"')
    assert.are.equal(7, st)
  end)

  it('rejects unknown options with the usage text and status 1', function()
    local out, err, st = U.chainlua('-Q')
    assert.are.equal(1, st)
    assert.matches("unrecognized option '%-Q'", err)
    assert.matches('usage: chainlua', err)
    _, err, st = U.chainlua('-e')
    assert.are.equal(1, st)
    assert.matches("'%-e' needs an argument", err)
  end)

  it('prints help with --help and -h', function()
    for _, o in ipairs({ '--help', '-h' }) do
      local out, _, st = U.chainlua(o)
      assert.are.equal(0, st)
      assert.matches('usage: chainlua %[options%] %[script %[args%.%.%.%]%]', out)
      assert.matches('%-i ', out)
    end
  end)

  it('prints versions, BLAS, threads and CUDA with -v and --version', function()
    for _, o in ipairs({ '-v', '--version' }) do
      local out, _, st = U.chainlua(o)
      assert.are.equal(0, st)
      assert.matches('^chainlua %d+%.%d+%.%d+', out)
      assert.matches('\nLuaJIT 2%.1', out)
      assert.matches('\nBLAS: [^\n]+, %d+ threads\n', out)
      assert.matches('\nCUDA: [^\n]+\n$', out)
    end
    local out = U.chainlua('-v -e "print(1)"')
    assert.matches('^chainlua .*\n1\n$', out)
  end)

  it('opens the REPL after the script with -i', function()
    local out, err, st = U.chainlua([[-e "y = 6" -i]], { stdin = 'y * 7\n' })
    assert.are.equal(0, st, err)
    assert.are.equal('42\n', out)
  end)
end)
