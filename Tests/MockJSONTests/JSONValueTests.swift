import Testing

@testable import MockJSON

@Suite("JSON value: exact numbers, round-trip, errors")
struct JSONValueTests {
  @Test func memberLookupTakesTheLastOfANameAndComparesNamesAsWritten() throws {
    let value = try JSONValue.parse(
      #"{"status": 1, "statu": 2, "status": 3, "caf\u00e9": "precomposed", "a": null, "urlPathTemplate": 4}"#)
    #expect(value["status"] == .number(JSONNumber(3)))
    #expect(value["statu"] == .number(JSONNumber(2)))
    #expect(value["stat"] == nil)
    #expect(value["STATUS"] == nil)
    #expect(value["a"] == .null)
    #expect(value["urlPathTemplate"] == .number(JSONNumber(4)))
    #expect(value["caf\u{e9}"] == .string("precomposed"))
    // RFC 8259 §8.3 compares names code unit by code unit (as WireMock's Java does): a decomposed "é"
    // is another name.
    #expect(value["cafe\u{301}"] == nil)
  }

  @Test(
    "numbers equal by decimal value",
    arguments: [
      ("1", "1.0", true), ("1", "1e0", true), ("275.0", "275", true), ("2.75e2", "275", true),
      ("1.2", "1.2000", true), ("10e-1", "1", true), ("-0", "0", true), ("0.0", "0e5", true),
      ("9007199254740993", "9007199254740992", false), ("1", "-1", false),
      ("0.1", "0.10000000000000001", false),
      ("123.0", "123", true), ("1e400", "10e399", true), ("1e400", "1e401", false),
    ])
  func numberEquality(a: String, b: String, equal: Bool) throws {
    let x = try #require(JSONNumber(text: a))
    let y = try #require(JSONNumber(text: b))
    #expect((x == y) == equal)
    if equal { #expect(x.hashValue == y.hashValue) }
  }

  @Test(
    "number ordering",
    arguments: [
      ("1", "2"), ("-2", "-1"), ("-1", "0"), ("0.5", "1"), ("9007199254740992", "9007199254740993"),
      ("1e2", "101"),
    ])
  func numberOrdering(a: String, b: String) throws {
    let x = try #require(JSONNumber(text: a))
    let y = try #require(JSONNumber(text: b))
    #expect(x < y)
    #expect(!(y < x))
  }

  @Test("invalid number text", arguments: ["01", "1.", "+1", ".5", "1e", "-", "1x", ""])
  func invalidNumbers(text: String) { #expect(JSONNumber(text: text) == nil) }

  @Test("int values", arguments: [("3", 3), ("3.0", 3), ("3e2", 300), ("-12", -12), ("0", 0)])
  func intValues(text: String, value: Int) { #expect(JSONNumber(text: text)?.intValue == value) }

  @Test("non-integers have no int value", arguments: ["2.5", "1e40", "1e-3"])
  func notInts(text: String) { #expect(JSONNumber(text: text)?.intValue == nil) }

  /// `JSONValue` keeps its case in spare bits; in a `.number` those must not be the high bits of the
  /// digits' or the text's heap pointers, which LeakSanitizer would then not see (a false leak report for
  /// every number in a stored stub's source JSON, `make fuzz`).
  @Test("a .number keeps the number's pointers untagged")
  func numberPointersUntagged() throws {
    let number = try #require(JSONNumber(text: "-12345678901234567890.123456789e-3"))
    var value = JSONValue.number(number)
    var plain = number
    let offsets = [\JSONNumber.text, \JSONNumber.digits].map { MemoryLayout<JSONNumber>.offset(of: $0) }
    let words = [try #require(offsets[0]), try #require(offsets[0]) + 8, try #require(offsets[1])]
    let inValue = withUnsafeBytes(of: &value) { b in
      words.map { b.loadUnaligned(fromByteOffset: $0, as: UInt.self) }
    }
    let inNumber = withUnsafeBytes(of: &plain) { b in
      words.map { b.loadUnaligned(fromByteOffset: $0, as: UInt.self) }
    }
    #expect(inValue == inNumber)
  }

  @Test(
    "object equality ignores member order, the last of repeated names wins, small and large alike",
    arguments: [
      (#"{"a":1,"b":[1,{"c":2}]}"#, #"{"b":[1,{"c":2}],"a":1}"#, true),
      (#"{"a":1,"b":2}"#, #"{"a":1,"b":3}"#, false),
      (#"{"a":1,"b":2}"#, #"{"a":1}"#, false),
      (#"{"a":1}"#, #"{"a":1,"b":2}"#, false),
      (#"{"a":0,"a":1}"#, #"{"a":1}"#, true),
      (#"{"a":1,"a":0}"#, #"{"a":1}"#, false),
      (#"{"a":1,"b":2,"a":3}"#, #"{"b":2,"a":3}"#, true),
      (#"{"a":1,"b":2}"#, #"{"a":1,"a":2}"#, false),
      (#"{}"#, #"{}"#, true),
    ])
  func objectEquality(_ a: String, _ b: String, _ equal: Bool) throws {
    let x = try JSONValue.parse(bytes: Array(a.utf8))
    let y = try JSONValue.parse(bytes: Array(b.utf8))
    #expect((x == y) == equal)
    #expect((y == x) == equal)
    // The same pairs as members of objects past the linear-search size.
    func widened(_ v: JSONValue) -> JSONValue {
      guard case .object(var o) = v else { return v }
      for i in 0..<40 { o.members.insert(.init(key: "k\(i)", value: .string("v")), at: 0) }
      return .object(o)
    }
    #expect((widened(x) == widened(y)) == equal)
    if equal { #expect(x.hashValue == y.hashValue) }
  }

  @Test("serialization keeps number spelling and member order")
  func roundTrip() throws {
    let text =
      #"{"amount":275.0,"id":9007199254740993,"rate":1.2000,"e":2.75e2,"s":"a\"b\n\u0001é","z":[true,false,null]}"#
    let v = try JSONValue.parse(text)
    #expect(
      v.serialized()
        == #"{"amount":275.0,"id":9007199254740993,"rate":1.2000,"e":2.75e2,"s":"a\"b\n\u0001é","z":[true,false,null]}"#
    )
    #expect(try JSONValue.parse(v.serialized(pretty: true)) == v)
  }

  @Test("objects compare without order; arrays with order")
  func semanticEquality() throws {
    #expect(try JSONValue.parse(#"{"a":1,"b":[1,2]}"#) == JSONValue.parse(#"{"b":[1.0,2],"a":1e0}"#))
    #expect(try JSONValue.parse("[1,2]") != JSONValue.parse("[2,1]"))
    #expect(try JSONValue.parse(#""1""#) != JSONValue.parse("1"))
  }

  @Test("escapes and surrogate pairs decode")
  func escapes() throws {
    #expect(try JSONValue.parse(#""\ud83d\ude00 \u4e2d\/""#) == .string("😀 中/"))
  }

  @Test(
    "syntax errors carry line and column",
    arguments: [
      ("{\n  \"a\": 1\n  \"b\": 2\n}", 3, 3, "',' or '}'"),
      ("[1, 2,]", 1, 7, "a value"),
      ("{\"a\" 1}", 1, 6, "':'"),
      ("", 1, 1, "a value"),
      ("[01]", 1, 2, "a number such as 12, -3.5 or 1e9"),
      ("\"abc", 1, 5, "'\"' closing the string opened at line 1, column 1"),
      ("{\"a\":1} x", 1, 9, "end of input"),
      ("\"\\ud800\"", 1, 8, "a low surrogate \\uDC00-\\uDFFF after a high surrogate"),
      ("\"a\u{01}\"", 1, 3, "a string character (control characters must be escaped)"),
    ])
  func syntaxErrors(text: String, line: Int, column: Int, expected: String) {
    do {
      _ = try JSONValue.parse(text)
      Issue.record("parsed invalid JSON \(text)")
    } catch {
      #expect(error.line == line)
      #expect(error.column == column)
      #expect(error.expected == expected)
    }
  }

  @Test("deep nesting is an error, not a crash")
  func deepNesting() {
    let text = String(repeating: "[", count: 100_000)
    #expect(throws: JSONParseError.self) { try JSONValue.parse(text) }
  }

  @Test("invalid UTF-8 inside a string is an error")
  func invalidUTF8() {
    #expect(throws: JSONParseError.self) { try JSONValue.parse(bytes: [0x22, 0xE4, 0xB8, 0x22]) }
  }
}

@Suite("JSONPath subset")
struct JSONPathTests {
  static let doc = #"""
    {"store": {"book": [
      {"title": "A", "price": 8.95, "tags": ["x"]},
      {"title": "B", "price": 12, "isbn": "1"},
      {"title": "C", "price": 22.99}
    ], "name": "shop", "my key": 1}}
    """#

  @Test(
    "expressions select nodes",
    arguments: [
      ("$.store.name", #"["shop"]"#),
      ("$['store']['name']", #"["shop"]"#),
      ("$.store['my key']", "[1]"),
      ("$.store.book[0].title", #"["A"]"#),
      ("$.store.book[-1].title", #"["C"]"#),
      ("$.store.book[*].title", #"["A","B","C"]"#),
      ("$..title", #"["A","B","C"]"#),
      ("$.store.book[?(@.title == 'B')].price", "[12]"),
      ("$.store.book[?(@.price > 10)].title", #"["B","C"]"#),
      ("$.store.book[?(@.price <= 12.0)].title", #"["A","B"]"#),
      ("$.store.book[?(@.isbn)].title", #"["B"]"#),
      ("$.store.book[?(@.title != 'A')].title", #"["B","C"]"#),
      ("$.store.missing", "[]"),
      ("$", "[" + "null" + "]"),
    ])
  func select(expression: String, expected: String) throws {
    let doc = try JSONValue.parse(JSONPathTests.doc)
    let path = try JSONPath(expression)
    let got = path.evaluate(doc)
    if expression == "$" {
      #expect(got == [doc])
    } else {
      #expect(JSONValue.array(got) == (try JSONValue.parse(expected)))
    }
  }

  @Test(
    "invalid expressions are rejected",
    arguments: ["store", "$.", "$[", "$[?(@.a ~ 1)]", "$.a[?(@.b == )]", "$..", "$x"])
  func invalid(expression: String) {
    #expect(throws: JSONPathError.self) { try JSONPath(expression) }
  }
}

@Suite("JSON numbers with huge exponents (found by make fuzz)")
struct JSONHugeExponentTests {
  @Test(arguments: [
    "75e00000000010000000000000000000000000088888888888888886888888", "1e99999999999999999999999",
    "-1E-99999999999999999999999", "[0.5e9223372036854775807, 0.5e9223372036854775808]",
  ])
  func parsesWithoutOverflow(text: String) throws {
    let value = try JSONValue.parse(text)
    #expect(try JSONValue.parse(value.serialized()) == value)
  }
}
