// The types the MockServer library's public API names: the HTTP values (HTTPCore), JSON values (MockJSON)
// and the stub model (Mappings). `import MockServer` alone is enough to use it.
@_exported import HTTPCore
@_exported import Mappings
@_exported import MockJSON
