// The types the MockServer library's public API names: the HTTP values (HTTPCore), JSON values (MockJSON)
// and the stub model (Mappings). `import MockServer` alone is enough to use it.
@_exported import HTTPCore
@_exported import Mappings
@_exported import MockJSON
// The compiled forms the stub model's public API names (`StringValuePattern`'s regular expressions,
// `ResponseTemplate`'s templates), so that `import MockServer` alone reaches them too.
@_exported import struct RegularExpressions.CompiledRegex
@_exported import struct Templating.Template
