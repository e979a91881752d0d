-- examples/word2vec/search.lua: nearest neighbours of a word by cosine
-- similarity of the embeddings written by train_word2vec.lua.
--
--   chainlua examples/word2vec/search.lua [--model result/word2vec.model]     (interactive: >> word)
--   chainlua examples/word2vec/search.lua --query monday,apple [-n 5]        (non-interactive)
--
-- Interactive mode reads one word per line until end of input (Ctrl-D).
local T = require 'chainer.tensor'
local ffi = require 'ffi'

local ap = require('chainer.utils.argparse')('Chainer example: word2vec nearest-neighbour search')
ap.prog = 'chainlua examples/word2vec/search.lua'
ap:option('--model', '-m', { default = 'result/word2vec.model', help = 'Embedding file written by train_word2vec.lua' })
ap:option('--query', '-q', { help = 'Comma-separated words to look up instead of reading them from stdin' })
ap:option('--n-result', '-n', { type = 'number', default = 5, help = 'Number of neighbours to print' })
local args = ap:parse(arg)

local f, err = io.open(args.model, 'r')
if not f then error("search: cannot open the model '" .. args.model .. "' (" .. tostring(err) .. ')', 0) end
local n_vocab, n_units = f:read('*l'):match('^(%d+)%s+(%d+)')
n_vocab, n_units = tonumber(n_vocab), tonumber(n_units)
if not n_vocab then error("search: '" .. args.model .. "' does not start with 'n_vocab n_units'", 0) end

local word2index, index2word = {}, {}
local w = T.empty({ n_vocab, n_units }, 'float32')
local pw = ffi.cast('float*', w.ptr.data)
local i = 0
for line in f:lines() do
  local word, rest = line:match('^(%S+)%s+(.*)$')
  if word then
    if i >= n_vocab then error('search: more rows than the ' .. n_vocab .. ' the header announces', 0) end
    word2index[word], index2word[i] = i, word
    local j = 0
    for s in rest:gmatch('%S+') do
      pw[i * n_units + j] = tonumber(s)
      j = j + 1
    end
    if j ~= n_units then error(string.format('search: row %d has %d values (expected %d)', i + 1, j, n_units), 0) end
    i = i + 1
  end
end
f:close()

-- normalise the rows: a dot product is then the cosine
local norm = T.sqrt(T.sum(w * w, { axis = 1, keepdims = true }))
w = w / norm
local wc = w:contiguous()

local function search(q)
  local id = word2index[q]
  if id == nil then
    print('"' .. q .. '" is not found')
    return
  end
  local v = wc:slice({ id, id + 1 }):reshape({ n_units })
  local sim = T.matmul(wc, v):astype('float64'):contiguous()
  local ps = ffi.cast('double*', sim.ptr.data) + sim.ptr.offset
  local order = {}
  for k = 0, n_vocab - 1 do
    if ps[k] == ps[k] and k ~= id then order[#order + 1] = k end   -- skip NaN (zero rows) and the query
  end
  table.sort(order, function(a, b) return ps[a] > ps[b] end)
  print('query: ' .. q)
  for k = 1, math.min(args.n_result, #order) do
    print(string.format('%s: %.7g', index2word[order[k]], ps[order[k]]))
  end
end

if args.query then
  for q in args.query:gmatch('[^,]+') do search(q) end
else
  while true do
    io.write('>> ')
    io.flush()
    local q = io.read('*l')
    if q == nil then break end
    q = q:match('^%s*(.-)%s*$')
    if q ~= '' then search(q) end
  end
  io.write('\n')
end
