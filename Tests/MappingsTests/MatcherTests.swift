import Foundation
import HTTPCore
import RegularExpressions
import Synchronization
import Testing

@testable import Mappings
@testable import MockJSON

/// Parses one matcher object from JSON text (test helper).
func matcher(_ json: String) throws -> StringValuePattern {
  var d = Diagnostics(file: "test.json")
  let m = StubParser.parseMatcher(try JSONValue.parse(json), "$", &d)
  #expect(d.problems.isEmpty, "\(d.problems)")
  return try #require(m)
}

@Suite("String value matchers")
struct MatcherTests {
  @Test(
    "single-value matchers",
    arguments: [
      (#"{"equalTo":"abc"}"#, "abc", true), (#"{"equalTo":"abc"}"#, "ABC", false),
      (#"{"equalTo":"abc","caseInsensitive":true}"#, "ABC", true),
      (#"{"equalTo":"Straße","caseInsensitive":true}"#, "STRASSE", false),
      (#"{"contains":"b"}"#, "abc", true), (#"{"contains":"z"}"#, "abc", false),
      (#"{"doesNotContain":"z"}"#, "abc", true), (#"{"doesNotContain":"b"}"#, "abc", false),
      (#"{"matches":"[a-c]+"}"#, "abc", true), (#"{"matches":"b"}"#, "abc", false),
      (#"{"matches":"a|ab"}"#, "ab", true), (#"{"matches":"abc"}"#, "abc\n", false),
      (#"{"doesNotMatch":"[0-9]+"}"#, "abc", true), (#"{"doesNotMatch":"a.c"}"#, "abc", false),
      (#"{"absent":true}"#, "x", false),
      (#"{"binaryEqualTo":"AQID"}"#, "\u{1}\u{2}\u{3}", true),
      (#"{"and":[{"contains":"a"},{"contains":"c"}]}"#, "abc", true),
      (#"{"and":[{"contains":"a"},{"contains":"z"}]}"#, "abc", false),
      (#"{"or":[{"equalTo":"x"},{"equalTo":"abc"}]}"#, "abc", true),
      (#"{"or":[{"equalTo":"x"},{"equalTo":"y"}]}"#, "abc", false),
      (#"{"not":{"equalTo":"abc"}}"#, "abc", false), (#"{"not":{"equalTo":"x"}}"#, "abc", true),
      (#"{"equalToJson":{"a":1}}"#, #"{"a":1.0}"#, true),
      (#"{"equalToJson":"{\"a\": 1}"}"#, #"{ "a" : 1 }"#, true),
      (#"{"equalToJson":{"a":1}}"#, #"{"a":1,"b":2}"#, false),
      (#"{"equalToJson":{"a":1},"ignoreExtraElements":true}"#, #"{"a":1,"b":2}"#, true),
      (#"{"equalToJson":[1,2]}"#, "[2,1]", false),
      (#"{"equalToJson":[1,2],"ignoreArrayOrder":true}"#, "[2,1]", true),
      (
        #"{"equalToJson":{"a":[{"x":1},{"y":2}]},"ignoreArrayOrder":true,"ignoreExtraElements":true}"#,
        #"{"a":[{"y":2,"z":0},{"x":1}],"b":3}"#, true
      ),
      (#"{"equalToJson":{"a":1}}"#, "not json", false),
      // Repeated names: the last of each counts, on either side; members in any order.
      (#"{"equalToJson":{"a":1,"a":2}}"#, #"{"a":2}"#, true),
      (#"{"equalToJson":{"a":1,"a":2}}"#, #"{"a":1}"#, false),
      (#"{"equalToJson":{"a":2,"b":3}}"#, #"{"b":3,"a":1,"a":2}"#, true),
      (#"{"equalToJson":{"a":2}}"#, #"{"a":2,"b":3,"b":4}"#, false),
      (#"{"equalToJson":{"a":1,"b":"${json-unit.ignore-element}"}}"#, #"{"a":1}"#, true),
      (#"{"equalToJson":{"a":1,"b":"${json-unit.ignore-element}"}}"#, #"{"a":1,"b":[1]}"#, true),
      (#"{"equalToJson":{"a":"${json-unit.any-number}"}}"#, #"{"a":"1"}"#, false),
      (#"{"equalToJson":{"a":"$not-a-placeholder"}}"#, #"{"a":"$not-a-placeholder"}"#, true),
      (#"{"matchesJsonPath":"$.name"}"#, #"{"name":"Tom"}"#, true),
      (#"{"matchesJsonPath":"$.name"}"#, #"{"name":null}"#, false),
      (#"{"matchesJsonPath":"$.name"}"#, #"{"other":1}"#, false),
      (#"{"matchesJsonPath":"$.items[?(@.qty > 1)]"}"#, #"{"items":[{"qty":1},{"qty":2}]}"#, true),
      (#"{"matchesJsonPath":"$.items[?(@.qty > 5)]"}"#, #"{"items":[{"qty":1},{"qty":2}]}"#, false),
      (#"{"matchesJsonPath":{"expression":"$.name","equalTo":"Tom"}}"#, #"{"name":"Tom"}"#, true),
      (#"{"matchesJsonPath":{"expression":"$.name","equalTo":"Tom"}}"#, #"{"name":"Bob"}"#, false),
      (#"{"matchesJsonPath":{"expression":"$.qty","equalTo":"2.0"}}"#, #"{"qty":2.0}"#, true),
      (#"{"matchesJsonPath":{"expression":"$.tags[*]","contains":"ur"}}"#, #"{"tags":["a","urgent"]}"#, true),
      (
        #"{"matchesJsonPath":{"expression":"$.o","equalToJson":{"b":2,"a":1}}}"#, #"{"o":{"a":1,"b":2}}"#,
        true
      ),
      (#"{"matchesJsonPath":{"expression":"$.x","absent":true}}"#, #"{"y":1}"#, true),
    ])
  func singleValue(json: String, value: String, expected: Bool) throws {
    #expect(try matcher(json).match(value) == expected)
  }

  @Test(
    "absent fields",
    arguments: [
      (#"{"absent":true}"#, true), (#"{"equalTo":"a"}"#, false), (#"{"doesNotContain":"a"}"#, false),
      (#"{"not":{"absent":true}}"#, false), (#"{"or":[{"absent":true},{"equalTo":"a"}]}"#, true),
    ])
  func absent(json: String, expected: Bool) throws {
    #expect(try matcher(json).match(nil) == expected)
  }

  @Test(
    "multi-valued: hasExactly and includes",
    arguments: [
      (#"{"hasExactly":[{"equalTo":"a"},{"equalTo":"b"}]}"#, ["b", "a"], true),
      (#"{"hasExactly":[{"equalTo":"a"},{"equalTo":"b"}]}"#, ["a", "b", "c"], false),
      (#"{"hasExactly":[{"equalTo":"a"},{"contains":"a"}]}"#, ["a", "a"], true),
      // WireMock 3's ExactMatchMultiValuePattern: equal counts, and each matcher's best value matches (two
      // matchers may be met by one value).
      (#"{"hasExactly":[{"equalTo":"a"},{"equalTo":"a"}]}"#, ["a", "b"], true),
      (#"{"hasExactly":[{"equalTo":"a"},{"matches":"[a-z]"}]}"#, ["a", "1"], true),
      (#"{"hasExactly":[{"equalTo":"a"},{"equalTo":"b"}]}"#, ["a", "c"], false),
      (#"{"hasExactly":[{"absent":true}]}"#, [], false),
      (#"{"includes":[{"absent":true}]}"#, [], false),
      (#"{"includes":[{"equalTo":"a"}]}"#, ["x", "a"], true),
      (#"{"includes":[{"equalTo":"a"},{"equalTo":"z"}]}"#, ["x", "a"], false),
      (#"{"equalTo":"a"}"#, ["x", "a"], true),
      (#"{"equalTo":"a"}"#, [], false),
      (#"{"absent":true}"#, [], true),
    ])
  func multiValue(json: String, values: [String], expected: Bool) throws {
    var d = Diagnostics(file: "t")
    let m = try #require(StubParser.parseMultiMatcher(try JSONValue.parse(json), "$", &d))
    #expect(m.match(values) == expected)
  }

  /// Numbers compared by exact decimal value (no rounding through Double), a string is not a number, array order matters.
  @Test(
    "equalToJson compares numbers by exact decimal value",
    arguments: [
      (#"{"qty":1.0,"rate":1.2000,"amount":275,"id":9007199254740993,"tags":["a","b"]}"#, false, true),
      (#"{"qty":1.0,"rate":1.2000,"amount":2.75e2,"id":9007199254740993,"tags":["a","b"]}"#, false, true),
      (#"{"qty":1.0,"rate":1.2000,"amount":275,"id":9007199254740992,"tags":["a","b"]}"#, false, false),
      (#"{"qty":"1","rate":1.2000,"amount":275,"id":9007199254740993,"tags":["a","b"]}"#, false, false),
      (#"{"qty":1.0,"rate":1.2000,"amount":275,"id":9007199254740993,"tags":["b","a"]}"#, false, false),
      (#"{"qty":1.0,"rate":1.2000,"amount":275,"id":9007199254740993,"tags":["b","a"]}"#, true, true),
    ])
  func br15(body: String, ignoreOrder: Bool, expected: Bool) throws {
    let fixture = #"{"amount": 275.0, "rate": 1.2, "qty": 1, "id": 9007199254740993, "tags": ["a","b"]}"#
    let m = try matcher(#"{"equalToJson":\#(fixture)\#(ignoreOrder ? ",\"ignoreArrayOrder\":true" : "")}"#)
    #expect(m.match(body) == expected)
    // The fixture keeps its spelling for the admin round-trip.
    #expect(
      m.json["equalToJson"]?.serialized()
        == #"{"amount":275.0,"rate":1.2,"qty":1,"id":9007199254740993,"tags":["a","b"]}"#)
  }
}

/// `matches`, `doesNotMatch` and the URL patterns compile through ICU's C API: `NSRegularExpression`
/// leaks its copy of a pattern longer than 256 UTF-16 units (`make fuzz` runs with leak detection).
@Suite("Compiled regular expressions")
struct CompiledRegexTests {
  @Test func wholeValueMatchesLongAndEmptyPatterns() throws {
    let long = String(repeating: "a", count: 300) + "[0-9]+"
    #expect(try CompiledRegex(long).matches(String(repeating: "a", count: 300) + "42"))
    #expect(try CompiledRegex(long).matches(String(repeating: "a", count: 299) + "42") == false)
    #expect(try CompiledRegex("").matches(""))
    #expect(try CompiledRegex("").matches("a") == false)
    #expect(try CompiledRegex("a*").matches(""))
    #expect(try CompiledRegex("caf.").matches("café"))
    #expect(try CompiledRegex("(?i)bearer .+").matches("Bearer x"))
    #expect(try CompiledRegex("[0-9]+").matches("12a") == false)
  }

  @Test func searchesAndCapturingGroups() throws {
    let id = try CompiledRegex("order-([0-9]+)(-x)?")
    #expect(id.matches("order-42") && !id.matches("my order-42"))
    #expect(id.containsMatch(in: "my order-42 and order-7"))
    #expect(id.firstMatch(in: "my order-42 and order-7") == ["order-42", "42", nil])
    #expect(
      id.allMatches(in: "order-1-x, order-22") == [["order-1-x", "1", "-x"], ["order-22", "22", nil]])
    #expect(id.allMatches(in: "order-1 order-2 order-3", limit: 2).count == 2)
    #expect(id.firstMatch(in: "none") == nil)
    // Offsets are UTF-16 units inside the engine; text outside the BMP comes back whole.
    let astral = try CompiledRegex("é(.)")
    #expect(astral.firstMatch(in: "caé😀!") == ["é😀", "😀"])
    let empty = try CompiledRegex("")
    #expect(empty.allMatches(in: "ab").count == 3)
    let insensitive = try CompiledRegex("admin", caseInsensitive: true)
    let sensitive = try CompiledRegex("admin")
    #expect(insensitive.matches("ADMIN") && !sensitive.matches("ADMIN"))
    #expect(insensitive != sensitive)
  }

  @Test func invalidPatternsAreRejectedWithICUsReason() {
    let error = #expect(throws: RegexError.self) { try CompiledRegex("/a/([") }
    #expect(error?.message.hasPrefix("U_REGEX_") == true, "\(String(describing: error))")
    // One pattern cannot close the whole-value match around it and open another (as it could when the
    // pattern was wrapped in \A(?:…)\z).
    #expect(throws: RegexError.self) { try CompiledRegex("a)|(b") }
  }

  /// Java's `java.util.regex.Pattern` documentation (its "Predefined character classes", "POSIX
  /// character classes (US-ASCII only)", "java.lang.Character classes" and "Classes for Unicode scripts,
  /// blocks, categories and binary properties" tables, and the UNICODE_CHARACTER_CLASS and
  /// UNICODE_CASE flags), restated where ICU reads the same pattern otherwise. The same readings are
  /// checked against WireMock 2.35.1 on Java 17 by Tests/Compatibility/cases/regex-java-*.json.
  @Test func javasDialectWhereICUReadsItOtherwise() throws {
    // \d \w \s are ASCII in Java; ICU's are Unicode.
    #expect(try CompiledRegex(#"\d+"#).matches("123") && !CompiledRegex(#"\d+"#).matches("١٢٣"))
    #expect(try !CompiledRegex(#"\w+"#).matches("café") && CompiledRegex(#"\W"#).matches("é"))
    #expect(try !CompiledRegex(#"\s"#).matches("\u{3000}") && CompiledRegex(#"\S"#).matches("\u{3000}"))
    #expect(try CompiledRegex(#"[\d_]+"#).matches("1_2") && !CompiledRegex(#"[^\d]"#).matches("7"))
    // (?U) at the start: Unicode classes, as ICU's own.
    #expect(try CompiledRegex(#"(?U)\w+"#).matches("café") && CompiledRegex(#"(?iU)\d"#).matches("١"))
    #expect(try CompiledRegex(#"(?U)\p{Lower}+"#).matches("été"))
    // POSIX classes are ASCII.
    #expect(try CompiledRegex(#"\p{Lower}+"#).matches("abc") && !CompiledRegex(#"\p{Lower}"#).matches("é"))
    #expect(try CompiledRegex(#"\p{Alpha}\p{Punct}\p{XDigit}"#).matches("a~F"))
    #expect(try CompiledRegex(#"\P{Digit}"#).matches("x") && !CompiledRegex(#"\P{Digit}"#).matches("5"))
    #expect(try CompiledRegex(#"[\p{Upper}\p{Digit}]+"#).matches("AB12"))
    // java.lang.Character classes, the Is and In prefixes.
    #expect(
      try CompiledRegex(#"\p{javaLowerCase}+"#).matches("été")
        && !CompiledRegex(#"\p{javaLowerCase}"#).matches("A"))
    #expect(
      try CompiledRegex(#"\p{javaWhitespace}"#).matches("\u{1F}")
        && !CompiledRegex(#"\p{javaWhitespace}"#).matches("\u{A0}"))
    #expect(
      try CompiledRegex(#"\P{javaDefined}"#).matches("\u{378}")
        && !CompiledRegex(#"\P{javaDefined}"#).matches("a"))
    #expect(try CompiledRegex(#"\p{IsAlphabetic}\p{InGreek}\p{IsLatin}\p{IsLu}"#).matches("aαbC"))
    #expect(try !CompiledRegex(#"\p{InGreek}"#).matches("a"))
    // [:alpha:] is five characters in Java, a POSIX class in ICU.
    #expect(
      try CompiledRegex("[[:alpha:]]+").matches("alpha:") && !CompiledRegex("[[:alpha:]]+").matches("beta"))
    #expect(try CompiledRegex("[^:a]+").matches("bc"))
    // Case-insensitive without (?u): ASCII letters fold, others do not; (?u) folds them all.
    #expect(try CompiledRegex("(?i)CAFé").matches("café") && !CompiledRegex("(?i)CAFé").matches("CAFÉ"))
    #expect(try CompiledRegex("(?iu)CAFé").matches("CAFÉ"))
    #expect(try !CompiledRegex("é", caseInsensitive: true).matches("É"))
    #expect(try CompiledRegex("é+x", caseInsensitive: true).matches("ééX"))
    // A lone } is a literal; quantifiers still count; \x{…} and \N{…} keep their braces.
    #expect(try CompiledRegex(#"\x{1F600}\N{LATIN SMALL LETTER A}"#).matches("😀a"))
    #expect(try CompiledRegex("a}b{2}").matches("a}bb") && !CompiledRegex("a}b{2}").matches("a}b"))
    // Found by an attack round, each compared with WireMock 2.35.1 on Java 17:
    // ASCII-only folding keeps the Kelvin sign and the long s away from k, s, classes and \w;
    for p in ["(?i)k", "(?i)[a-z]", "(?i)\\w", #"(?i)\Qk\E"#] {
      #expect(try !CompiledRegex(p).matches("\u{212A}"), "\(p)")
      #expect(try CompiledRegex(p).matches("K"), "\(p)")
    }
    #expect(try !CompiledRegex("(?i)s+").matches("s\u{17F}") && CompiledRegex("(?i)[a-z]+").matches("aBc"))
    // escaped and quoted non-ASCII letters are matched exactly too;
    for p in [#"(?i)\Qé\E"#, #"(?i)\x{E9}"#, #"(?i)\u00e9"#, #"(?i)\xe9"#] {
      #expect(try CompiledRegex(p).matches("é") && !CompiledRegex(p).matches("É"), "\(p)")
    }
    // \p{IsLower} is the Unicode property; (?-U) at the start changes nothing;
    #expect(try CompiledRegex(#"\p{IsLower}"#).matches("é") && CompiledRegex(#"(?-U)\w"#).matches("a"))
    // text inside \Q…\E and (?x) comments is not read as syntax.
    #expect(try CompiledRegex(#"\Q(?i)\E[é]"#).matches("(?i)é"))
    #expect(try CompiledRegex("(?x)a # [ é\n}").matches("a}"))
    // ECMA-262 (JSON Schema): \d and \w ASCII, \s and \p{…} Unicode.
    #expect(try !CompiledRegex(#"^\d$"#, dialect: .ecma262).containsMatch(in: "١"))
    #expect(try CompiledRegex(#"^\s$"#, dialect: .ecma262).containsMatch(in: "\u{3000}"))
    #expect(try CompiledRegex(#"^\p{Ll}$"#, dialect: .ecma262).containsMatch(in: "é"))
  }

  @Test func javaConstructsICUCannotTakeAreRefusedNamingTheDifference() {
    let cases: [(String, String)] = [
      (#"a\b{g}"#, "grapheme"), ("a(?U)b", "(?U)"), ("(?d)^a$", "UNIX_LINES"),
      (#"\p{javaJavaIdentifierStart}"#, "java.lang.Character"), ("(?i)[é]", "folds ASCII"),
      ("[a-c--b]", "set difference"), ("(?U:a)b", "(?U)"), ("a(?-U)b", "(?-U)"),
    ]
    for (pattern, named) in cases {
      let error = #expect(throws: RegexError.self, "\(pattern)") { try CompiledRegex(pattern) }
      #expect(error?.message.contains(named) == true, "\(pattern): \(String(describing: error?.message))")
      #expect(error?.pattern == pattern)
    }
  }

  @Test func oneRegexMatchesFromManyThreadsAtOnce() throws {
    let regex = try CompiledRegex("item-[0-9]+")
    let wrong = Mutex(0)
    DispatchQueue.concurrentPerform(iterations: 2_000) { i in
      let value = i % 2 == 0 ? "item-\(i)" : "item-\(i)x"
      if regex.matches(value) != (i % 2 == 0) { wrong.withLock { $0 += 1 } }
    }
    #expect(wrong.withLock { $0 } == 0)
  }
}
