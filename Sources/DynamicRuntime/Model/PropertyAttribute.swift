import CDynamicRuntime

/// One attribute of a property: a one-character name and a value, as objc4's
/// `objc_property_attribute_t` (`T` type, `R` readonly, `C` copy, `&` retain, `N` nonatomic,
/// `G` getter, `S` setter, `D` dynamic, `W` weak, `P` collectable, `V` backing ivar, `t`
/// old-style type).
public struct PropertyAttribute: Hashable, Sendable, CustomStringConvertible {
    /// The attribute's one-character name.
    public let name: String
    /// Its value ("" for flags such as `N`).
    public let value: String

    /// An attribute; `parse` and `RuntimeClass.addProperty` check it.
    public init(_ name: String, _ value: String = "") {
        self.name = name
        self.value = value
    }

    /// The attribute as it appears in an attribute string.
    public var description: String { name + value }

    private static let flags: Set<UInt8> = Set("RC&NDWP".utf8)
    private static let named: Set<UInt8> = Set("GSVTt".utf8)

    /// Parses and checks an attribute string such as `T@"Name",&,N,V_name`.
    ///
    /// - Throws: `malformedEncoding` naming the offset of the first problem: an empty string or
    ///   attribute, an unknown attribute, a value on a flag or none on `T`/`G`/`S`/`V`/`t`, a
    ///   type that does not parse, `T` not first or missing, `V` not last, an attribute given
    ///   twice, or more than one of `C`, `&` and `W`.
    public static func parse(_ string: String) throws(RuntimeError) -> [PropertyAttribute] {
        let bytes = Array(string.utf8)
        func fail(_ offset: Int, _ reason: String) -> RuntimeError {
            .malformedEncoding(.init(actual: string, offset: offset, reason: "property attributes: " + reason))
        }
        guard !bytes.isEmpty else { throw fail(0, "empty; expected at least the type ('T…')") }
        var result: [PropertyAttribute] = []
        var seen = Set<UInt8>()
        var start = 0
        while start <= bytes.count {
            var end = start
            var quoted = false
            while end < bytes.count, quoted || bytes[end] != UInt8(ascii: ",") {
                if bytes[end] == UInt8(ascii: "\"") { quoted.toggle() }
                if bytes[end] == 0 { throw fail(end, "NUL inside the attributes") }
                end += 1
            }
            if quoted { throw fail(start, "unterminated quote") }
            guard end > start else { throw fail(start, "empty attribute") }
            let name = bytes[start]
            let value = String(decoding: bytes[(start + 1)..<end], as: UTF8.self)
            let shown = String(decoding: [name], as: UTF8.self)
            if flags.contains(name) {
                guard value.isEmpty else { throw fail(start + 1, "'\(shown)' takes no value") }
            } else if named.contains(name) {
                guard !value.isEmpty else { throw fail(start, "'\(shown)' needs a value") }
                if name == UInt8(ascii: "T") || name == UInt8(ascii: "t") {
                    try checkType(value, offset: start + 1, string: string)
                }
            } else {
                throw fail(start, "unknown attribute '\(shown)'")
            }
            guard seen.insert(name).inserted else { throw fail(start, "'\(shown)' given twice") }
            if name == UInt8(ascii: "T"), !result.isEmpty { throw fail(start, "the type ('T') must come first") }
            if result.last?.name == "V" { throw fail(start, "the backing ivar ('V') must come last") }
            result.append(PropertyAttribute(shown, value))
            start = end + 1
        }
        guard result.first?.name == "T" else { throw fail(0, "the type ('T…') must come first") }
        if seen.intersection(Set("C&W".utf8)).count > 1 {
            throw fail(0, "at most one of copy ('C'), retain ('&') and weak ('W')")
        }
        return result
    }

    /// Checks a list (the C API's form) by spelling it and parsing that.
    static func check(_ list: [PropertyAttribute]) throws(RuntimeError) -> [PropertyAttribute] {
        for a in list where a.name.utf8.count != 1 {
            throw .malformedEncoding(.init(actual: a.name, offset: 0, reason: "property attributes: a name is one character, not '\(a.name)'"))
        }
        let spelled = string(list)
        let parsed = try parse(spelled)
        guard parsed == list else {
            throw .malformedEncoding(.init(actual: spelled, offset: 0, reason: "property attributes: a value contains a comma outside quotes"))
        }
        return parsed
    }

    /// The attribute string of a list.
    static func string(_ list: [PropertyAttribute]) -> String { list.map(\.description).joined(separator: ",") }

    /// A property type is one type encoding; blocks (`@?`) and `@"Class"` are allowed.
    private static func checkType(_ value: String, offset: Int, string: String) throws(RuntimeError) {
        if value == "@?" { return }
        var parser = TypeEncodingParser(value)
        do throws(RuntimeError) {
            _ = try parser.parseType(allowVoid: false)
            if !parser.atEnd { throw parser.fail("one type expected, more follows") }
        } catch let .malformedEncoding(context) {
            throw .malformedEncoding(.init(actual: string, offset: offset + (context.offset ?? 0),
                                           reason: "property type: " + (context.reason ?? "")))
        } catch {
            throw error
        }
    }
}
