return { module_alias = {}, module_default = {}, names = {} }
