import CDynamicRuntime
import Glibc

/// A Swift `String` crosses a call as a C string (`*`), UTF-8 and NUL-terminated.
///
/// Ownership (docs/forwarding.md, "Strings"):
/// - **Read** (a closure method's argument, a hook's or an invocation's argument or return
///   value, a send's result): the characters are copied into a new `String` at once, so the
///   value never depends on the C string's lifetime. A NULL argument is a typed error; a NULL
///   return (a zeroed one: a throttled call deferred or dropped) reads as "" (read ``CString``
///   to tell NULL apart).
/// - **Written** (a send's argument, a closure method's return value, a value a hook or an
///   invocation sets): the runtime makes a copy and lends it to the thread until the send that
///   made it has read its result. A C caller of a Swift `String` method keeps the returned
///   `char *` until its `sf_autoreleasePoolPop` or the thread's exit. An invocation record owns
///   the copies of the strings set on it, and those it returns.
/// - A `String` containing a NUL character cannot cross as a C string: it is refused with
///   `invalidArgument` naming the class, selector and argument (or the return value).
extension String: MessageValue {
    /// The type's encoding.
    public static var typeEncoding: TypeEncoding { .cString }
    /// Whether a NULL in argument storage is a valid value of the type: no, it is an error.
    public static var acceptsNull: Bool { false }

    /// Copies the C string in argument storage ("" for NULL).
    public init(argumentStorage: UnsafeRawPointer) {
        self = argumentStorage.load(as: UnsafePointer<CChar>?.self).map { String(cString: $0) } ?? ""
    }

    /// Writes a copy lent to the thread for the duration of the call.
    public func storeArgument(to storage: UnsafeMutableRawPointer) {
        storage.storeBytes(of: lentCString(), as: UnsafePointer<CChar>?.self)
    }

    /// Copies the C string in return storage ("" for NULL).
    public init(returnStorage: UnsafeRawPointer) { self.init(argumentStorage: returnStorage) }

    /// Writes a copy lent to the thread until the caller's send has read it.
    public func storeReturn(to storage: UnsafeMutableRawPointer) {
        storage.storeBytes(of: lentCString(), as: UnsafePointer<CChar>?.self)
    }

    /// A copy lent to the calling thread (see the type's ownership notes).
    func lentCString() -> UnsafePointer<CChar>? {
        sf_lend_string(withCString { strdup($0) })
    }

    /// The UTF-8 offset of the first NUL, which a C string cannot carry; nil when there is none.
    @usableFromInline
    var offsetOfNUL: Int? {
        if let found = utf8.withContiguousStorageIfAvailable({ $0.firstIndex(of: 0) }) { return found }
        return utf8.firstIndex(of: 0).map { utf8.distance(from: utf8.startIndex, to: $0) }
    }

    /// The error for a string that cannot cross as a C string.
    @usableFromInline
    static func nulError(_ offset: Int, className: String?, selector: String?, argument: Int?, operation: String? = nil) -> RuntimeError {
        .invalidArgument(.init(className: className, selector: selector, argument: argument, operation: operation,
                               expected: "a String without NUL characters (it crosses as a C string)",
                               actual: "a NUL at UTF-8 offset \(offset)", isReturnValue: argument == nil))
    }
}

extension MessageReturn {
    /// Writes a closure method's return value, refusing a `String` that cannot cross as a C
    /// string. `args` is the call's frame, for the error's class and selector.
    @inlinable @inline(__always)
    func storeReturn(to storage: UnsafeMutableRawPointer, of args: UnsafeMutablePointer<UnsafeMutableRawPointer?>) throws(RuntimeError) {
        if Self.self == String.self, let offset = (self as! String).offsetOfNUL {
            throw String.nulReturnError(offset, args)
        }
        storeReturn(to: storage)
    }
}

extension String {
    /// The error for a closure method returning a string with a NUL, out of line.
    @usableFromInline
    static func nulReturnError(_ offset: Int, _ args: UnsafeMutablePointer<UnsafeMutableRawPointer?>) -> RuntimeError {
        let raw = args[0]!.load(as: sf_id?.self)
        let name = raw.flatMap(Forwarding.visibleClassName(of:)) ?? "nil"
        let sel = Selector(raw: args[1]!.load(as: sf_sel.self)).name
        return nulError(offset, className: name, selector: sel, argument: nil, operation: "the method's body")
    }
}
