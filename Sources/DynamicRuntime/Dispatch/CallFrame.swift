import CShims

/// One call's frame as typed accessors need it: argument slots and return storage laid out
/// by `frameSignature`. `Invocation` (a record's own frame) and `HookContext` (a live call's)
/// supply the slots and their ownership rules; `CallFrameAccess` does the checked reading and
/// writing for both, so the two speak the same names and errors.
protocol CallFrame {
    /// The types the frame is laid out by.
    var frameSignature: Signature { get }
    /// The slot of `position` in the full argument list (0 is the receiver, 1 the selector).
    func argumentSlot(_ position: Int) -> UnsafeMutableRawPointer
    /// The return storage.
    var returnSlot: UnsafeMutableRawPointer { get }
    /// The class and selector that errors name.
    var errorContext: (className: String, selector: String) { get }
    /// Writes argument `position` of type `type` (a record that retains its arguments retains
    /// the new value and releases the old one).
    func writeArgument(_ position: Int, type: TypeEncoding, _ write: (UnsafeMutableRawPointer) -> Void)
    /// Drops an object the return storage owns, then writes a new (+1 for objects) value.
    func replaceReturn(_ write: (UnsafeMutableRawPointer) -> Void)
}

/// Checked access to a `CallFrame`: indices and types against its signature, byte counts of
/// struct values, ownership of returned objects.
extension CallFrame {
    /// Who reads or writes the frame, as type errors name it.
    var user: String { self is HookContext ? "the hook" : "the invocation" }
}

struct CallFrameAccess<Frame: CallFrame> {
    let frame: Frame

    private var argumentTypes: [TypeEncoding] { frame.frameSignature.argumentTypes }

    /// The type of argument `index` (0 is the first after the selector), if in range.
    private func type(at index: Int) throws(RuntimeError) -> TypeEncoding {
        let types = argumentTypes
        guard index >= 0, index < types.count - 2 else {
            let (className, selector) = frame.errorContext
            throw .invalidArgument(.init(className: className, selector: selector, expected: "an argument index in 0..<\(types.count - 2)", actual: "\(index)"))
        }
        return types[index + 2]
    }

    /// The type of argument `index`, checked against the type it is used as.
    private func type(at index: Int, usedAs used: TypeEncoding) throws(RuntimeError) -> TypeEncoding {
        let want = try type(at: index)
        guard want.isCompatible(with: used) else {
            let (className, selector) = frame.errorContext
            throw .signatureMismatch(.init(className: className, selector: selector, argument: index + 1, operation: frame.user,
                                           expected: want.encoding, actual: used.encoding))
        }
        return want
    }

    private func checkReturn(_ used: TypeEncoding, _ how: String) throws(RuntimeError) {
        let sig = frame.frameSignature
        guard sig.returnType.isCompatible(with: used) else {
            let (className, selector) = frame.errorContext
            throw .signatureMismatch(.init(className: className, selector: selector, operation: "\(frame.user) (\(how))",
                                           expected: sig.returnType.encoding, actual: used.encoding, isReturnValue: true))
        }
    }

    func argument<T: MessageArgument>(at index: Int) throws(RuntimeError) -> T {
        _ = try type(at: index, usedAs: T.typeEncoding)
        let slot = frame.argumentSlot(index + 2)
        if !T.acceptsNull, slot.load(as: UnsafeRawPointer?.self) == nil {
            let (className, selector) = frame.errorContext
            throw .invalidArgument(.init(className: className, selector: selector, argument: index + 1, operation: frame.user,
                                         expected: "a non-optional \(T.self)", actual: "NULL"))
        }
        return T(argumentStorage: slot)
    }

    /// Refuses a `String` with a NUL character, which cannot cross as a C string.
    private func checkString<T>(_ value: T, argument: Int?) throws(RuntimeError) {
        guard T.self == String.self, let offset = (value as! String).offsetOfNUL else { return }
        let (className, selector) = frame.errorContext
        throw String.nulError(offset, className: className, selector: selector, argument: argument, operation: frame.user)
    }

    func setArgument<T: MessageArgument>(_ value: T, at index: Int) throws(RuntimeError) {
        try checkString(value, argument: index + 1)
        let want = try type(at: index, usedAs: (value as? DynamicValue)?.typeEncoding ?? T.typeEncoding)
        if let dynamic = value as? DynamicValue {
            let (className, selector) = frame.errorContext
            try dynamic.checkByteCount(size: frame.frameSignature.storage.argumentSizes[index + 2], of: want,
                                       what: "argument \(index + 1)", className: className, selector: selector)
        }
        frame.writeArgument(index + 2, type: want) { value.storeArgument(to: $0) }
    }

    func argumentValue(at index: Int) throws(RuntimeError) -> DynamicValue {
        DynamicValue.load(try type(at: index), from: frame.argumentSlot(index + 2), isReturn: false)
    }

    var argumentValues: [DynamicValue] {
        let types = argumentTypes
        return (2..<max(types.count, 2)).map { DynamicValue.load(types[$0], from: frame.argumentSlot($0), isReturn: false) }
    }

    /// The return value; an object comes back retained for the caller.
    func returnValue<T: MessageReturn>() throws(RuntimeError) -> T {
        try checkReturn(T.returnEncoding, "read")
        let ret = frame.returnSlot
        if frame.frameSignature.returnType == .object, let o = ret.load(as: sf_id?.self) { sf_retain_inline(o) }
        return T(returnStorage: ret)
    }

    var returnDynamicValue: DynamicValue {
        DynamicValue.load(frame.frameSignature.returnType, from: frame.returnSlot, isReturn: false)
    }

    func setReturnValue<T: MessageReturn>(_ value: T) throws(RuntimeError) {
        try checkReturn(T.returnEncoding, "set")
        try checkString(value, argument: nil)
        frame.replaceReturn { value.storeReturn(to: $0) }
    }

    func setReturnValue(_ value: DynamicValue) throws(RuntimeError) {
        try checkReturn(value.typeEncoding, "set")
        let sig = frame.frameSignature
        let (className, selector) = frame.errorContext
        try value.checkByteCount(size: Int(sf_ffi_type_size(sig.raw.pointee.return_type)), of: sig.returnType,
                                 what: "the return value", className: className, selector: selector)
        frame.replaceReturn { value.store(to: $0, isReturn: true) }
    }
}
