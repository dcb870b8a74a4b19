import CDynamicRuntime

/// Everything a caller can get wrong, and every error a method body throws, each with a
/// ``Context`` naming the visible class, the selector or ivar, what was expected and what was
/// given.
///
/// Match the kind with a pattern (`catch RuntimeError.doesNotRecognizeSelector`) and read the
/// details from ``context`` (or the shortcuts ``className``, ``selector``, ``expected``,
/// ``actual``). An error a method body or hook threw arrives as ``implementationFailed(_:)``
/// with the original error in ``underlying``: `error.underlying as? Overdrawn`.
public enum RuntimeError: Error, Equatable, CustomStringConvertible, Sendable {
    /// No method, resolver or forwarding stage handled the message.
    case doesNotRecognizeSelector(Context)
    /// A class with this name is already registered (or being built).
    case duplicateClass(Context)
    /// A type encoding could not be parsed: `actual` is the encoding, `offset` the index of
    /// the offending character, `reason` what is wrong there.
    case malformedEncoding(Context)
    /// A closure, argument list, hook or return type does not match the method's signature:
    /// `expected` is the method's encoding, `actual` the one used by `operation`.
    case signatureMismatch(Context)
    /// An argument (of a send, an accessor or a runtime call) has the wrong type, count or
    /// value: `expected` and `actual` say how.
    case invalidArgument(Context)
    /// The class still has live instances or subclasses.
    case classInUse(Context)
    /// The method already exists on that class (use replace).
    case methodExists(Context)
    /// `operation` is only allowed before the class is registered.
    case classAlreadyRegistered(Context)
    /// `operation` needs a registered class.
    case classNotRegistered(Context)
    /// The class has no such method of its own (for remove or exchange).
    case noSuchMethod(Context)
    /// The selector is used by the runtime itself and cannot be hooked or replaced that way.
    case reservedSelector(Context)
    /// A hook could not be installed or removed.
    case hookFailed(Context)
    /// A forwarding stage returned something unusable.
    case forwardingFailed(Context)
    /// A method body, hook or C callback failed: a Swift error it threw is ``underlying``.
    case implementationFailed(Context)
    /// A protocol with this name is already registered (or being built).
    case duplicateProtocol(Context)
    /// An object's class cannot become `target` (`setClass`), or a class cannot take that
    /// superclass: `reason` names the sizes or the instances that forbid it.
    case incompatibleClass(Context)

    /// What the error is about.
    public var context: Context {
        switch self {
        case let .doesNotRecognizeSelector(c), let .duplicateClass(c), let .malformedEncoding(c),
             let .signatureMismatch(c), let .invalidArgument(c), let .classInUse(c), let .methodExists(c),
             let .classAlreadyRegistered(c), let .classNotRegistered(c), let .noSuchMethod(c),
             let .reservedSelector(c), let .hookFailed(c), let .forwardingFailed(c),
             let .implementationFailed(c), let .duplicateProtocol(c), let .incompatibleClass(c):
            c
        }
    }

    /// The visible class the error names (never a hidden per-object class), if any.
    public var className: String? { context.className }
    /// The selector the error names, if any.
    public var selector: String? { context.selector }
    /// What was expected, if the error compares.
    public var expected: String? { context.expected }
    /// What was given instead, if the error compares.
    public var actual: String? { context.actual }
    /// The error a method body, hook or forwarding handler threw, with its own type.
    public var underlying: (any Error)? { context.underlying }

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

    /// Records this error as the calling thread's last C error.
    func record() {
        sf_set_last_error(code, description)
    }
}
