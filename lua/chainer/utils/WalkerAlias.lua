-- chainer.utils.WalkerAlias: the alias-method sampler class (utils/walker_alias.lua).
return require 'chainer.utils.walker_alias'
