import CDynamicRuntime

/// A Swift type that can travel as a method argument: it knows its type encoding and how to
/// read and write itself in libffi's argument storage.
public protocol MessageArgument {
    /// The type's encoding, e.g. `.int64` for `Int`.
    static var typeEncoding: TypeEncoding { get }
    /// Reads a value from argument storage.
    init(argumentStorage: UnsafeRawPointer)
    /// Writes the value to argument storage (borrowed for the call: no retain).
    func storeArgument(to storage: UnsafeMutableRawPointer)
    /// The 5-bit code of the type in a signature key (see `TypeEncoding.keyCode`).
    static var keyCode: UInt64 { get }
    /// Whether the value travels in one integer register (typed sends skip libffi then).
    static var passesInWord: Bool { get }
    /// The register value when `passesInWord`.
    var argumentWord: UInt64 { get }
    /// Whether a NULL in argument storage is a valid value of the type (false for `Selector`,
    /// `Object` and the non-optional pointer types): closure IMPs refuse NULL for the others.
    static var acceptsNull: Bool { get }
}

extension MessageArgument {
    /// Whether a NULL in argument storage is a valid value of the type.
    public static var acceptsNull: Bool { true }
    /// The type's code in a signature's packed key.
    public static var keyCode: UInt64 { typeEncoding.keyCode }
    /// Whether the value travels in one integer register.
    public static var passesInWord: Bool { false }
    /// The register value when `passesInWord`.
    public var argumentWord: UInt64 { 0 }
    static var storageSize: Int { MemoryLayout<Self>.size }
    /// Whether the type's key code names it alone (not `long`, a pointer or a struct), so a
    /// signature cached by key is the one its senders' types imply.
    @inlinable static var keyIsExact: Bool { keyCode != 0 && typeEncoding.isExactInKey }
}

extension MessageArgument where Self: WordRepresentable {
    /// Whether the value travels in one integer register.
    public static var passesInWord: Bool { true }
    /// The register value when `passesInWord`.
    public var argumentWord: UInt64 { word }
}

extension MessageArgument {
    /// Reads a value from argument storage, refusing a NULL the type cannot hold.
    /// `what` names the argument and is only built for the error.
    static func load(from p: UnsafeRawPointer, what: () -> (className: String, selector: String, position: Int))
        throws(RuntimeError) -> Self {
        if !acceptsNull, p.load(as: UnsafeRawPointer?.self) == nil {
            let (cls, sel, position) = what()
            throw .invalidArgument(.init(className: cls, selector: sel, argument: position, expected: "a non-optional \(Self.self)", actual: "NULL"))
        }
        return Self(argumentStorage: p)
    }

    /// Argument `index` of a closure IMP's frame (receiver and selector come first).
    /// Inlinable so that typed closure IMPs read their arguments without witness tables.
    @inlinable
    static func argument(_ args: UnsafeMutablePointer<UnsafeMutableRawPointer?>, _ index: Int) throws(RuntimeError) -> Self {
        let p = UnsafeRawPointer(args[index]!)
        if !acceptsNull, p.load(as: UnsafeRawPointer?.self) == nil {
            throw nullArgumentError(args, index)
        }
        return Self(argumentStorage: p)
    }

    /// The error for a NULL in argument `index`, out of line: only bad input builds it.
    @usableFromInline
    static func nullArgumentError(_ args: UnsafeMutablePointer<UnsafeMutableRawPointer?>, _ index: Int) -> RuntimeError {
        let raw = args[0]!.load(as: sf_id?.self)
        let name = raw.flatMap(Forwarding.visibleClassName(of:)) ?? "nil"
        return .invalidArgument(.init(className: name, selector: Selector(raw: args[1]!.load(as: sf_sel.self)).name, argument: index - 1, expected: "a non-optional \(Self.self)", actual: "NULL"))
    }
}
