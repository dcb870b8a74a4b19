import CDynamicRuntime

/// A Swift caller's frame: laid out by the types the caller sent with (`signature`), so every
/// stage checks the method it reaches against them. A caller that states no return type
/// (void) gets a value that fits `unknownReturnCapacity` in `returnValue`; with `spill`, a
/// bigger one goes to a buffer made here for it (the caller deallocates `spill.pointee`),
/// otherwise it is refused. The outcome is the signature of what finally ran.
struct SwiftFrame: ForwardingFrame {
    let signature: Signature
    let arguments: UnsafeMutablePointer<UnsafeMutableRawPointer?>
    let returnValue: UnsafeMutableRawPointer
    var spill: UnsafeMutablePointer<UnsafeMutableRawPointer?>? = nil

    /// Swift callers that do not state a return type (dynamic sends, `as: Void.self`) pass a
    /// void signature with return storage of at least this many bytes
    /// (`MessageSend.withReturnStorage`, `InvocationStorage.make`).
    static let unknownReturnCapacity = 16

    func call(_ method: sf_method_t, on receiver: sf_id, _ selector: Selector, cls: sf_class_t) throws(RuntimeError) -> Signature {
        let sig = try checked(Signature(raw: sf_method_sig(method)), selector, cls: cls)
        sig.storage.call(sf_method_imp(method)!, destination(for: sig), arguments)
        try Runtime.rethrowPending()
        return sig
    }

    func send(to target: sf_id, _ selector: Selector) throws(RuntimeError) -> Signature {
        arguments[0]!.storeBytes(of: target, as: sf_id.self)
        let cls = sf_object_isa(target)!
        guard let m = sf_lookup_method(cls, selector.raw) else {
            return try Forwarding.handleMiss(target, selector, cls: cls, frame: self)
        }
        return try call(m, on: target, selector, cls: cls)
    }

    func invocationSignature(declared: Signature?, _ selector: Selector, cls: sf_class_t) throws(RuntimeError) -> Signature {
        try checked(declared ?? signature, selector, cls: cls)
    }

    func forwardHandlerSignature(declared: Signature?, _ selector: Selector, cls: sf_class_t) throws(RuntimeError) -> Signature? {
        try invocationSignature(declared: declared, selector, cls: cls)
    }

    func capture(_ signature: Signature, receiver: sf_id, _ selector: Selector, cls: sf_class_t) -> Invocation {
        Invocation.capture(signature: signature.storage, arguments: arguments)
    }

    func finish(_ invocation: Invocation, _ signature: Signature) -> Signature {
        invocation.storage.copyReturn(to: destination(for: signature))
        return signature
    }

    private func checked(_ sig: Signature, _ selector: Selector, cls: sf_class_t) throws(RuntimeError) -> Signature {
        guard accepts(sig) else {
            throw .signatureMismatch(.init(className: Forwarding.visibleName(cls), selector: selector.name, expected: sig.encoding, actual: signature.encoding))
        }
        return sig
    }

    /// Whether a method typed `sig` may run on this frame: the same types, or the same
    /// arguments for a caller that did not state a return type — when the value fits its
    /// storage or the caller takes a spill buffer. (A bigger struct would otherwise be written
    /// past the caller's buffer.)
    func accepts(_ sig: Signature) -> Bool {
        if sig.isCompatible(with: signature) { return true }
        return signature.storage.returnsVoid
            && sig.argumentTypes.count == signature.argumentTypes.count
            && zip(sig.argumentTypes.dropFirst(2), signature.argumentTypes.dropFirst(2)).allSatisfy { $0.isCompatible(with: $1) }
            && (spill != nil || sig.storage.returnSize <= Self.unknownReturnCapacity)
    }

    /// Where a method typed `sig` writes its return: the caller's storage, or a spill buffer
    /// when a void caller's storage is too small.
    private func destination(for sig: Signature) -> UnsafeMutableRawPointer {
        guard signature.storage.returnsVoid, sig.storage.returnSize > Self.unknownReturnCapacity, let spill else { return returnValue }
        let buffer = UnsafeMutableRawPointer.allocate(byteCount: sig.storage.returnSize, alignment: 16)
        buffer.initializeMemory(as: UInt8.self, repeating: 0, count: sig.storage.returnSize)
        spill.pointee?.deallocate()
        spill.pointee = buffer
        return buffer
    }
}
