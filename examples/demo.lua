-- examples/demo.lua: what `make demo` runs -- Chainer's "at a Glance"
-- example (examples/glance/glance.lua): an MLP learns to tell edible from
-- poisonous mushrooms in 50 epochs (about 15 seconds on 2 cores), printing
-- Chainer's report table, then writes its plots.
local here = (arg and arg[0] or ''):match('^(.*)/[^/]*$') or 'examples'
local out = os.getenv('CHAINLUA_DEMO_OUT') or 'result/glance'
local script = here .. '/glance/glance.lua'

print('chainlua demo: examples/glance/glance.lua (Chainer at a Glance, mushroom classification)')
print('')
local saved = arg
arg = { [0] = script, '--out', out }
dofile(script)
arg = saved

local cwd = os.getenv('PWD') or '.'
local abs = out:sub(1, 1) == '/' and out or (cwd .. '/' .. out)
print('')
print('Plots:')
for _, f in ipairs({ 'loss.png', 'accuracy.png', 'loss.svg', 'accuracy.svg' }) do
  local fh = io.open(abs .. '/' .. f, 'rb')
  if fh then fh:close() print('  ' .. abs .. '/' .. f) end
end
print('Training log (JSON): ' .. abs .. '/log')
print('Computational graph: ' .. abs .. '/cg.dot')
