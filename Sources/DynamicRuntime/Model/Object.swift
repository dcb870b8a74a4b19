import CDynamicRuntime
import Glibc

/// An owning handle to a runtime object: retains on creation, releases when it goes away.
public final class Object: Hashable, @unchecked Sendable, CustomStringConvertible {
    /// The C object (+1 owned by this handle).
    public let raw: sf_id

    /// Takes over a +1 reference (e.g. from `sf_class_createInstance`).
    public init(adopting raw: sf_id) { self.raw = raw }

    /// Retains `raw` for the lifetime of this handle.
    public init(retaining raw: sf_id) {
        sf_retain_inline(raw)
        self.raw = raw
    }

    deinit { sf_release_inline(raw) }

    /// The non-owning reference.
    public var ref: ObjectRef { ObjectRef(raw) }

    /// Whether the two are the same (identity, not contents).
    public static func == (a: Object, b: Object) -> Bool { a.raw == b.raw }
    /// Hashes what `==` compares.
    public func hash(into hasher: inout Hasher) { hasher.combine(UnsafeRawPointer(raw)) }
    /// A readable form, for logs and test failures.
    public var description: String { ref.description }
}

extension Object: MessageArgument {
    /// The type's encoding.
    public static var typeEncoding: TypeEncoding { .object }
    /// Whether a NULL in argument storage is a valid value of the type.
    public static var acceptsNull: Bool { false }
    /// Reads a value from argument storage.
    public convenience init(argumentStorage: UnsafeRawPointer) {
        self.init(retaining: argumentStorage.load(as: sf_id.self))
    }
    /// Writes the value to argument storage (borrowed for the call: no retain).
    public func storeArgument(to storage: UnsafeMutableRawPointer) { storage.storeBytes(of: raw, as: sf_id.self) }
}

extension Optional: MessageArgument where Wrapped == Object {
    /// The type's encoding.
    public static var typeEncoding: TypeEncoding { .object }
    /// Reads a value from argument storage.
    public init(argumentStorage: UnsafeRawPointer) {
        self = argumentStorage.load(as: sf_id?.self).map { Object(retaining: $0) }
    }
    /// Writes the value to argument storage (borrowed for the call: no retain).
    public func storeArgument(to storage: UnsafeMutableRawPointer) { storage.storeBytes(of: self?.raw, as: sf_id?.self) }
}

extension Optional: MessageReturn where Wrapped == Object {
    /// The encoding of the type as a return value.
    public static var returnEncoding: TypeEncoding { .object }
    /// Takes ownership of the +1 reference the method returned.
    public init(returnStorage: UnsafeRawPointer) {
        self = returnStorage.load(as: sf_id?.self).map { Object(adopting: $0) }
    }
    /// Writes the value to return storage, giving the caller a +1 reference for objects.
    public func storeReturn(to storage: UnsafeMutableRawPointer) {
        if let raw = self?.raw { sf_retain_inline(raw) }
        storage.storeBytes(of: self?.raw, as: sf_id?.self)
    }
}

extension Optional: WordRepresentable where Wrapped == Object {
    /// The value widened to a register.
    public var word: UInt64 { UInt64(UInt(bitPattern: self?.raw)) }
    /// Adopts a +1 reference returned in a register.
    public init(word: UInt64) { self = sf_id(bitPattern: UInt(word)).map { Object(adopting: $0) } }
}
