import CDynamicRuntime

/// A C caller's frame (`sf_msg_send`): one pointer per explicit argument, whose types are
/// unknown until a stage supplies them (the found method, the forwarding target's method, or
/// a declared signature). `returnValue` may be NULL when the caller wants no value.
struct CFrame: ForwardingFrame {
    let arguments: UnsafeMutablePointer<UnsafeMutableRawPointer?>?
    let returnValue: UnsafeMutableRawPointer?

    func call(_ method: sf_method_t, on receiver: sf_id, _ selector: Selector, cls: sf_class_t) throws(RuntimeError) {
        try CMessageSend.send(receiver, selector, ret: returnValue, args: arguments)
    }

    func send(to target: sf_id, _ selector: Selector) throws(RuntimeError) {
        try CMessageSend.send(target, selector, ret: returnValue, args: arguments)
    }

    func invocationSignature(declared: Signature?, _ selector: Selector, cls: sf_class_t) throws(RuntimeError) -> Signature {
        guard let declared else {
            throw .forwardingFailed(.init(className: Forwarding.visibleName(cls), selector: selector.name, reason: "a C send needs methodSignatureForSelector: to describe the arguments"))
        }
        return declared
    }

    func forwardHandlerSignature(declared: Signature?, _ selector: Selector, cls: sf_class_t) -> Signature? {
        declared
    }

    func capture(_ signature: Signature, receiver: sf_id, _ selector: Selector, cls: sf_class_t) throws(RuntimeError) -> Invocation {
        let invocation = Invocation(signature: signature, target: ObjectRef(receiver), selector: selector)
        for i in 0..<signature.explicitArgumentCount {
            guard let p = arguments?[i] else {
                throw .invalidArgument(.init(className: Forwarding.visibleName(cls), selector: selector.name, argument: i + 1, expected: "a pointer to the value", actual: "NULL"))
            }
            invocation.storage.argumentPointer(i + 2).copyMemory(from: p, byteCount: signature.storage.argumentSizes[i + 2])
        }
        return invocation
    }

    func finish(_ invocation: Invocation, _ signature: Signature) {
        // Exactly the return type's size: a C caller's buffer is an `int`, not a word.
        if let returnValue { invocation.storage.copyReturn(to: returnValue, byteCount: CMessageSend.returnBytes(signature)) }
    }
}
