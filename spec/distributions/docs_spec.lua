-- docs/distributions.md: the VAE example runs and its gradients reach the
-- encoder; the first example's claims hold.
local read = require('helpers').read_file

describe('docs/distributions.md', function()
  it('has a VAE example that runs and trains the encoder through the sample', function()
    local page = read('docs/distributions.md')
    local section = page:match('## Example: a VAE%-style loss(.-)\n## ')
    local code = section:match('```lua\n(.-)```')
    local chunk = assert(load(code .. '\nreturn loss, encoder, decoder', 'vae example'))
    local loss, encoder, decoder = chunk()
    assert.is_true(loss.array:item() > 0)
    for _, link in ipairs({ encoder, decoder }) do
      local g = link.W.grad
      assert.is_not_nil(g)
      assert.is_true(require('chainer.tensor').sum(g * g):item() > 0)
    end
  end)

  it('has a first example whose shapes are as stated', function()
    local page = read('docs/distributions.md')
    local code = page:match('```lua\n(.-)```')
    code = code:gsub('print%b()', '')   -- quiet
    local chunk = assert(load(code .. '\nreturn d, s10, s45, kl'))
    local d, s10, s45, kl = chunk()
    assert.are.same({ 2 }, d.batch_shape)
    assert.are.same({ 10, 2 }, s10.shape)
    assert.are.same({ 4, 5, 2 }, s45.shape)
    assert.are.same({ 2 }, kl.shape)
  end)
end)
