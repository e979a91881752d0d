-- chainer.utils.to_coo: a dense matrix's non-zeros as a CooMatrix (utils/sparse.lua).
return require('chainer.utils.sparse').to_coo
