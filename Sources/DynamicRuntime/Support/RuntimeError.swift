import CShims

/// Everything a caller can get wrong, with the class, selector and expectation named.
public enum RuntimeError: Error, Equatable, CustomStringConvertible, Sendable {
    /// No method, resolver or forwarding stage handled the message.
    case doesNotRecognizeSelector(className: String, selector: String, isClassMethod: Bool)
    /// A class with this name is already registered (or being built).
    case duplicateClass(name: String)
    /// A type encoding could not be parsed: `offset` is the index of the offending character.
    case malformedEncoding(encoding: String, offset: Int, reason: String)
    /// A closure, argument list or return type does not match the method's signature.
    case signatureMismatch(className: String, selector: String, expected: String, actual: String)
    /// An argument of a dynamic send has the wrong type or count.
    case invalidArgument(className: String, selector: String, reason: String)
    /// The class still has live instances or subclasses.
    case classInUse(name: String, reason: String)
    /// The method already exists on that class (use replace).
    case methodExists(className: String, selector: String)
    /// The operation is only allowed before the class is registered.
    case classAlreadyRegistered(name: String, operation: String)
    /// The operation needs a registered class.
    case classNotRegistered(name: String, operation: String)
    /// The class has no such method of its own (for remove or exchange).
    case noSuchMethod(className: String, selector: String)
    /// The selector is used by the runtime itself and cannot be hooked or replaced that way.
    case reservedSelector(className: String, selector: String, reason: String)
    /// A hook could not be installed or removed.
    case hookFailed(className: String, selector: String, reason: String)
    /// A forwarding stage returned something unusable.
    case forwardingFailed(className: String, selector: String, reason: String)
    /// A method implementation threw; the error is carried as text across the C boundary.
    case implementationFailed(className: String, selector: String, reason: String)
    /// A protocol with this name is already registered (or being built).
    case duplicateProtocol(name: String)
    /// An object's class cannot become `target` (`setClass`), or a class cannot take that
    /// superclass: the reason names the sizes or the instances that forbid it.
    case incompatibleClass(className: String, target: String, reason: String)

    /// The C API's code for this error.
    public var code: sf_status {
        switch self {
        case .doesNotRecognizeSelector: SF_ERR_UNRECOGNIZED_SELECTOR
        case .duplicateClass: SF_ERR_DUPLICATE_CLASS
        case .malformedEncoding: SF_ERR_BAD_ENCODING
        case .signatureMismatch: SF_ERR_SIGNATURE_MISMATCH
        case .invalidArgument: SF_ERR_INVALID_ARGUMENT
        case .classInUse: SF_ERR_CLASS_IN_USE
        case .methodExists: SF_ERR_METHOD_EXISTS
        case .classAlreadyRegistered, .classNotRegistered: SF_ERR_CLASS_REGISTERED
        case .noSuchMethod: SF_ERR_NO_SUCH_METHOD
        case .reservedSelector: SF_ERR_RESERVED_SELECTOR
        case .hookFailed: SF_ERR_HOOK
        case .forwardingFailed, .implementationFailed: SF_ERR_FORWARDING
        case .duplicateProtocol: SF_ERR_DUPLICATE_PROTOCOL
        case .incompatibleClass: SF_ERR_INCOMPATIBLE_CLASS
        }
    }

    /// A readable form, for logs and test failures.
    public var description: String {
        switch self {
        case let .doesNotRecognizeSelector(cls, sel, isMeta):
            "\(isMeta ? "+" : "-")[\(cls) \(sel)]: unrecognized selector sent to \(isMeta ? "class" : "instance")"
        case let .duplicateClass(name):
            "a class named '\(name)' is already registered"
        case let .malformedEncoding(encoding, offset, reason):
            "malformed type encoding \"\(encoding)\" at offset \(offset): \(reason)"
        case let .signatureMismatch(cls, sel, expected, actual):
            "-[\(cls) \(sel)] has signature \"\(expected)\", but the caller used \"\(actual)\""
        case let .invalidArgument(cls, sel, reason):
            "-[\(cls) \(sel)]: \(reason)"
        case let .classInUse(name, reason):
            "class '\(name)' is still in use: \(reason)"
        case let .methodExists(cls, sel):
            "-[\(cls) \(sel)] already exists; use replaceMethod to change it"
        case let .classAlreadyRegistered(name, op):
            "cannot \(op): class '\(name)' is already registered"
        case let .classNotRegistered(name, op):
            "cannot \(op): class '\(name)' is not registered yet"
        case let .noSuchMethod(cls, sel):
            "class '\(cls)' has no method '\(sel)' of its own"
        case let .reservedSelector(cls, sel, reason):
            "-[\(cls) \(sel)] is reserved: \(reason)"
        case let .hookFailed(cls, sel, reason):
            "cannot hook -[\(cls) \(sel)]: \(reason)"
        case let .forwardingFailed(cls, sel, reason):
            "forwarding -[\(cls) \(sel)] failed: \(reason)"
        case let .implementationFailed(cls, sel, reason):
            "-[\(cls) \(sel)] failed: \(reason)"
        case let .duplicateProtocol(name):
            "a protocol named '\(name)' is already registered"
        case let .incompatibleClass(cls, target, reason):
            "an instance of '\(cls)' cannot become '\(target)': \(reason)"
        }
    }

    /// Records this error as the calling thread's last C error.
    func record() {
        sf_set_last_error(code, description)
    }
}
