import CShims

/// The forwarding path, in Objective-C's order, run when lookup finds no method:
///
/// 1. `resolveInstanceMethod:` / `resolveClassMethod:` may add the method; the send retries.
/// 2. `forwardingTargetForSelector:` may name another object, which gets the same frame.
/// 3. `methodSignatureForSelector:` (or the caller's own types) then `forwardInvocation:`
///    with an `Invocation`, whose return value becomes the caller's.
/// 4. `doesNotRecognizeSelector:` runs if defined; the caller gets a thrown error (Swift) or
///    SF_ERR_UNRECOGNIZED_SELECTOR (C). The process never traps.
enum Forwarding {
    static let resolveInstanceMethod = Selector("resolveInstanceMethod:")
    static let resolveClassMethod = Selector("resolveClassMethod:")
    static let forwardingTarget = Selector("forwardingTargetForSelector:")
    static let methodSignature = Selector("methodSignatureForSelector:")
    static let forwardInvocation = Selector("forwardInvocation:")
    static let doesNotRecognize = Selector("doesNotRecognizeSelector:")

    static let maximumDepth = 64

    /// Selectors whose methods define forwarding itself: not hookable.
    static let reserved: Set<Selector> = [resolveInstanceMethod, resolveClassMethod, forwardingTarget,
                                          methodSignature, forwardInvocation, doesNotRecognize]

    /// Handles a miss for a Swift send, whose frame is laid out by the caller's `signature`.
    /// Returns the signature of what finally ran (its return type is in `returnValue`).
    ///
    /// A caller that states no return type (void) gets a value that fits `unknownReturnCapacity`
    /// in `returnValue`; with `spill`, a bigger one goes to a buffer made here for it (the caller
    /// deallocates `spill.pointee`), otherwise it is refused.
    @discardableResult
    static func handleMiss(_ raw: sf_id, _ selector: Selector, cls: sf_class_t, signature: Signature,
                           arguments: UnsafeMutablePointer<UnsafeMutableRawPointer?>,
                           returnValue: UnsafeMutableRawPointer,
                           spill: UnsafeMutablePointer<UnsafeMutableRawPointer?>? = nil) throws(RuntimeError) -> Signature {
        try guardDepth(cls, selector)
        defer { sf_forward_depth_exit() }

        if try resolve(raw, selector, cls), let m = sf_lookup_method(cls, selector.raw) {
            return try call(m, raw, selector, cls: cls, callerSignature: signature, arguments: arguments,
                            returnValue: returnValue, spill: spill)
        }
        return try forwardStages(raw, selector, cls: cls, signature: signature, arguments: arguments,
                                 returnValue: returnValue, spill: spill)
    }

    /// Stages 2 to 4 (after the resolver), for a frame laid out by `signature`; the forwarding
    /// IMP starts here. The caller holds a depth level (`guardDepth`).
    static func forwardStages(_ raw: sf_id, _ selector: Selector, cls: sf_class_t, signature: Signature,
                              arguments: UnsafeMutablePointer<UnsafeMutableRawPointer?>,
                              returnValue: UnsafeMutableRawPointer,
                              spill: UnsafeMutablePointer<UnsafeMutableRawPointer?>? = nil) throws(RuntimeError) -> Signature {
        if let target = try forwardingTarget(raw, selector, cls) {
            defer { sf_release_inline(target) }
            return try send(to: target, selector, signature: signature, arguments: arguments, returnValue: returnValue, spill: spill)
        }
        if implements(cls, forwardInvocation) {
            let sig = try methodSignature(raw, selector, cls) ?? signature
            guard accepts(sig, for: signature, spills: spill != nil) else {
                throw .signatureMismatch(className: visibleName(cls), selector: selector.name,
                                         expected: sig.encoding, actual: signature.encoding)
            }
            let invocation = Invocation.capture(signature: sig.storage, arguments: arguments)
            try deliver(invocation, to: raw, cls)
            invocation.storage.copyReturn(to: destination(sig, for: signature, returnValue, spill))
            return sig
        }
        throw try doesNotRecognize(raw, selector, cls)
    }

    /// Where a method typed `sig` writes its return for a caller typed `caller`: the caller's
    /// storage, or a spill buffer when a void caller's storage is too small (see `handleMiss`).
    private static func destination(_ sig: Signature, for caller: Signature, _ returnValue: UnsafeMutableRawPointer,
                                    _ spill: UnsafeMutablePointer<UnsafeMutableRawPointer?>?) -> UnsafeMutableRawPointer {
        guard caller.returnType == .void, sig.storage.returnSize > unknownReturnCapacity, let spill else { return returnValue }
        let buffer = UnsafeMutableRawPointer.allocate(byteCount: sig.storage.returnSize, alignment: 16)
        buffer.initializeMemory(as: UInt8.self, repeating: 0, count: sig.storage.returnSize)
        spill.pointee?.deallocate()
        spill.pointee = buffer
        return buffer
    }

    /// A miss from `sf_msg_send`: the C caller's argument types are unknown until a stage
    /// supplies them (the found method, the forwarding target's method, or a signature).
    static func handleMissFromC(_ raw: sf_id, _ selector: Selector, cls: sf_class_t,
                                arguments: UnsafeMutablePointer<UnsafeMutableRawPointer?>?,
                                returnValue: UnsafeMutableRawPointer?) throws(RuntimeError) {
        try guardDepth(cls, selector)
        defer { sf_forward_depth_exit() }

        if try resolve(raw, selector, cls), sf_lookup_method(cls, selector.raw) != nil {
            try CMessageSend.send(raw, selector, ret: returnValue, args: arguments)
            return
        }
        if let target = try forwardingTarget(raw, selector, cls) {
            defer { sf_release_inline(target) }
            try CMessageSend.send(target, selector, ret: returnValue, args: arguments)
            return
        }
        if implements(cls, forwardInvocation) {
            guard let sig = try methodSignature(raw, selector, cls) else {
                throw .forwardingFailed(className: visibleName(cls), selector: selector.name,
                                        reason: "a C send needs methodSignatureForSelector: to describe the arguments")
            }
            let invocation = Invocation(signature: sig, target: ObjectRef(raw), selector: selector)
            for i in 0..<sig.explicitArgumentCount {
                guard let p = arguments?[i] else {
                    throw .invalidArgument(className: visibleName(cls), selector: selector.name, reason: "argument \(i + 1) pointer is NULL")
                }
                invocation.storage.argumentPointer(i + 2).copyMemory(from: p, byteCount: sig.storage.argumentSizes[i + 2])
            }
            try deliver(invocation, to: raw, cls)
            if let returnValue { invocation.storage.copyReturn(to: returnValue) }
            return
        }
        throw try doesNotRecognize(raw, selector, cls)
    }

    /// `Invocation.invoke()` on a target without the method: forward the record's own frame.
    static func forward(_ storage: InvocationStorage, cls: sf_class_t) throws(RuntimeError) {
        let target = storage.header.target!
        storage.writeTargetAndSelector()
        let sig = try handleMiss(target, Selector(raw: storage.header.selector), cls: cls,
                                 signature: Signature(storage: storage.header.signature),
                                 arguments: storage.argv, returnValue: storage.returnPointer)
        storage.header.ownsReturnObject = sig.returnType == .object
    }

    // MARK: - Stages

    static func guardDepth(_ cls: sf_class_t, _ selector: Selector) throws(RuntimeError) {
        if sf_forward_depth_enter() > maximumDepth {
            sf_forward_depth_exit()
            throw .forwardingFailed(className: visibleName(cls), selector: selector.name,
                                    reason: "forwarding nested more than \(maximumDepth) levels; does forwardInvocation: or a forwarding target send the message back?")
        }
    }

    /// Sends a frame to another receiver (fast forwarding), with its own forwarding on a miss.
    static func send(to target: sf_id, _ selector: Selector, signature: Signature,
                     arguments: UnsafeMutablePointer<UnsafeMutableRawPointer?>,
                     returnValue: UnsafeMutableRawPointer,
                     spill: UnsafeMutablePointer<UnsafeMutableRawPointer?>? = nil) throws(RuntimeError) -> Signature {
        arguments[0]!.storeBytes(of: target, as: sf_id.self)
        let cls = sf_object_isa(target)!
        guard let m = sf_lookup_method(cls, selector.raw) else {
            return try handleMiss(target, selector, cls: cls, signature: signature, arguments: arguments,
                                  returnValue: returnValue, spill: spill)
        }
        return try call(m, target, selector, cls: cls, callerSignature: signature, arguments: arguments,
                        returnValue: returnValue, spill: spill)
    }

    private static func call(_ m: sf_method_t, _ raw: sf_id, _ selector: Selector, cls: sf_class_t, callerSignature: Signature,
                             arguments: UnsafeMutablePointer<UnsafeMutableRawPointer?>,
                             returnValue: UnsafeMutableRawPointer,
                             spill: UnsafeMutablePointer<UnsafeMutableRawPointer?>?) throws(RuntimeError) -> Signature {
        let sig = Signature(raw: sf_method_sig(m))
        guard accepts(sig, for: callerSignature, spills: spill != nil) else {
            throw .signatureMismatch(className: visibleName(cls), selector: selector.name,
                                     expected: sig.encoding, actual: callerSignature.encoding)
        }
        let ret = destination(sig, for: callerSignature, returnValue, spill)
        sf_ffi_call(&sig.storage.raw.pointee.cif, sf_method_imp(m)!, ret, arguments)
        try Runtime.rethrowPending()
        return sig
    }

    /// Swift callers that do not state a return type (dynamic sends, `as: Void.self`) pass a
    /// void signature with return storage of at least this many bytes
    /// (`MessageSend.withReturnStorage`, `InvocationStorage.make`).
    static let unknownReturnCapacity = 16

    /// Whether a method typed `sig` may run on a frame laid out for `caller`: the same types,
    /// or the same arguments for a caller that did not state a return type — when the value
    /// fits its storage or the caller takes a spill buffer. (A bigger struct would otherwise be
    /// written past the caller's buffer.)
    static func accepts(_ sig: Signature, for caller: Signature, spills: Bool = false) -> Bool {
        if sig.isCompatible(with: caller) { return true }
        return caller.returnType == .void
            && sig.argumentTypes.count == caller.argumentTypes.count
            && zip(sig.argumentTypes.dropFirst(2), caller.argumentTypes.dropFirst(2)).allSatisfy { $0.isCompatible(with: $1) }
            && (spills || sig.storage.returnSize <= unknownReturnCapacity)
    }

    static func implements(_ cls: sf_class_t, _ selector: Selector) -> Bool {
        sf_lookup_method(cls, selector.raw) != nil
    }

    /// Stage 2: returns a +1 target other than the receiver, or nil.
    private static func forwardingTarget(_ raw: sf_id, _ selector: Selector, _ cls: sf_class_t) throws(RuntimeError) -> sf_id? {
        guard implements(cls, forwardingTarget) else { return nil }
        let target: Object? = try ObjectRef(raw).send(forwardingTarget, selector)
        guard let target, target.raw != raw else { return nil }
        sf_retain_inline(target.raw)
        return target.raw
    }

    /// Stage 3a: the signature the class declares for a selector it forwards, if any.
    static func methodSignature(_ raw: sf_id, _ selector: Selector, _ cls: sf_class_t) throws(RuntimeError) -> Signature? {
        guard implements(cls, methodSignature) else { return nil }
        let text: CString = try ObjectRef(raw).send(methodSignature, selector)
        guard let s = text.string else { return nil }
        return try Signature(s)
    }

    /// Stage 3b: hands the record to `forwardInvocation:`.
    private static func deliver(_ invocation: Invocation, to raw: sf_id, _ cls: sf_class_t) throws(RuntimeError) {
        let record = UnsafeMutableRawPointer(Unmanaged.passUnretained(invocation.storage).toOpaque())
        // setForwardInvocation's adapter accepts only this record (see isDelivering).
        let previous = sf_swap_delivering_record(record)
        defer { _ = sf_swap_delivering_record(previous) }
        try withExtendedLifetime(invocation) { () throws(RuntimeError) in
            try ObjectRef(raw).send(forwardInvocation, record, as: Void.self)
        }
    }

    /// Whether `record` is the invocation this thread is handing to `forwardInvocation:`: a
    /// pointer anyone else sends is not a record the runtime made, and is never dereferenced.
    static func isDelivering(_ record: UnsafeRawPointer) -> Bool {
        sf_delivering_record().map { UnsafeRawPointer($0) } == record
    }

    /// Stage 4: runs a defined `doesNotRecognizeSelector:`, then reports the error.
    private static func doesNotRecognize(_ raw: sf_id, _ selector: Selector, _ cls: sf_class_t) throws(RuntimeError) -> RuntimeError {
        if implements(cls, doesNotRecognize) {
            try ObjectRef(raw).send(doesNotRecognize, selector, as: Void.self)
        }
        return unrecognized(cls, selector)
    }

    static func visibleName(_ cls: sf_class_t) -> String {
        let c = RuntimeClass.from(cls)
        return c.isHidden ? (c.superclass ?? c).name : c.name
    }

    static func unrecognized(_ cls: sf_class_t, _ selector: Selector) -> RuntimeError {
        let c = RuntimeClass.from(cls)
        return .doesNotRecognizeSelector(className: visibleName(cls), selector: selector.name, isClassMethod: c.isMetaclass)
    }
}

// MARK: - Errors raised inside IMPs
