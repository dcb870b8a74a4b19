import CDynamicRuntime
import DynamicRuntime

/// The type-encoding parser: `Signature(text)` for any text must return a signature that
/// satisfies the invariants below, or throw `RuntimeError.malformedEncoding` naming the text,
/// an offset inside it and a reason.
///
/// The input is the encoding, as UTF-8 (invalid bytes are repaired to U+FFFD, as any Swift
/// String would be). The C API gets the same text (up to its first NUL) through
/// `sf_class_addIvar`, which parses "v@:" + type.
enum EncodingFuzzer {
    static func run(_ data: [UInt8], options: FuzzOptions) -> FuzzResult {
        let text = String(decoding: data, as: UTF8.self)
        let result: FuzzResult
        do {
            let sig = try Signature(text)
            if let broken = check(sig, text: text) { return .violation(broken) }
            result = .accepted
        } catch {
            if let broken = check(error, text: text) { return .violation(broken) }
            result = .rejected("malformedEncoding")
        }
        if let broken = checkIvarPath(data) { return .violation(broken) }
        return result
    }

    /// Invariants of a parsed signature.
    static func check(_ sig: Signature, text: String) -> String? {
        let args = sig.argumentTypes
        guard args.count >= 2, args.count <= 64 else { return "\(text.debugDescription): \(args.count) arguments accepted" }
        guard args[0] == .object || args[0] == .classObject else { return "\(text.debugDescription): receiver type \(args[0])" }
        guard args[1] == .selector else { return "\(text.debugDescription): selector type \(args[1])" }
        guard !args.dropFirst(2).contains(.void) else { return "\(text.debugDescription): a void argument was accepted" }
        let canonical = sig.returnType.encoding + args.map(\.encoding).joined()
        guard sig.encoding == canonical else { return "\(text.debugDescription): encoding \(sig.encoding) is not the canonical \(canonical)" }
        // The canonical form parses to the very same (interned) signature.
        guard let again = try? Signature(sig.encoding), again == sig else {
            return "\(text.debugDescription): canonical form \(sig.encoding.debugDescription) does not round-trip"
        }
        let raw = sig.raw.pointee
        guard Int(raw.nargs) == args.count else { return "\(text.debugDescription): nargs \(raw.nargs) for \(args.count) types" }
        guard String(cString: raw.types) == sig.encoding else { return "\(text.debugDescription): C types differ from the encoding" }
        // Every type the parser accepts can be held by an invocation and read back.
        let inv = Invocation(signature: sig, target: ObjectRef.nil, selector: Selector("fuzz:"))
        let values = inv.argumentValues
        guard values.count == sig.explicitArgumentCount else { return "\(text.debugDescription): \(values.count) argument values" }
        for (value, type) in zip(values, args.dropFirst(2)) where !type.isCompatibleForFuzz(with: value.typeEncoding) {
            return "\(text.debugDescription): argument of type \(type) read back as \(value.typeEncoding)"
        }
        _ = inv.returnValue.description
        _ = inv.description
        do {
            try inv.invoke()  // nil target: a no-op that zeroes the return value
        } catch {
            return "\(text.debugDescription): invoking with a nil target threw \(error)"
        }
        return nil
    }

    /// A parse error must be a malformed-encoding error that points inside the text.
    static func check(_ error: RuntimeError, text: String) -> String? {
        guard case let .malformedEncoding(context) = error, let encoding = context.actual,
              let offset = context.offset, let reason = context.reason else {
            return "\(text.debugDescription): unexpected error \(error)"
        }
        guard encoding == text else { return "\(text.debugDescription): error names \(encoding.debugDescription)" }
        guard offset >= 0, offset <= text.utf8.count else { return "\(text.debugDescription): offset \(offset) outside the text" }
        guard !reason.isEmpty, error.description.contains("malformed type encoding") else {
            return "\(text.debugDescription): unclear message \(error.description.debugDescription)"
        }
        guard error.code == SF_ERR_BAD_ENCODING else { return "\(text.debugDescription): C code \(error.code)" }
        return nil
    }

    /// The C API parses ivar types as "v@:" + types; it must fail cleanly, never trap.
    static func checkIvarPath(_ data: [UInt8]) -> String? {
        guard let cls = fixtureClass else { return "could not create the ivar fixture class" }
        var text = data.prefix { $0 != 0 }.map { CChar(bitPattern: $0) }
        text.append(0)
        let name = "f"
        // Registered classes refuse ivars: the call exercises the type parse and the size
        // check, then fails with SF_ERR_CLASS_REGISTERED (or an encoding / size error first).
        let ok = sf_class_addIvar(cls.raw, name, 8, 3, text)
        if ok { return "sf_class_addIvar succeeded on a registered class" }
        let status = sf_last_error()
        guard status == SF_ERR_BAD_ENCODING || status == SF_ERR_INVALID_ARGUMENT || status == SF_ERR_CLASS_REGISTERED else {
            return "sf_class_addIvar(\(String(decoding: data.prefix { $0 != 0 }, as: UTF8.self).debugDescription)) failed with status \(status.rawValue)"
        }
        return nil
    }

    static let fixtureClass: RuntimeClass? = try? RuntimeClass(name: "SFFuzz.IvarFixture")
}

extension TypeEncoding {
    /// `isCompatible` as the runtime defines it, plus the widening DynamicValue does on load
    /// (`l`/`L` read back as Int64/UInt64, pointers as untyped pointers).
    func isCompatibleForFuzz(with other: TypeEncoding) -> Bool {
        switch (self, other) {
        case (.pointer, .pointer): return true
        // An array argument is passed, and read back, as a pointer; a block as an object.
        case (.array, .pointer), (.block, .object): return true
        case let (.structure(_, a), .structure(_, b)):
            return a.count == b.count && zip(a, b).allSatisfy { $0.isCompatibleForFuzz(with: $1) }
        default:
            return self == other || (self == .long && other == .int64) || (self == .unsignedLong && other == .uint64)
        }
    }
}
