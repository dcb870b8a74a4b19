import CShims
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
        let ffiArgs = try args.map { t throws(RuntimeError) in try ffiType(for: t, in: text) }
        let storage = try SignatureStorage(encoding: key, written: text, returnType: ret, argumentTypes: args,
                                           ffiReturn: ffiReturn, ffiArguments: ffiArgs)
        byEncoding[key] = storage
        byEncoding[text] = storage
        return storage
    }

    /// The size and alignment libffi gives `type`, with no limit on its size: an ivar is laid
    /// out in its object, never copied onto a stack as a by-value argument is.
    func layout(of type: TypeEncoding) throws(RuntimeError) -> (size: Int, alignment: Int) {
        lock.lock()
        defer { lock.unlock() }
        let t = try ffiType(for: type, in: type.encoding)
        return (Int(sf_ffi_type_size(t)), max(Int(sf_ffi_type_alignment(t)), 1))
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
        default:
            guard let scalar = t.scalarFFIType else {
                throw .malformedEncoding(.init(actual: text, offset: 0, reason: "no libffi type for '\(t.encoding)'"))
            }
            return scalar
        }
    }
}
