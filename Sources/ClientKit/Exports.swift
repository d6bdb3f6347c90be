// What `import ClientKit` brings along: every type ClientKit's public API names, so that an app writes
// requests, headers, transports and models with this one import (as Hummingbird's Exports.swift does).
//
// - Foundation (URL, Data, URLQueryItem, JSONDecoder/JSONEncoder, Date; URLRequest through
//   FoundationNetworking on Linux).
// - From HTTPCore, only the value types in ClientKit's signatures: `HTTPMethod`, `HTTPHeaders` and
//   `ParserLimits` (its parser, serializer and the rest stay out of the app's namespace).

@_exported import Foundation

@_exported import struct HTTPCore.HTTPHeaders
@_exported import struct HTTPCore.HTTPMethod
@_exported import struct HTTPCore.ParserLimits

#if canImport(FoundationNetworking)
  @_exported import FoundationNetworking
#endif
