-- examples/demo.lua: what `make demo` runs -- Chainer's "at a Glance"
-- example (examples/glance/glance.lua): an MLP learns to tell edible from
-- poisonous mushrooms in 50 epochs (a few seconds: see examples/glance/README.md),
-- printing Chainer's report table under a progress bar, then says where its
-- plots and training log are.
local here = (arg and arg[0] or ''):match('^(.*)/[^/]*$') or 'examples'
local script = here .. '/glance/glance.lua'

local ap = require('chainer.utils.argparse')(
  'The chainlua demo: trains the MLP of Chainer\'s "Chainer at a Glance" (mushroom classification,\n' ..
  'examples/glance/glance.lua) and writes its plots and log.')
ap.prog = 'chainlua examples/demo.lua'
ap:option('--out', '-o', { default = os.getenv('CHAINLUA_DEMO_OUT') or 'result/glance',
  help = 'Directory for the plots, the log and the snapshots' })
ap:option('--epoch', '-e', { type = 'number', default = 50, help = 'Number of sweeps over the dataset' })
ap:flag('--quiet', { help = 'No progress bar (the report table is still printed)' })
local args = ap:parse(arg)

print('chainlua demo: examples/glance/glance.lua (Chainer at a Glance, mushroom classification)')
print('')
local saved = arg
arg = { [0] = script, '--out', args.out, '--epoch', tostring(args.epoch) }
if args.quiet then arg[#arg + 1] = '--quiet' end
dofile(script)
arg = saved

local cwd = os.getenv('PWD') or '.'
local abs = args.out:sub(1, 1) == '/' and args.out or (cwd .. '/' .. args.out)
print('')
print('Plots:')
for _, f in ipairs({ 'loss.png', 'accuracy.png', 'loss.svg', 'accuracy.svg' }) do
  local fh = io.open(abs .. '/' .. f, 'rb')
  if fh then fh:close() print('  ' .. abs .. '/' .. f) end
end
print('Training log (JSON): ' .. abs .. '/log')
print('Computational graph: ' .. abs .. '/cg.dot')
