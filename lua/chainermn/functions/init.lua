-- chainermn.functions: differentiable communication for model parallel
-- training (ChainerMN 7.8.1's chainermn.functions).  See
-- chainermn/functions/collective.lua and point_to_point.lua.
local collective = require 'chainermn.functions.collective'
local p2p = require 'chainermn.functions.point_to_point'

return {
  allgather = collective.allgather,
  alltoall = collective.alltoall,
  bcast = collective.bcast,
  gather = collective.gather,
  scatter = collective.scatter,
  send = p2p.send,
  recv = p2p.recv,
  pseudo_connect = p2p.pseudo_connect,
}
