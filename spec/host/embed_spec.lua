-- examples/embed/host.c: a C program that embeds chainlua.
local U = require 'host.util'

describe('embedding example (embed_host)', function()
  local exe = U.build .. '/embed_host'

  it('hands a C tensor to Lua, gets the result back and cleans up', function()
    assert.is_true(U.exists(exe), 'missing ' .. exe .. ' (build first: make build)')
    local out, err, st = U.run(U.quote(exe))
    assert.are.equal(0, st, err)
    assert.are.equal('', err)
    assert.matches('x %(C%): shape %(2, 3%) dtype float32 values 0 1 2 3 4 5\n', out)
    assert.matches('y %(C%): shape %(3, 2%) dtype float32 values 1 7 3 9 5 11\n', out)
    assert.matches('tensor%(%[%[ ?1%., +7%.%],', out)
    assert.matches('error from Lua: bad:1: reshape: cannot reshape a tensor of shape %(2, 3%)', out)
    assert.matches("error from C: chainlua_get_global_tensor: global 'print' is a function %(expected a tensor%)", out)
    assert.matches('live tensors after close: 0\n$', out)
  end)
end)
