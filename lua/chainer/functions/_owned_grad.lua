-- functions/_owned_grad.lua: in-place gradient accumulation for parameters
-- that receive many contributions in one backward pass.
--
-- A Linear or EmbedID applied at every step of a sequence (a language
-- model's output layer, 35 times per BPTT window) contributes one full-size
-- gradient of its W per step.  The backward traversal (backprop.lua) sums
-- them: the first contribution is kept, the second makes a new sum that the
-- input's node then holds alone (node._gown), and later ones are added to
-- that sum in place.  From then on a node's backward may write its
-- contribution straight into the sum (a gemm with beta = 1, a scatter-add)
-- and return no gradient for that input: the same sum without a fresh
-- (10000, 200) result, its zero fill and the separate add.
--
-- owned(f, i) returns that sum for input i of the node f being run by the
-- current traversal, or nil (then the caller returns its gradient as usual).
-- It relies on backprop.lua's bookkeeping: f._bp and a variable node's _bp
-- carry the id of the traversal that last reached them, _grad the gradient
-- summed so far and _gown whether that tensor belongs to the node alone.
-- Callers use it only on the no-graph path (no double backprop, no hook,
-- no debug), where the traversal treats gradients as bare tensors.
local M = {}

function M.owned(f, i)
  local ins = f.inputs
  local x = ins and ins[i]
  if x == nil or x._gown ~= true then return nil end
  local id = f._bp
  if id == nil or x._bp ~= id then return nil end
  local g = x._grad
  if type(g) ~= 'cdata' then return nil end
  return g
end

return M
