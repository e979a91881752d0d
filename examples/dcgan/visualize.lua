-- examples/dcgan/visualize.lua: out_generated_image(gen, dis, rows, cols,
-- seed, dst) -> a trainer extension that writes a rows x cols grid of
-- generated images to <dst>/preview/image<iteration, 8 digits>.png.
--
-- The latent vectors come from a fixed seed, so successive previews show
-- the same z decoded by the improving generator; the RNG state of the
-- training is saved and restored around it.  The generator runs in test
-- mode (BatchNormalization uses its running averages) without a graph.
local chainer = require 'chainer'
local T = chainer.tensor
local training = require 'chainer.training'
local images = require 'chainer.datasets.image_dataset'

local M = {}

-- x: (N, C, H, W) in [0, 1] -> (rows*H, cols*W[, C]) uint8 grid, row-major.
function M.tile(x, rows, cols)
  local s = x.shape
  local c, h, w = s[2], s[3], s[4]
  local g = (x * 255):clip(0, 255):astype('uint8')
  g = g:reshape({ rows, cols, c, h, w }):transpose(0, 3, 1, 4, 2):contiguous()
  if c == 1 then return g:reshape({ rows * h, cols * w }) end
  return g:reshape({ rows * h, cols * w, c })
end

function M.out_generated_image(gen, dis, rows, cols, seed, dst)
  return training.make_extension({ name = 'out_generated_image' }, function(trainer)
    local n = rows * cols
    local state = T.random.get_state()
    T.random.seed(seed)
    local z = gen:make_hidden(n)
    T.random.set_state(state)
    local x = chainer.using_config('train', false, function()
      return chainer.no_backprop_mode(function() return gen(chainer.Variable(z)) end)
    end)
    local grid = M.tile(x.array:to_cpu(), rows, cols)
    local dir = dst .. '/preview'
    os.execute("mkdir -p '" .. dir .. "'")
    images.write_image(string.format('%s/image%08d.png', dir, trainer.updater.iteration), grid)
  end)
end

return M
