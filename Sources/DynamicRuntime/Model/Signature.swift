import CDynamicRuntime
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
        storage = ObjectWord<SignatureStorage>(raw.pointee.swift).object
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

    /// A readable form, for logs and test failures.
    public var description: String { encoding }

    /// Whether the two are the same (identity, not contents).
    public static func == (a: Signature, b: Signature) -> Bool { a.storage === b.storage }
    /// Hashes what `==` compares.
    public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(storage)) }

    /// Builds the encoding a Swift closure or call site implies.
    static func encoding(returning ret: TypeEncoding, arguments: [TypeEncoding]) -> String {
        ret.encoding + "@:" + arguments.map(\.encoding).joined()
    }
}
