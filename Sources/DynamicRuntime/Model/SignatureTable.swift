import CDynamicRuntime
import Glibc

/// Interns signatures and the libffi struct types they use.
final class SignatureTable: @unchecked Sendable {
    static let shared = SignatureTable()

    let lock = RuntimeLock()
    private var byEncoding: [String: SignatureStorage] = [:]
    private var structTypes: [String: UnsafeMutablePointer<ffi_type>] = [:]

    func signature(for text: String) throws(RuntimeError) -> SignatureStorage {
        lock.lock()
        defer { lock.unlock() }
        if let s = byEncoding[text] { return s }
        var parser = TypeEncodingParser(text)
        let (ret, args) = try parser.parseSignature()
        let key = ret.encoding + args.map(\.encoding).joined()
        if let s = byEncoding[key] {
            byEncoding[text] = s
            return s
        }
        let ffiReturn = try ffiType(for: ret, in: text)
        // An array argument is a pointer to its first element (C's rule, and NSMethodSignature's).
        let ffiArgs = try args.map { t throws(RuntimeError) in try ffiType(for: t.passedType, in: text) }
        let storage = try SignatureStorage(encoding: key, written: text, returnType: ret, argumentTypes: args,
                                           ffiReturn: ffiReturn, ffiArguments: ffiArgs)
        byEncoding[key] = storage
        byEncoding[text] = storage
        return storage
    }

    /// The size and alignment libffi gives `type`, with no limit on its size: an ivar is laid
    /// out in its object, never copied onto a stack as a by-value argument is.
    func layout(of type: TypeEncoding) throws(RuntimeError) -> (size: Int, alignment: Int) {
        switch type {
        case let .array(count, element):
            // Inline: `count` elements, no padding between them (an element's size is a
            // multiple of its alignment), so a zero-length array takes no bytes.
            let e = try layout(of: element)
            let (size, overflow) = e.size.multipliedReportingOverflow(by: count)
            guard !overflow, size <= RuntimeClass.maximumInstanceSize else {
                throw .malformedEncoding(.init(actual: type.encoding, offset: 0, reason: "array of \(count) \(e.size)-byte elements is larger than an instance may be"))
            }
            return (size, e.alignment)
        case let .structure(_, fields) where fields.contains(where: \.containsArray):
            // C's rules, as libffi applies them to a struct without arrays.
            var size = 0, alignment = 1
            for f in fields {
                let l = try layout(of: f)
                size = (size + l.alignment - 1) / l.alignment * l.alignment + l.size
                alignment = max(alignment, l.alignment)
            }
            return ((size + alignment - 1) / alignment * alignment, alignment)
        default:
            lock.lock()
            defer { lock.unlock() }
            let t = try ffiType(for: type, in: type.encoding)
            return (Int(sf_ffi_type_size(t)), max(Int(sf_ffi_type_alignment(t)), 1))
        }
    }

    private func ffiType(for t: TypeEncoding, in text: String) throws(RuntimeError) -> UnsafeMutablePointer<ffi_type> {
        switch t {
        case let .structure(_, fields):
            let key = t.encoding
            if let cached = structTypes[key] { return cached }
            var elements: [UnsafeMutablePointer<ffi_type>?] = []
            for f in fields { elements.append(try ffiType(for: f, in: text)) }
            guard let made = elements.withUnsafeMutableBufferPointer({ sf_ffi_make_struct($0.baseAddress, $0.count) }) else {
                throw .malformedEncoding(.init(actual: text, offset: 0, reason: "libffi cannot lay out struct \(key)"))
            }
            structTypes[key] = made
            return made
        case let .array(count, element):
            // Inside a struct passed by value: libffi has no array type; a struct of `count`
            // elements has the same size, alignment and classification.
            let key = t.encoding
            if let cached = structTypes[key] { return cached }
            let e = try ffiType(for: element, in: text)
            guard count > 0 else {
                throw .malformedEncoding(.init(actual: text, offset: 0, reason: "a zero-length array ('\(key)') cannot be passed by value inside a struct"))
            }
            guard Int(sf_ffi_type_size(e)) * count <= SignatureStorage.maxArgumentBytes else {
                throw .malformedEncoding(.init(actual: text, offset: 0, reason: "array '\(key)' is larger than the \(SignatureStorage.maxArgumentBytes) bytes a by-value argument may take (pass a pointer)"))
            }
            var elements = [UnsafeMutablePointer<ffi_type>?](repeating: e, count: count)
            guard let made = elements.withUnsafeMutableBufferPointer({ sf_ffi_make_struct($0.baseAddress, $0.count) }) else {
                throw .malformedEncoding(.init(actual: text, offset: 0, reason: "libffi cannot lay out array \(key)"))
            }
            structTypes[key] = made
            return made
        case .block:
            return TypeEncoding.object.scalarFFIType!
        default:
            guard let scalar = t.scalarFFIType else {
                throw .malformedEncoding(.init(actual: text, offset: 0, reason: "no libffi type for '\(t.encoding)'"))
            }
            return scalar
        }
    }
}
