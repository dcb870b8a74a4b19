import CDynamicRuntime

/// Parses encodings such as `"q@:qq"` or `"{Point=dd}@:{Point=dd}d"`.
///
/// Accepts the forms Objective-C compilers emit: stack offsets after each type (`q24@0:8`),
/// type qualifiers (`r`, `n`, `N`, `o`, `O`, `R`, `V`), quoted class names (`@"Name"`),
/// blocks (`@?`) and C arrays (`[4i]`, `[2[3{P=dd}]]`).
struct TypeEncodingParser {
    let text: String
    let bytes: [UInt8]
    var index = 0

    init(_ text: String) {
        self.text = text
        self.bytes = Array(text.utf8)
    }

    func fail(_ reason: String, at offset: Int? = nil) -> RuntimeError {
        let at = offset ?? index
        let shown: String
        if at < bytes.count {
            shown = "character '\(String(decoding: [bytes[at]], as: UTF8.self))': "
        } else {
            shown = "end of encoding: "
        }
        return .malformedEncoding(.init(actual: text, offset: at, reason: shown + reason))
    }

    var atEnd: Bool { index >= bytes.count }

    mutating func skipQualifiers() {
        while !atEnd, "rnNoORV".utf8.contains(bytes[index]) { index += 1 }
    }

    mutating func skipOffset() {
        if !atEnd, bytes[index] == UInt8(ascii: "-") { index += 1 }
        while !atEnd, bytes[index] >= UInt8(ascii: "0"), bytes[index] <= UInt8(ascii: "9") { index += 1 }
    }

    /// The whole method signature: a return type, then the arguments.
    mutating func parseSignature() throws(RuntimeError) -> (TypeEncoding, [TypeEncoding]) {
        guard !bytes.isEmpty else { throw fail("empty encoding; expected a return type") }
        let ret = try parseType(allowVoid: true)
        if case .array = ret { throw fail("a C array cannot be returned; return a pointer ('^')", at: 0) }
        skipOffset()
        var args: [TypeEncoding] = []
        while !atEnd {
            let start = index
            let t = try parseType(allowVoid: false)
            if args.isEmpty, t != .object, t != .classObject {
                throw fail("the first argument is the receiver and must be '@' or '#', not '\(t.encoding)'", at: start)
            }
            if args.count == 1, t != .selector {
                throw fail("the second argument is the selector and must be ':', not '\(t.encoding)'", at: start)
            }
            args.append(t)
            skipOffset()
        }
        if args.count < 2 {
            throw fail("a method encoding needs the receiver '@' and the selector ':' after the return type")
        }
        if args.count > 64 {
            throw fail("more than 64 arguments")
        }
        return (ret, args)
    }

    /// Exactly one type (an ivar's), with an optional offset after it.
    mutating func parseSingleType() throws(RuntimeError) -> TypeEncoding {
        let t = try parseType(allowVoid: false)
        skipOffset()
        guard atEnd else { throw fail("expected exactly one type") }
        return t
    }

    mutating func parseType(allowVoid: Bool, depth: Int = 0) throws(RuntimeError) -> TypeEncoding {
        skipQualifiers()
        guard !atEnd else { throw fail("expected a type") }
        guard depth < 32 else { throw fail("types nested more than 32 deep") }
        let start = index
        let c = bytes[index]
        index += 1
        switch c {
        case UInt8(ascii: "v"):
            guard allowVoid else { throw fail("'v' (void) is only valid as a return type or pointee", at: start) }
            return .void
        case UInt8(ascii: "@"):
            if !atEnd, bytes[index] == UInt8(ascii: "?") {
                index += 1
                return .block
            }
            if !atEnd, bytes[index] == UInt8(ascii: "\"") {
                index += 1
                while !atEnd, bytes[index] != UInt8(ascii: "\"") { index += 1 }
                guard !atEnd else { throw fail("unterminated class name after '@'", at: start) }
                index += 1
            }
            return .object
        case UInt8(ascii: "^"):
            guard !atEnd else { throw fail("'^' needs a pointee type", at: start) }
            if bytes[index] == UInt8(ascii: "?") {
                index += 1
                return .pointer(nil)
            }
            if bytes[index] == UInt8(ascii: "{") {
                // Behind a pointer a struct may be opaque (`^{Name=}`): only by-value needs fields.
                let structStart = index
                index += 1
                return .pointer(try parseStruct(start: structStart, depth: depth + 1, opaqueAllowed: true))
            }
            return .pointer(try parseType(allowVoid: true, depth: depth + 1))
        case UInt8(ascii: "{"):
            return try parseStruct(start: start, depth: depth)
        case UInt8(ascii: "["):
            return try parseArray(start: start, depth: depth)
        case UInt8(ascii: "("):
            throw fail("unions are not supported by value; pass a pointer ('^')", at: start)
        case UInt8(ascii: "b"):
            throw fail("bit fields are not supported", at: start)
        case UInt8(ascii: "?"):
            throw fail("unknown type '?' is not supported", at: start)
        default:
            if let scalar = TypeEncoding.scalar(for: c) { return scalar }
            throw fail("unknown type code", at: start)
        }
    }

    /// `[Ntype]` after its `[`: a decimal count (0 allowed, as objc4 does: a zero-length
    /// array), one element type, `]`.
    mutating func parseArray(start: Int, depth: Int) throws(RuntimeError) -> TypeEncoding {
        var count = 0
        let digits = index
        while !atEnd, bytes[index] >= UInt8(ascii: "0"), bytes[index] <= UInt8(ascii: "9") {
            count = count * 10 + Int(bytes[index] - UInt8(ascii: "0"))
            guard count <= TypeEncoding.maximumArrayCount else {
                throw fail("array of more than \(TypeEncoding.maximumArrayCount) elements", at: start)
            }
            index += 1
        }
        guard index > digits else { throw fail("'[' needs an element count, e.g. '[4i]'") }
        guard !atEnd, bytes[index] != UInt8(ascii: "]") else {
            throw fail("array needs an element type after its count", at: atEnd ? start : nil)
        }
        let element = try parseType(allowVoid: false, depth: depth + 1)
        guard !atEnd, bytes[index] == UInt8(ascii: "]") else {
            throw fail("unterminated array; expected ']' after one element type", at: atEnd ? start : nil)
        }
        index += 1
        return .array(count: count, element: element)
    }

    mutating func parseStruct(start: Int, depth: Int, opaqueAllowed: Bool = false) throws(RuntimeError) -> TypeEncoding {
        let nameStart = index
        while !atEnd, bytes[index] != UInt8(ascii: "="), bytes[index] != UInt8(ascii: "}") {
            if bytes[index] == UInt8(ascii: "{") { throw fail("'{' inside a struct name") }
            // The canonical encoding keeps the name and is also handed to C as a NUL-terminated
            // string (sf_method_getTypeEncoding): a NUL would silently truncate it there.
            if bytes[index] == 0 { throw fail("NUL inside a struct name") }
            index += 1
        }
        guard !atEnd else { throw fail("unterminated struct; expected '=' and '}'", at: start) }
        let name = String(decoding: bytes[nameStart..<index], as: UTF8.self)
        if bytes[index] == UInt8(ascii: "}") {
            guard opaqueAllowed else {
                throw fail("struct '\(name)' has no fields; its layout must be spelled out", at: start)
            }
            index += 1
            return .structure(name: name, fields: [])
        }
        index += 1  // '='
        var fields: [TypeEncoding] = []
        while !atEnd, bytes[index] != UInt8(ascii: "}") {
            if bytes[index] == UInt8(ascii: "\"") {
                // Field names, as some compilers emit them: skip.
                index += 1
                while !atEnd, bytes[index] != UInt8(ascii: "\"") { index += 1 }
                guard !atEnd else { throw fail("unterminated field name", at: start) }
                index += 1
                continue
            }
            fields.append(try parseType(allowVoid: false, depth: depth + 1))
        }
        guard !atEnd else { throw fail("unterminated struct '\(name)'; expected '}'", at: start) }
        index += 1
        if fields.isEmpty, !opaqueAllowed { throw fail("struct '\(name)' has no fields", at: start) }
        return .structure(name: name, fields: fields)
    }
}
