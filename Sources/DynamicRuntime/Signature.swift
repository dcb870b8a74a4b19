import CShims
import Glibc

/// A method's types, parsed once and prepared for libffi (`ffi_cif`).
///
/// Signatures are interned by their canonical encoding and never freed, so comparing two
/// signatures is a pointer comparison and a method can hold a plain C pointer to its own.
public struct Signature: Hashable, Sendable, CustomStringConvertible {
    let storage: SignatureStorage

    /// Parses `encoding` (e.g. `"q@:qq"`), throwing `RuntimeError.malformedEncoding` with the
    /// offending offset when it cannot be parsed or libffi cannot describe it.
    public init(_ encoding: String) throws(RuntimeError) {
        storage = try SignatureTable.shared.signature(for: encoding)
    }

    init(storage: SignatureStorage) {
        self.storage = storage
    }

    init(raw: UnsafePointer<sf_signature>) {
        storage = Unmanaged<SignatureStorage>.fromOpaque(raw.pointee.swift).takeUnretainedValue()
    }

    /// The canonical encoding (no offsets or qualifiers).
    public var encoding: String { storage.encoding }
    /// The return type.
    public var returnType: TypeEncoding { storage.returnType }
    /// All argument types, the receiver and selector first.
    public var argumentTypes: [TypeEncoding] { storage.argumentTypes }
    /// The number of arguments after the receiver and selector.
    public var explicitArgumentCount: Int { storage.argumentTypes.count - 2 }
    /// The C signature, for the C API and libffi.
    public var raw: UnsafePointer<sf_signature> { UnsafePointer(storage.raw) }

    public var description: String { encoding }

    public static func == (a: Signature, b: Signature) -> Bool { a.storage === b.storage }
    public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(storage)) }

    /// Builds the encoding a Swift closure or call site implies.
    static func encoding(returning ret: TypeEncoding, arguments: [TypeEncoding]) -> String {
        ret.encoding + "@:" + arguments.map(\.encoding).joined()
    }
}

/// The immortal parsed form of a signature.
final class SignatureStorage: @unchecked Sendable {
    let encoding: String
    let returnType: TypeEncoding
    let argumentTypes: [TypeEncoding]
    let raw: UnsafeMutablePointer<sf_signature>
    /// Byte offset of each argument inside an invocation's frame.
    let argumentOffsets: [Int]
    let argumentSizes: [Int]
    /// Bytes the return value needs (at least a word: libffi widens small integers).
    let returnSize: Int
    let returnAlignment: Int
    /// Where the arguments sit in registers and on the stack (x86-64), for the trampoline
    /// entries and direct calls; nil when only libffi can carry the signature.
    let layout: UnsafeMutablePointer<sf_tramp_layout>?

    init(encoding: String, returnType: TypeEncoding, argumentTypes: [TypeEncoding],
         ffiReturn: UnsafeMutablePointer<ffi_type>, ffiArguments: [UnsafeMutablePointer<ffi_type>]) throws(RuntimeError) {
        self.encoding = encoding
        self.returnType = returnType
        self.argumentTypes = argumentTypes
        raw = .allocate(capacity: 1)
        let argv = UnsafeMutablePointer<UnsafeMutablePointer<ffi_type>?>.allocate(capacity: max(ffiArguments.count, 1))
        for (i, t) in ffiArguments.enumerated() { argv[i] = t }
        var offsets: [Int] = []
        var sizes: [Int] = []
        var frame = 0
        for t in ffiArguments {
            let size = max(Int(sf_ffi_type_size(t)), 1)
            let align = max(Int(sf_ffi_type_alignment(t)), 1)
            frame = (frame + align - 1) / align * align
            offsets.append(frame)
            sizes.append(size)
            frame += size
        }
        argumentOffsets = offsets
        argumentSizes = sizes
        returnSize = max(Int(sf_ffi_type_size(ffiReturn)), MemoryLayout<UInt64>.size)
        returnAlignment = max(Int(sf_ffi_type_alignment(ffiReturn)), MemoryLayout<UInt64>.alignment)

        var key: UInt64 = returnType.keyCode
        if key != 0, argumentTypes.count - 2 <= 11 {
            for (i, t) in argumentTypes.dropFirst(2).enumerated() {
                let code = t.keyCode
                if code == 0 { key = 0; break }
                key |= code << UInt64(5 * (i + 1))
            }
        } else {
            key = 0
        }
        raw.initialize(to: sf_signature())
        raw.pointee.return_type = ffiReturn
        raw.pointee.arg_types = argv
        raw.pointee.types = UnsafePointer(strdup(encoding))
        raw.pointee.key = key
        raw.pointee.nargs = UInt32(ffiArguments.count)
        raw.pointee.frame_size = UInt32(frame)
        let status = sf_ffi_prep_cif(&raw.pointee.cif, UInt32(ffiArguments.count), ffiReturn, argv)
        guard status == FFI_OK else {
            throw .malformedEncoding(encoding: encoding, offset: 0, reason: "libffi cannot prepare a call with these types (status \(status.rawValue))")
        }
        layout = sf_tramp_layout_create(&raw.pointee.cif)
        raw.pointee.swift = Unmanaged.passUnretained(self).toOpaque()
    }

    /// The key a typed call site computes for itself; equal keys mean compatible signatures.
    var key: UInt64 { raw.pointee.key }
}

/// Interns signatures and the libffi struct types they use.
final class SignatureTable: @unchecked Sendable {
    static let shared = SignatureTable()

    private let lock = RuntimeLock()
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
        let storage = try SignatureStorage(encoding: key, returnType: ret, argumentTypes: args,
                                           ffiReturn: ffiReturn, ffiArguments: ffiArgs)
        byEncoding[key] = storage
        byEncoding[text] = storage
        return storage
    }

    private func ffiType(for t: TypeEncoding, in text: String) throws(RuntimeError) -> UnsafeMutablePointer<ffi_type> {
        switch t {
        case let .structure(_, fields):
            let key = t.encoding
            if let cached = structTypes[key] { return cached }
            var elements: [UnsafeMutablePointer<ffi_type>?] = []
            for f in fields { elements.append(try ffiType(for: f, in: text)) }
            guard let made = elements.withUnsafeMutableBufferPointer({ sf_ffi_make_struct($0.baseAddress, $0.count) }) else {
                throw .malformedEncoding(encoding: text, offset: 0, reason: "libffi cannot lay out struct \(key)")
            }
            structTypes[key] = made
            return made
        default:
            let code = t.encoding.utf8.first!
            guard let scalar = sf_ffi_type_for_code(CChar(bitPattern: code)) else {
                throw .malformedEncoding(encoding: text, offset: 0, reason: "no libffi type for '\(t.encoding)'")
            }
            return scalar
        }
    }
}
