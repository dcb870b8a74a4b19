import CDynamicRuntime

/// Swift closures for each forwarding stage. Each installs (or replaces) the real method the
/// runtime looks for, so C code that defines the method by hand behaves the same.
extension RuntimeClass {
    /// Stage 1 for instance methods: `body(class, selector)` may add the method and return true.
    public func setResolveInstanceMethod(_ body: @escaping @Sendable (RuntimeClass, Selector) throws -> Bool) throws(RuntimeError) {
        try instanceClass.metaclass.replaceMethod(Forwarding.resolveInstanceMethod) { (cls: ObjectRef, sel: Selector) throws -> Bool in
            try body(RuntimeClass.from(sf_object_as_class(cls.raw!)), sel)
        }
    }

    /// Stage 1 for class methods: `body(class, selector)` may add a class method and return true.
    public func setResolveClassMethod(_ body: @escaping @Sendable (RuntimeClass, Selector) throws -> Bool) throws(RuntimeError) {
        try instanceClass.metaclass.replaceMethod(Forwarding.resolveClassMethod) { (cls: ObjectRef, sel: Selector) throws -> Bool in
            try body(RuntimeClass.from(sf_object_as_class(cls.raw!)), sel)
        }
    }

    /// Stage 2: `body(receiver, selector)` names another object to receive the message
    /// unchanged, or nil to go on to stage 3.
    public func setForwardingTarget(_ body: @escaping @Sendable (ObjectRef, Selector) throws -> ObjectRef?) throws(RuntimeError) {
        // Built here, as `setForwardInvocation`'s is: typed sends call this word body itself, with
        // no generic adapter closure between it and `body` (stage 2 runs on every forwarded send).
        let word: WordBody = { o, s, sel, _, _, _ in
            let sel = try Selector.fromWord(sel, receiver: o, selector: s, 2)
            return OwnedObject(retaining: try body(ObjectRef(word: o), sel)?.raw).word
        }
        let (imp, sig) = try closureIMP(Forwarding.forwardingTarget, declared: nil, returns: OwnedObject.returnEncoding,
                                        arguments: [Selector.typeEncoding], word: word) { ret, args in
            let target = OwnedObject(retaining: try body(ObjectRef(argumentStorage: args[0]!), Selector.argument(args, 2))?.raw)
            target.storeReturn(to: ret)
        }
        try install(Forwarding.forwardingTarget, imp, sig, replacing: true)
    }

    /// Stage 3a: the signature of a selector this class forwards (needed for C senders; Swift
    /// senders' own types are used when this is absent).
    public func setMethodSignature(_ body: @escaping @Sendable (ObjectRef, Selector) throws -> Signature?) throws(RuntimeError) {
        try setMethodSignatureTypes { recv, sel in try body(recv, sel)?.raw }
    }

    /// `setMethodSignature` whose body answers with an interned signature's C form, which a
    /// proxy reads from its target's method without making a `Signature` (and retaining its
    /// storage) per forwarded call.
    func setMethodSignatureTypes(_ body: @escaping @Sendable (ObjectRef, Selector) throws -> UnsafePointer<sf_signature>?) throws(RuntimeError) {
        // A word body of its own, as `setForwardingTarget`'s: stage 3 asks on every forwarded send.
        // The types returned are an interned signature's, immortal: lent, never copied.
        let word: WordBody = { o, s, sel, _, _, _ in
            let sel = try Selector.fromWord(sel, receiver: o, selector: s, 2)
            return CString(try body(ObjectRef(word: o), sel)?.pointee.types).word
        }
        let (imp, sig) = try closureIMP(Forwarding.methodSignature, declared: nil, returns: CString.returnEncoding,
                                        arguments: [Selector.typeEncoding], word: word) { ret, args in
            let types = try body(ObjectRef(argumentStorage: args[0]!), Selector.argument(args, 2))?.pointee.types
            CString(types).storeReturn(to: ret)
        }
        try install(Forwarding.methodSignature, imp, sig, replacing: true)
    }

    /// Stage 3b: receives the message as an `Invocation` to inspect, change, re-target and
    /// invoke — or not. Its return value becomes the caller's.
    ///
    /// Only the runtime sends `forwardInvocation:` to such a method: sent directly, with
    /// anything but the record being forwarded on this thread, it throws `reservedSelector`.
    public func setForwardInvocation(_ body: @escaping @Sendable (Invocation) throws -> Void) throws(RuntimeError) {
        // Built here, not by the generic closure overloads: the word body typed sends and the
        // slot call is this closure itself (no generic word body, no reabstraction thunk, no
        // adapter closure in between), and C callers' argument vector reaches the same code.
        // A NULL record is refused as every non-optional pointer argument is.
        let word: WordBody = { o, s, record, _, _, _ in
            let record = try UnsafeMutableRawPointer.fromWord(record, receiver: o, selector: s, 2)
            try Forwarding.runForwardInvocation(o, record, body)
            return 0
        }
        let (imp, sig) = try closureIMP(Forwarding.forwardInvocation, declared: nil, returns: .void,
                                        arguments: [UnsafeMutableRawPointer.typeEncoding], word: word) { _, args in
            try Forwarding.runForwardInvocation(args[0]!.load(as: UInt64.self), UnsafeMutableRawPointer.argument(args, 2), body)
        }
        try install(Forwarding.forwardInvocation, imp, sig, replacing: true)
    }

    /// Installs the process-wide forward handler (objc4's `objc_setForwardHandler`), replacing
    /// the previous one; nil restores the default, which declines.
    ///
    /// It is asked, for every class, about a message nothing else answered: no method, the
    /// resolver and the forwarding target declined, and the receiver's class defines no
    /// `forwardInvocation:` — before `doesNotRecognizeSelector:` runs. `body` gets the call as
    /// an ``Invocation`` (its types: `methodSignatureForSelector:`'s, else a Swift caller's
    /// own) and returns true after setting its return value or invoking it, which makes that
    /// the send's result; false declines, and the sender gets
    /// ``RuntimeError/doesNotRecognizeSelector(_:)``. An error it throws is the send's (wrapped
    /// in ``RuntimeError/implementationFailed(_:)`` unless it is a `RuntimeError`). A C send
    /// reaches it only when the class declares `methodSignatureForSelector:`.
    ///
    /// Safe to call while other threads send: a send uses the handler installed when it
    /// reaches the stage. Sends that find their method never read it.
    public static func setForwardHandler(_ body: (@Sendable (Invocation) throws -> Bool)?) {
        ForwardHandler.set(body)
    }

    /// Stage 4: observes unrecognized selectors (e.g. to log); the sender still gets the error.
    public func setDoesNotRecognizeSelector(_ body: @escaping @Sendable (ObjectRef, Selector) -> Void) throws(RuntimeError) {
        try replaceMethod(Forwarding.doesNotRecognize) { (recv: ObjectRef, sel: Selector) in
            body(recv, sel)
        }
    }
}
