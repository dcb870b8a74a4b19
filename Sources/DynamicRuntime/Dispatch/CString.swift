import CDynamicRuntime
import Glibc

/// A C string (`*`), borrowed or owned.
///
/// `CString(pointer)` borrows: the caller keeps the characters alive while the value is used,
/// and the runtime copies them only when an invocation retains its arguments. Values the
/// runtime reads out of a call (``DynamicValue`` arguments and return values, what a
/// ``MessageStream`` delivers) own a copy instead, so they stay valid after the call. Writing
/// an owned value into a call lends a fresh copy (see `String`'s ownership notes). Two values
/// are equal when their characters are (or both are NULL).
public struct CString: PointerMessageValue, Hashable, @unchecked Sendable {
    /// The characters, NUL-terminated; may be nil.
    public let pointer: UnsafePointer<CChar>?
    /// The copy this value owns, if any.
    private let owner: OwnedCharacters?

    /// Wraps a C string without copying it: the caller keeps it alive while it is used.
    public init(_ pointer: UnsafePointer<CChar>?) {
        self.pointer = pointer
        owner = nil
    }

    /// A value that owns a copy of `pointer`'s characters (nil stays nil).
    public init(copying pointer: UnsafePointer<CChar>?) {
        owner = pointer.flatMap { strdup($0) }.map(OwnedCharacters.init)
        self.pointer = owner.map { UnsafePointer($0.characters) }
    }

    /// A value that owns a copy of `string`, which must not contain a NUL character.
    public init(copying string: String) throws(RuntimeError) {
        if let offset = string.offsetOfNUL {
            throw String.nulError(offset, className: nil, selector: nil, argument: nil, operation: "a CString")
        }
        self = string.withCString { CString(copying: $0) }
    }

    /// Whether the value owns its characters (made by copying).
    public var ownsCharacters: Bool { owner != nil }

    /// The type's encoding.
    public static var typeEncoding: TypeEncoding { .cString }
    /// Reads a value from argument storage (borrowed).
    public init(argumentStorage: UnsafeRawPointer) { self.init(argumentStorage.load(as: UnsafePointer<CChar>?.self)) }
    /// Writes the value to argument storage: the pointer itself when borrowed, a copy lent to
    /// the thread when owned (the value may die before the call does).
    public func storeArgument(to storage: UnsafeMutableRawPointer) {
        let p = owner == nil ? pointer : pointer.flatMap { sf_lend_string(strdup($0)) }
        storage.storeBytes(of: p, as: UnsafePointer<CChar>?.self)
    }
    /// Reads a return value, copying the characters: a returned string may be lent only until
    /// the send that returned it ends.
    public init(returnStorage: UnsafeRawPointer) { self.init(copying: returnStorage.load(as: UnsafePointer<CChar>?.self)) }
    /// The value widened to a register.
    public var word: UInt64 { UInt64(UInt(bitPattern: pointer)) }
    /// Rebuilds the value from a register (borrowed).
    public init(word: UInt64) { self.init(UnsafePointer(bitPattern: UInt(word))) }
    /// The string's contents, or nil for a NULL pointer.
    public var string: String? { pointer.map { String(cString: $0) } }

    /// Equal when both are NULL or their characters are.
    public static func == (a: CString, b: CString) -> Bool {
        switch (a.pointer, b.pointer) {
        case (nil, nil): true
        case let (x?, y?): x == y || strcmp(x, y) == 0
        default: false
        }
    }

    /// Hashes the characters.
    public func hash(into hasher: inout Hasher) { hasher.combine(string) }
}

/// A malloc'd copy, freed with the last value that holds it.
private final class OwnedCharacters: @unchecked Sendable {
    let characters: UnsafeMutablePointer<CChar>
    init(_ characters: UnsafeMutablePointer<CChar>) { self.characters = characters }
    deinit { free(characters) }
}
