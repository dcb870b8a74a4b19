import CDynamicRuntime

/// A method call's frame: its receiver, selector, arguments and return value, read and written
/// with checks against the method's signature. `Invocation` is a record's own frame (it can be
/// kept and replayed); `HookContext` is a live call's, valid while the hook runs. Both read
/// and write through the accessors below, so they speak the same names and throw the same
/// errors, and code that only inspects a call can take `some MessageFrame`.
///
/// Only the runtime's two frames conform: the underscored requirements are how the accessors
/// reach a frame's storage, not API.
public protocol MessageFrame {
    /// The method's types.
    var signature: Signature { get }
    /// The receiver.
    var target: ObjectRef { get }
    /// The selector that was sent.
    var selector: Selector { get }
    /// The slot of `position` in the full argument list (0 is the receiver, 1 the selector).
    func _argumentSlot(_ position: Int) -> UnsafeMutableRawPointer
    /// The return storage.
    var _returnSlot: UnsafeMutableRawPointer { get }
    /// The class and selector that errors name.
    var _errorContext: (className: String, selector: String) { get }
    /// Writes argument `position` of type `type` (a record that retains its arguments retains
    /// the new value and releases the old one).
    func _writeArgument(_ position: Int, type: TypeEncoding, _ write: (UnsafeMutableRawPointer) -> Void)
    /// Drops an object the return storage owns, then writes a new (+1 for objects) value.
    func _replaceReturn(_ write: (UnsafeMutableRawPointer) -> Void)
}

extension MessageFrame {
    private var access: CallFrameAccess<Self> { CallFrameAccess(frame: self) }

    /// Argument `index` (0 is the first after the selector), checked against the signature.
    ///
    /// - Throws: `invalidArgument` for an index out of range, `signatureMismatch` when `T` is
    ///   not the argument's type.
    public func argument<T: MessageArgument>(at index: Int, as _: T.Type = T.self) throws(RuntimeError) -> T {
        try access.argument(at: index)
    }

    /// Sets argument `index`, checked as `argument(at:as:)` is. An invocation whose arguments
    /// are retained retains objects and copies C strings; a hook's frame borrows the value for
    /// the rest of the call (keep objects alive).
    public func setArgument<T: MessageArgument>(_ value: T, at index: Int) throws(RuntimeError) {
        try access.setArgument(value, at: index)
    }

    /// Argument `index` as a dynamic value.
    public func argumentValue(at index: Int) throws(RuntimeError) -> DynamicValue {
        try access.argumentValue(at: index)
    }

    /// All arguments after the selector, as dynamic values.
    public var argumentValues: [DynamicValue] { access.argumentValues }

    /// The return value (in a hook: so far, zero until the original runs or a hook sets it).
    /// Objects come back retained for the caller.
    public func returnValue<T: MessageReturn>(as _: T.Type = T.self) throws(RuntimeError) -> T {
        try access.returnValue()
    }

    /// The return value as a dynamic value.
    public var returnValue: DynamicValue { access.returnDynamicValue }

    /// Sets the return value the caller receives (an object is retained for it).
    public func setReturnValue<T: MessageReturn>(_ value: T) throws(RuntimeError) {
        try access.setReturnValue(value)
    }

    /// Sets the return value from a dynamic value of the right type.
    public func setReturnValue(_ value: DynamicValue) throws(RuntimeError) {
        try access.setReturnValue(value)
    }

    /// Who reads or writes the frame, as type errors name it.
    var user: String { self is HookContext ? "the hook" : "the invocation" }
}

/// Checked access to a frame: indices and types against its signature, byte counts of struct
/// values, ownership of returned objects.
struct CallFrameAccess<Frame: MessageFrame> {
    let frame: Frame

    private var argumentTypes: [TypeEncoding] { frame.signature.argumentTypes }

    /// The type of argument `index` (0 is the first after the selector), if in range.
    private func type(at index: Int) throws(RuntimeError) -> TypeEncoding {
        let types = argumentTypes
        guard index >= 0, index < types.count - 2 else {
            let (className, selector) = frame._errorContext
            throw .invalidArgument(.init(className: className, selector: selector, expected: "an argument index in 0..<\(types.count - 2)", actual: "\(index)"))
        }
        return types[index + 2]
    }

    /// The type of argument `index`, checked against the type it is used as.
    private func type(at index: Int, usedAs used: TypeEncoding) throws(RuntimeError) -> TypeEncoding {
        let want = try type(at: index)
        guard want.isCompatible(with: used) else {
            let (className, selector) = frame._errorContext
            throw .signatureMismatch(.init(className: className, selector: selector, argument: index + 1, operation: frame.user,
                                           expected: want.encoding, actual: used.encoding))
        }
        return want
    }

    private func checkReturn(_ used: TypeEncoding, _ how: String) throws(RuntimeError) {
        let sig = frame.signature
        guard sig.returnType.isCompatible(with: used) else {
            let (className, selector) = frame._errorContext
            throw .signatureMismatch(.init(className: className, selector: selector, operation: "\(frame.user) (\(how))",
                                           expected: sig.returnType.encoding, actual: used.encoding, isReturnValue: true))
        }
    }

    func argument<T: MessageArgument>(at index: Int) throws(RuntimeError) -> T {
        _ = try type(at: index, usedAs: T.typeEncoding)
        let slot = frame._argumentSlot(index + 2)
        if !T.acceptsNull, slot.load(as: UnsafeRawPointer?.self) == nil {
            let (className, selector) = frame._errorContext
            throw .invalidArgument(.init(className: className, selector: selector, argument: index + 1, operation: frame.user,
                                         expected: "a non-optional \(T.self)", actual: "NULL"))
        }
        return T(argumentStorage: slot)
    }

    /// Refuses a `String` with a NUL character, which cannot cross as a C string.
    private func checkString<T>(_ value: T, argument: Int?) throws(RuntimeError) {
        guard T.self == String.self, let offset = (value as! String).offsetOfNUL else { return }
        let (className, selector) = frame._errorContext
        throw String.nulError(offset, className: className, selector: selector, argument: argument, operation: frame.user)
    }

    func setArgument<T: MessageArgument>(_ value: T, at index: Int) throws(RuntimeError) {
        try checkString(value, argument: index + 1)
        let want = try type(at: index, usedAs: (value as? DynamicValue)?.typeEncoding ?? T.typeEncoding)
        if let dynamic = value as? DynamicValue {
            let (className, selector) = frame._errorContext
            try dynamic.checkByteCount(size: frame.signature.storage.argumentSizes[index + 2], of: want,
                                       what: "argument \(index + 1)", className: className, selector: selector)
        }
        frame._writeArgument(index + 2, type: want) { value.storeArgument(to: $0) }
    }

    func argumentValue(at index: Int) throws(RuntimeError) -> DynamicValue {
        DynamicValue.load(try type(at: index), from: frame._argumentSlot(index + 2), isReturn: false)
    }

    var argumentValues: [DynamicValue] {
        let types = argumentTypes
        return (2..<max(types.count, 2)).map { DynamicValue.load(types[$0], from: frame._argumentSlot($0), isReturn: false) }
    }

    /// The return value; an object comes back retained for the caller.
    func returnValue<T: MessageReturn>() throws(RuntimeError) -> T {
        try checkReturn(T.returnEncoding, "read")
        let ret = frame._returnSlot
        if frame.signature.returnType.isRetainedObject, let o = ret.load(as: sf_id?.self) { sf_retain_inline(o) }
        return T(returnStorage: ret)
    }

    var returnDynamicValue: DynamicValue {
        DynamicValue.load(frame.signature.returnType, from: frame._returnSlot, isReturn: false)
    }

    func setReturnValue<T: MessageReturn>(_ value: T) throws(RuntimeError) {
        try checkReturn(T.returnEncoding, "set")
        try checkString(value, argument: nil)
        frame._replaceReturn { value.storeReturn(to: $0) }
    }

    func setReturnValue(_ value: DynamicValue) throws(RuntimeError) {
        try checkReturn(value.typeEncoding, "set")
        let sig = frame.signature
        let (className, selector) = frame._errorContext
        try value.checkByteCount(size: Int(sf_ffi_type_size(sig.raw.pointee.return_type)), of: sig.returnType,
                                 what: "the return value", className: className, selector: selector)
        frame._replaceReturn { value.store(to: $0, isReturn: true) }
    }
}
