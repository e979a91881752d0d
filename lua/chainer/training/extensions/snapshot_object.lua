-- snapshot_object(target, filename, opts): see snapshot.lua.
return require('chainer.training.extensions.snapshot').snapshot_object
