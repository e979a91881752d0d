-- utils/imgproc.lua: Chainer's chainer.utils.imgproc.
--   oversample(images, crop_dims): images (N, C, H, W) -> (10N, C, h, w), for
--   each image the crops at the top-left, top-right, bottom-left,
--   bottom-right corners and the centre (offset floor(H/2 - h/2)), then the
--   same five mirrored left-right.  Used by the model zoo's predict.
local T = require 'chainer.tensor'

local M = {}

function M.oversample(images, crop_dims)
  if not T.is_tensor(images) or images.ndim ~= 4 then
    error('oversample: images must be a (N, C, H, W) tensor (got ' ..
      (T.is_tensor(images) and (images.ndim .. '-d tensor') or type(images)) .. ')', 2)
  end
  if type(crop_dims) ~= 'table' or type(crop_dims[1]) ~= 'number' or type(crop_dims[2]) ~= 'number' then
    error('oversample: crop_dims must be {height, width}', 2)
  end
  local s = images.shape
  local H, W = s[3], s[4]
  local h, w = crop_dims[1], crop_dims[2]
  if h < 1 or w < 1 or h > H or w > W or h % 1 ~= 0 or w % 1 ~= 0 then
    error(string.format('oversample: crop_dims {%s, %s} must be integers within the image size %dx%d',
      tostring(h), tostring(w), H, W), 2)
  end
  local corners = { { 0, 0 }, { 0, W - w }, { H - h, 0 }, { H - h, W - w },
    { math.floor(H / 2 - h / 2), math.floor(W / 2 - w / 2) } }
  local crops = {}
  for n = 0, s[1] - 1 do
    local img = images:select(n)
    local five = {}
    for i, c in ipairs(corners) do
      five[i] = img:slice({ nil, nil }, { c[1], c[1] + h }, { c[2], c[2] + w })
      crops[#crops + 1] = five[i]
    end
    for i = 1, 5 do crops[#crops + 1] = five[i]:flip(2) end
  end
  return T.stack(crops, 0)
end

return M
