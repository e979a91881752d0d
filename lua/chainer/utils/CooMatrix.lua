-- chainer.utils.CooMatrix: the COO sparse matrix class (utils/sparse.lua).
return require('chainer.utils.sparse').CooMatrix
