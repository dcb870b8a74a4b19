import CDynamicRuntime

/// How a return value comes back from a C call.
public enum ReturnKind: Sendable {
    /// In an integer register.
    case word
    /// In a floating-point register, as a double.
    case double
    /// In a floating-point register, as a float.
    case float
    /// Through memory or in a way only libffi handles.
    case other
}

/// A Swift type that a method can return. Object returns are +1: the caller owns them.
public protocol MessageReturn {
    /// The type's encoding.
    static var returnEncoding: TypeEncoding { get }
    /// Reads (and takes ownership of) a return value from libffi's return storage.
    init(returnStorage: UnsafeRawPointer)
    /// Writes the value to return storage, giving the caller a +1 reference for objects.
    func storeReturn(to storage: UnsafeMutableRawPointer)
    /// The 5-bit code of the return type in a signature key.
    static var returnKeyCode: UInt64 { get }
    /// How the value is returned by a C function.
    static var returnKind: ReturnKind { get }
}

extension MessageReturn {
    /// The return type's code in a signature's packed key.
    public static var returnKeyCode: UInt64 { returnEncoding.keyCode }
    /// How the value comes back from a C call.
    public static var returnKind: ReturnKind { .other }

    /// Rebuilds a value returned in a register.
    @inlinable @inline(__always)
    static func fromRegister<T>(_ value: T) -> Self {
        withUnsafeBytes(of: value) { Self(returnStorage: $0.baseAddress!) }
    }
}

extension MessageReturn where Self: WordRepresentable {
    /// How the value comes back from a C call.
    public static var returnKind: ReturnKind { .word }
}

/// A type usable both as an argument and as a return value.
public typealias MessageValue = MessageArgument & MessageReturn

/// Types passed in one integer register: lets typed sends call an IMP without libffi.
public protocol WordRepresentable {
    /// The value widened to a register, sign- or zero-extended as C would.
    var word: UInt64 { get }
    /// Rebuilds the value from a register (truncating to the type's width).
    init(word: UInt64)
}
