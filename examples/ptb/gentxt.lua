-- examples/ptb/gentxt.lua: generates text with a language model trained by
-- train_ptb.lua (or train_ptb_nstep.lua), starting from a prime word.
--
--   chainlua examples/ptb/gentxt.lua -m result/model.npz -p apple [--unit 650] [--length 20]
--
-- Each next word is drawn from the model's softmax (--sample 1, the
-- default) or is its most probable word (--sample 0).  '<eos>' is shown
-- as '.'.  The prime word must be in the PTB vocabulary.
local chainer = require 'chainer'
local F = require 'chainer.functions'
local L = require 'chainer.links'
local T = require 'chainer.tensor'
local datasets = require 'chainer.datasets'
local serializers = require 'chainer.serializers'
local ffi = require 'ffi'

local here = (arg and arg[0] or ''):match('^(.*)/[^/]*$') or '.'
local ptb = dofile(here .. '/ptb_common.lua')

local ap = require('chainer.utils.argparse')('Chainer example: generate text with a PTB language model')
ap.prog = 'chainlua examples/ptb/gentxt.lua'
ap:option('--model', '-m', { help = 'Model file written by train_ptb.lua (required)' })
ap:option('--primetext', '-p', { help = 'Base text (one word) given to the model to generate text (required)' })
ap:option('--seed', '-s', { type = 'number', default = 123, help = 'Random seed' })
ap:option('--unit', '-u', { type = 'number', default = 650, help = 'Number of LSTM units in each layer' })
ap:option('--sample', { type = 'number', default = 1, help = 'Negative value indicates NOT use random choice' })
ap:option('--length', '-l', { type = 'number', default = 20, help = 'Length of the generated string' })
ap:option('--device', '-d', { default = '-1', help = "Device specifier (-1: CPU)", aliases = { '--gpu', '-g' } })
ap:flag('--nstep', { help = 'The model was trained by train_ptb_nstep.lua' })
local args = ap:parse(arg)
if not args.model or not args.primetext then
  io.stderr:write(ap:usage())
  error('gentxt: --model and --primetext are required', 0)
end

T.random.seed(args.seed)

-- the vocabulary (word -> 0-based id) and its inverse
local vocab = datasets.get_ptb_words_vocabulary()
local ivocab, n_vocab = {}, 0
for w, id in pairs(vocab) do ivocab[id] = w; n_vocab = n_vocab + 1 end

local lm
if args.nstep then
  local nstep = dofile(here .. '/ptb_nstep_model.lua')
  lm = nstep.RNNForLMNStep(n_vocab, args.unit, 0)
else
  lm = ptb.RNNForLM(n_vocab, args.unit, 0)
end
local model = L.Classifier(lm)
serializers.load_npz(args.model, model)

local prime = args.primetext
if vocab[prime] == nil then
  print('ERROR: Unfortunately ' .. prime .. ' is unknown.')
  os.exit(1)
end

local function word_tensor(id)
  local x = T.empty({ 1 }, 'int32')
  ffi.cast('int32_t*', x.ptr.data)[x.ptr.offset] = id
  return x
end

-- Draws an index from the probabilities p[0..n-1] (float32, summing to ~1).
local function choose(prob)
  local p = prob:astype('float64'):contiguous()
  local d = ffi.cast('double*', p.ptr.data) + p.ptr.offset
  local n, total = p.size, 0
  for i = 0, n - 1 do total = total + d[i] end
  local u = T.random.uniform(0, 1, { 1 }, 'float64'):item() * total
  local acc = 0
  for i = 0, n - 1 do
    acc = acc + d[i]
    if u < acc then return i end
  end
  return n - 1
end

chainer.using_config('train', false, function()
  chainer.no_backprop_mode(function()
    lm:reset_state()
    local prev = word_tensor(vocab[prime])
    io.write(prime .. ' ')
    for _ = 1, args.length do
      local prob = F.softmax(lm(prev)).array:reshape({ n_vocab })
      local index
      if args.sample > 0 then index = choose(prob) else index = prob:argmax():item() end
      local w = ivocab[index]
      if w == '<eos>' then io.write('.') else io.write(w .. ' ') end
      prev = word_tensor(index)
    end
    io.write('\n')
  end)
end)
