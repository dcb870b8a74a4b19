import CDynamicRuntime

extension MessageReceiver {
    /// Where lookup starts; nil means the receiver's class. Super sends override it.
    public var lookupStart: sf_class_t? { nil }

    /// False: an ordinary send.
    public var isSuperSend: Bool { false }

    /// A dynamic send through libffi: argument count and types are checked against the method's
    /// signature, and the result comes back as a `DynamicValue`. On a miss, the forwarding path runs.
    ///
    /// - Throws: `doesNotRecognizeSelector`, `invalidArgument` (count or type), or forwarding errors.
    // Inlinable, so that the caller's argument array does not escape and lives on its stack.
    @inlinable @discardableResult
    public func send(_ selector: Selector, _ arguments: any MessageArgument...) throws(RuntimeError) -> DynamicValue {
        try send(selector, arguments: arguments)
    }

    /// The dynamic send with an argument array.
    @inlinable @discardableResult
    public func send(_ selector: Selector, arguments: [any MessageArgument]) throws(RuntimeError) -> DynamicValue {
        let raw = receiver.raw, start = lookupStart, isSuper = isSuperSend
        return try arguments.withUnsafeBufferPointer { (args) throws(RuntimeError) -> DynamicValue in
            try MessageSend.dynamic(raw, lookupStart: start, isSuperSend: isSuper, selector, args)
        }
    }

    /// A send whose lookup starts at `cls`'s superclass, like `[super …]` in a method of `cls`.
    public func asSuper(of cls: RuntimeClass) -> SuperReceiver {
        SuperReceiver(receiver: receiver, start: cls.lookupSuperclass)
    }
}
