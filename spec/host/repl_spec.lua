-- The REPL: driven through a pipe (no line editing, no prompts) and through
-- a real pseudo-terminal with tmux (libedit, prompts, Ctrl-C, Ctrl-D).
local U = require 'host.util'
local q = U.quote

local function repl(input, env)
  return U.chainlua('', { stdin = input, env = env })
end

describe('REPL through a pipe', function()
  it('prints expression values, =expr, and multiple values tab-separated', function()
    local out, err, st = repl('1 + 2\n=10, "a"\n"x", nil, 3\nlocal z = 1\nprint("side effect")\n')
    assert.are.equal(0, st, err)
    assert.are.equal('', err)
    assert.are.equal('3\n10\ta\nx\tnil\t3\nside effect\n', out)
  end)

  it('continues an incomplete chunk on the next lines', function()
    local out, err = repl('function f(a)\n  return a *\n 10\nend\nf(4)\nt = {\n1,\n2}\n#t\n')
    assert.are.equal('', err)
    assert.are.equal('40\n2\n', out)
  end)

  it('prints errors with a traceback and goes on', function()
    local out, err, st = repl('error("oops")\n1 + nil\nx = = 1\n"still here"\n')
    assert.are.equal(0, st)
    assert.are.equal('still here\n', out)
    assert.matches('^stdin:1: oops\nstack traceback:\n', err)
    assert.matches('attempt to perform arithmetic on a nil value', err, 1, true)
    assert.matches("stdin:1: unexpected symbol near '='", err, 1, true)
  end)

  it('preloads chainer (and F, L, optimizers when those modules exist)', function()
    local out, err = repl('type(chainer), chainer.__version__ ~= nil\n' ..
      'type(F) == (package.searchpath("chainer.functions", package.path) and "table" or "nil")\n' ..
      'type(L) == (package.searchpath("chainer.links", package.path) and "table" or "nil")\n' ..
      'type(optimizers) == (package.searchpath("chainer.optimizers", package.path) and "table" or "nil")\n')
    assert.are.equal('', err)
    assert.are.equal('table\ttrue\ntrue\ntrue\ntrue\n', out)
  end)

  it('shows a preload failure that is not a missing module', function()
    local dir = os.tmpname()
    os.remove(dir)
    os.execute('mkdir -p ' .. q(dir .. '/chainer'))
    U.write(dir .. '/chainer/links.lua', 'error("links are broken")\n')
    local out, err = repl('1\n', 'LUA_PATH=' .. q(dir .. '/?.lua;;'))
    os.execute('rm -rf ' .. q(dir))
    assert.are.equal('1\n', out)
    assert.matches('cannot load chainer.links: .*links are broken', err)
  end)

  it('prints shapes, tables, datasets, iterators and links readably', function()
    local out, err = repl('x = chainer.tensor.zeros{2, 3}\nx.shape\n{1, "a", b = {c = true}}\n' ..
      'ds = chainer.datasets.TupleDataset({1, 2, 3}, {4, 5, 6})\nds\n' ..
      'chainer.iterators.SerialIterator(ds, 2).batch_size\nL.Linear(2, 3)\nv = chainer.Variable(x)\nv.grad\n')
    assert.are.equal('', err)
    assert.are.equal('(2, 3)\n{1, "a", b = {c = true}}\nTupleDataset(len=3)\n2\n' ..
      'Linear(in_size=2, out_size=3, nobias=false)\nnil\n', out)
  end)

  it('answers ?obj and help(obj) with the signature and summary from the docs', function()
    local out, err = repl('?F.relu\nhelp(L.Linear)\nx = chainer.tensor.arange(6)\n? x:reshape\n?nosuch.thing\n"next"\n')
    assert.are.equal('', err)
    assert.matches('^F%.relu%(x%)\n  [^\n]*max%(x, 0%)[^\n]*\n  %(docs/functions/activation%.md%)\n', out)
    assert.matches('\nL%.Linear%(in_size, out_size', out)
    assert.matches('\nt:reshape%(shape%)\n', out)
    assert.matches('\nhelp: nosuch%.thing is nil and not in the docs\nnext\n$', out)
  end)

  it('pretty-prints tensors through tostring', function()
    local out, err = repl('chainer.tensor.arange(6):reshape{2, 3}\n')
    assert.are.equal('', err)
    assert.are.equal('tensor([[0, 1, 2],\n        [3, 4, 5]], dtype=int64)\n', out)
  end)

  it('reports runtime errors of tensor functions and goes on', function()
    local out, err = repl('chainer.tensor.zeros{2, 3}:reshape{5}\n"next"\n')
    assert.are.equal('next\n', out)
    assert.matches('reshape: cannot reshape a tensor of shape %(2, 3%)', err)
  end)

  it('survives a batch of bad inputs, each reported, the next line still evaluated', function()
    local npz = os.tmpname()
    U.write(npz, 'PK\3\4 this is not a zip archive')
    -- pairs of (bad input, marker): every marker must come out, in order
    local cases = {
      { 'F.linear(chainer.Variable(T.ones{2, 3}), chainer.Variable(T.ones{4, 5}))',
        'linear: x has 3 input features' },
      { 'F.matmul(T.ones{2, 3}, T.ones{4, 5})', 'matmul: shapes (2, 3) and (4, 5) do not match' },
      { 'F.concat({T.ones{2, 3}, T.ones{3, 4}}, 1)', 'concatenate: tensor 1 has shape (3, 4)' },
      { 'T.load_npz(' .. string.format('%q', npz) .. ')', "load_npz: '" .. npz .. "'" },
      { 'chainer.serializers.load_hdf5(' .. string.format('%q', npz) .. ', chainer.links.Linear(2, 3))',
        "'" .. npz .. "' is not an HDF5 file" },
      { 'T.ones{2, 3}:sum{axis = 5}', 'sum: axis 5 is out of range for a 2-d tensor (expected -2..1)' },
      { 'F.softmax(T.ones{2, 3}, -3)', 'axis -3 is out of range' },
      { 'F.relu(nil)', 'relu: x must be a Variable or a tensor (got nil)' },
      { 'T.add(nil, 1)', 'add' },
      { 't = T.ones{2, 3}; t:free(); print(t + 1)', "add: argument 'a' was freed" },
      { 't', 'tensor(<' },                             -- printing a freed tensor
      { 'T.zeros{1e12, 1e12}', 'empty: shape (1000000000000, 1000000000000) is too big' },
      { 'function runaway(n) return runaway(n + 1) + 1 end; runaway(1)', 'stack overflow' },
      { 'setmetatable({}, {__index = function(t, k) return t[k] end}).x', 'stack overflow' },
      { 'Bad = chainer.FunctionNode:extend("Bad"); function Bad:forward(xs) return { xs[1] * 2 } end; ' ..
        'function Bad:backward(i, gy) error("backward exploded") end; ' ..
        'y = Bad():apply({ chainer.Variable(T.ones{1}) })[1]; y:backward()', 'backward exploded' },
      { 'error(setmetatable({}, {__tostring = function() error("tostring exploded") end}))',
        '(error object is a table value)' },
      { 'coroutine.wrap(function() F.sum(nil) end)()', 'sum: x must be a Variable or a tensor (got nil)' },
      -- help and ?obj on things that do not cooperate
      { '?nosuch:method', 'help: nosuch is nil' },
      { 'help(setmetatable({}, {__index = function() error("index exploded") end}), "m")', 'has no method m' },
      { 'help(setmetatable({}, {__tostring = function() error("tostring exploded") end}))',
        'help: no documentation for ? (table)' },
      { '?(', 'help: no documentation for ( (string)' },
      { 'setmetatable({}, {__tostring = function() error("tostring exploded") end})', '<tostring failed:' },
    }
    local input, expect_out = { 'T = chainer.tensor' }, {}
    for i, c in ipairs(cases) do
      input[#input + 1] = c[1]
      input[#input + 1] = '"ok ' .. i .. '"'
      expect_out[#expect_out + 1] = 'ok ' .. i
    end
    input[#input + 1] = '(T.ones{2} + 1):sum():item()'    -- the runtime still works
    local out, err, st = repl(table.concat(input, '\n') .. '\n')
    os.remove(npz)
    assert.are.equal(0, st, err)
    local lines = {}
    for l in out:gmatch('[^\n]+') do lines[#lines + 1] = l end
    -- the freed tensor prints as tensor(<its error>, dtype=float32)
    local kept = {}
    for _, l in ipairs(lines) do
      if l:find('^tensor%(') then
        assert.matches('totable: the tensor was freed %(tensor:free%(%) was called on it%)>, dtype=float32%)$', l)
      elseif l:find('^help: ') or l:find('^<tostring failed: ') then
        -- help's answers and a value whose tostring fails print on stdout
      else
        kept[#kept + 1] = l
      end
    end
    expect_out[#expect_out + 1] = '4'
    assert.are.same(expect_out, kept)
    -- (the freed tensor's message is part of its printed value, on stdout)
    for _, c in ipairs(cases) do
      assert.is_truthy((err .. out):find(c[2], 1, true), 'missing error: ' .. c[2] .. '\n' .. err)
    end
    assert.is_nil(err:find('AddressSanitizer', 1, true))
    assert.is_nil(err:find('runtime error', 1, true))
  end)
end)

-- tmux drives a real terminal: send-keys types, capture-pane reads the screen
local has_tmux = os.execute('command -v tmux > /dev/null 2>&1') == 0

describe('REPL on a terminal (tmux)', function()
  if not has_tmux then
    pending('tmux is not installed: terminal REPL checks skipped (apt-get install tmux)')
    return
  end
  local sock = 'chainlua-spec-' .. tostring(os.time()) .. '-' .. tostring(math.random(1e6))
  local home = os.tmpname()
  local tmux = 'tmux -L ' .. sock .. ' '

  local function sh(cmd) return os.execute(cmd .. ' > /dev/null 2>&1') end
  local function screen()
    local out = U.run(tmux .. 'capture-pane -p -t repl')
    return out
  end
  -- waits until the screen matches pattern (plain find), up to `secs`
  local function wait_for(pattern, secs)
    local deadline = os.time() + (secs or 10)
    repeat
      local s = screen()
      if s:find(pattern, 1, true) then return s end
      sh('sleep 0.1')
    until os.time() > deadline
    return screen()
  end
  local function type_line(text)
    sh(tmux .. 'send-keys -t repl -l ' .. q(text))
    sh(tmux .. 'send-keys -t repl Enter')
  end

  setup(function()
    os.remove(home)
    sh('mkdir -p ' .. q(home))
    sh(tmux .. 'new-session -d -s repl -x 100 -y 50 ' ..
      q('env HOME=' .. q(home) .. ' ' .. q(U.exe) .. '; echo REPL-EXITED-$?; sleep 30'))
  end)
  teardown(function()
    sh(tmux .. 'kill-server')
    sh('rm -rf ' .. q(home))
  end)

  it('shows the banner and evaluates an expression', function()
    local s = wait_for('> ')
    assert.matches('chainlua %d+%.%d+%.%d+', s)
    type_line('6 * 7')
    s = wait_for('42')
    assert.matches('\n> 6 %* 7\n42\n', s)
  end)

  it('accepts a multi-line function definition with the >> prompt', function()
    type_line('function sq(x)')
    type_line('  return x * x')
    type_line('end')
    type_line('sq(12)')
    local s = wait_for('144')
    assert.matches('>> +return x %* x\n>> end\n> sq%(12%)\n144\n', s)
  end)

  it('prints an error with its traceback and the next line still works', function()
    type_line('error("boom")')
    type_line('sq(3) + 1')
    local s = wait_for('\n10\n')
    assert.matches('stdin:1: boom\nstack traceback:', s)
    assert.matches('\n10\n', s)
  end)

  it('Ctrl-C drops the line being typed and interrupts a running chunk', function()
    sh(tmux .. 'send-keys -t repl -l ' .. q('half typed'))
    sh(tmux .. 'send-keys -t repl C-c')
    type_line('local T = chainer.tensor; while true do local t = T.zeros{2} end')
    sh('sleep 1')
    sh(tmux .. 'send-keys -t repl C-c')
    local s = wait_for('interrupted')
    assert.matches('interrupted', s, 1, true)
    type_line('"alive"')
    s = wait_for('\nalive\n')
    assert.matches('\nalive\n', s)
    -- the dropped line was never run (it would be a syntax error)
    assert.is_nil(s:find("near 'typed'", 1, true))
  end)

  it('Tab completes fields, methods and file names in strings; ?obj prints help', function()
    sh(tmux .. 'send-keys -t repl -l ' .. q('chainer.tensor.ara'))
    sh(tmux .. 'send-keys -t repl Tab')
    type_line('(6)')
    local s = wait_for('[0, 1, 2, 3, 4, 5]')
    assert.matches('> chainer.tensor.arange%(6%)\n', s)
    type_line('xt = chainer.tensor.arange(6)')
    sh(tmux .. 'send-keys -t repl -l ' .. q('xt:resh'))
    sh(tmux .. 'send-keys -t repl Tab')
    type_line('{3, 2}:sum()')
    s = wait_for('> xt:reshape{3, 2}:sum()')
    -- Tab twice lists the candidates
    sh(tmux .. 'send-keys -t repl -l ' .. q('xt:re'))
    sh(tmux .. 'send-keys -t repl Tab')
    sh(tmux .. 'send-keys -t repl Tab')
    s = wait_for('remainder')
    assert.matches('reshape', s, 1, true)
    sh(tmux .. 'send-keys -t repl C-u')
    -- a file name inside a string
    sh(tmux .. 'send-keys -t repl -l ' .. q('io.open("' .. U.root .. '/examples/dem'))
    sh(tmux .. 'send-keys -t repl Tab')
    type_line('"):read(2)')
    s = wait_for('examples/demo.lua"):read(2)')
    type_line('?F.relu')
    s = wait_for('activation.md')
    assert.matches('\nF%.relu%(x%)\n', s)
    type_line('"after help"')
    s = wait_for('\nafter help\n')
    assert.matches('\nafter help\n', s)
  end)

  it('exits on Ctrl-D and saves the history', function()
    sh(tmux .. 'send-keys -t repl C-d')
    local s = wait_for('REPL-EXITED-')
    assert.matches('REPL%-EXITED%-0', s)
    local hist = U.read(home .. '/.chainlua_history') or ''
    assert.matches('sq%(12%)', hist)
    assert.matches('"alive"', hist)
  end)
end)
